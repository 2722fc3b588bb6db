// Prometheus metrics: the ONLY importer of prom-client. One Metrics per process (created with the
// shared services), so the API's /metrics and a worker's METRICS_PORT serve one registry; in the
// all-in-one process that is everything. Labels are bounded: a version's name (from the registry),
// a status, a stage name from the pipeline code, a queue state, an outcome; never a task or user id.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TaskStatus } from './task.ts';

/** What the pool reports (PipelinePool.batchStats / modelStats), summed over its threads. */
export interface PoolStatsSource {
  batchStats(): { inferences: number; executions: number };
  modelStats(): { loads: number; evictions: number; bytes: number; graphs: number };
}

/** BullMQ job counts by state (TaskQueue.counts). */
export interface QueueCountsSource {
  counts(): Promise<Record<string, number>>;
}

export type WebhookOutcome = 'delivered' | 'rejected' | 'error';

/** Seconds buckets for stages and tasks: 5 ms .. 5 min. */
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const QUEUE_STATES: Record<string, string> = { wait: 'waiting', active: 'active', delayed: 'delayed', failed: 'failed' };

export class Metrics {
  readonly registry = new Registry();
  readonly contentType: string = this.registry.contentType;
  private readonly pools = new Set<PoolStatsSource>();
  private readonly queues = new Set<QueueCountsSource>();
  private readonly tasksEnded: Counter<'version' | 'status'>;
  private readonly taskDuration: Histogram<'version' | 'status'>;
  private readonly queueWait: Histogram<'version'>;
  private readonly stageDuration: Histogram<'version' | 'stage'>;
  private readonly inFlight: Gauge;
  private readonly charged: Counter<'version'>;
  private readonly refunded: Counter<'version'>;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly webhooksGaveUp: Counter;

  /** false (METRICS_ENABLED=false): nothing is recorded or collected, and nothing is served. */
  readonly enabled: boolean;

  /** `versionName` maps a version id to its name (the registry's); unknown ids give "unknown". */
  constructor(
    private readonly versionName: (id: string) => string | undefined,
    opts: { enabled?: boolean } = {},
  ) {
    this.enabled = opts.enabled ?? true;
    const registers = [this.registry];
    if (this.enabled) collectDefaultMetrics({ register: this.registry });
    this.tasksEnded = new Counter({ name: 'iw_tasks_ended_total', help: 'Tasks that reached a final status', labelNames: ['version', 'status'], registers });
    const seconds = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Histogram<L>({ name, help, labelNames, buckets: SECONDS, registers });
    this.taskDuration = seconds('iw_task_duration_seconds', 'Creation to final status of a task', ['version', 'status']);
    this.queueWait = seconds('iw_task_queue_wait_seconds', 'Creation to first claim by a worker', ['version']);
    this.stageDuration = seconds('iw_stage_duration_seconds', 'Time of one stage of a task attempt (download, decode, inference, store ...)', ['version', 'stage']);
    this.inFlight = new Gauge({ name: 'iw_tasks_in_flight', help: 'Tasks this worker process is running now', registers });
    this.charged = new Counter({ name: 'iw_credits_charged_total', help: 'Credits charged at task creation', labelNames: ['version'], registers });
    this.refunded = new Counter({ name: 'iw_credits_refunded_total', help: 'Credits refunded (failed or canceled tasks)', labelNames: ['version'], registers });
    this.webhookAttempts = new Counter({
      name: 'iw_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered (2xx), rejected (other status), error (network or timeout)',
      labelNames: ['outcome'],
      registers,
    });
    this.webhooksGaveUp = new Counter({ name: 'iw_webhook_gave_up_total', help: 'Webhook events whose retries ended without a delivery', registers });

    const pools = this.pools;
    const poolGauge = (name: string, help: string, read: (p: PoolStatsSource) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          let sum = 0;
          for (const p of pools) sum += read(p);
          this.set(sum);
        },
      });
    poolGauge('iw_batch_inferences', 'Model calls answered by the inference threads (inference count)', (p) => p.batchStats().inferences);
    poolGauge('iw_batch_executions', 'Model runs made for them (execution count); inferences / executions is the mean batch', (p) => p.batchStats().executions);
    poolGauge('iw_models_loaded', 'Model graphs loaded on the inference threads', (p) => p.modelStats().graphs);
    poolGauge('iw_model_bytes', 'Bytes of the model graphs loaded (file sizes)', (p) => p.modelStats().bytes);
    poolGauge('iw_model_loads', 'Model graph loads by the current inference threads', (p) => p.modelStats().loads);
    poolGauge('iw_model_evictions', 'Model graph evictions (MODEL_MEMORY_MB) by the current inference threads', (p) => p.modelStats().evictions);

    const queues = this.queues;
    new Gauge({
      name: 'iw_queue_jobs',
      help: 'Task queue jobs by BullMQ state (read on scrape)',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        for (const q of queues) {
          const counts = await q.counts();
          for (const [from, state] of Object.entries(QUEUE_STATES)) this.inc({ state }, counts[from] ?? 0);
        }
      },
    });
  }

  private version(id: string | null): string {
    if (!id) return 'none';
    return this.versionName(id) ?? 'unknown';
  }

  /** Reads the pool's counters on each scrape; the returned function stops that. */
  watchPool(pool: PoolStatsSource): () => void {
    this.pools.add(pool);
    return () => void this.pools.delete(pool);
  }

  /** Reads the queue's job counts on each scrape; the returned function stops that. */
  watchQueue(queue: QueueCountsSource): () => void {
    this.queues.add(queue);
    return () => void this.queues.delete(queue);
  }

  taskCharged(versionId: string | null, credits: number): void {
    if (!this.enabled) return;
    this.charged.inc({ version: this.version(versionId) }, credits);
  }

  taskRefunded(versionId: string | null, credits: number): void {
    if (!this.enabled) return;
    this.refunded.inc({ version: this.version(versionId) }, credits);
  }

  /** A task reached a final status (counted once, by whichever process made the change). */
  taskEnded(t: { version: string | null; status: TaskStatus; createdMs: number; completedMs: number | null }): void {
    if (!this.enabled) return;
    const labels = { version: this.version(t.version), status: t.status };
    this.tasksEnded.inc(labels);
    if (t.completedMs !== null) this.taskDuration.observe(labels, Math.max(0, t.completedMs - t.createdMs) / 1000);
  }

  /** A worker claimed a task for the first time. */
  taskClaimed(versionId: string | null, waitMs: number): void {
    if (!this.enabled) return;
    this.queueWait.observe({ version: this.version(versionId) }, Math.max(0, waitMs) / 1000);
  }

  /** Stage timings of one task attempt, in milliseconds. */
  stagesRan(versionId: string | null, stages: ReadonlyArray<readonly [string, number]>): void {
    if (!this.enabled) return;
    const version = this.version(versionId);
    for (const [stage, ms] of stages) this.stageDuration.observe({ version, stage }, ms / 1000);
  }

  attemptStarted(): void {
    if (!this.enabled) return;
    this.inFlight.inc();
  }

  attemptEnded(): void {
    if (!this.enabled) return;
    this.inFlight.dec();
  }

  webhookAttempt(outcome: WebhookOutcome): void {
    if (!this.enabled) return;
    this.webhookAttempts.inc({ outcome });
  }

  webhookGaveUp(): void {
    if (!this.enabled) return;
    this.webhooksGaveUp.inc();
  }

  /** The exposition text (Prometheus text format); serve it with `contentType`. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
