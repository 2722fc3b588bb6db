// BullMQ consumer side: takes tasks from the queue and runs processTask on them, while the
// inference threads keep this event loop free for lock renewal. Also keeps the worker's heartbeat
// (for /health/ready) and drains on close: stop taking jobs, let in-flight ones finish within a
// bound, then hand the rest back to the queue at once (abort their work, move them to wait).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { failureReporter, type Logger } from '../domain/logger.ts';
import { isAppError } from '../errors/codes.ts';
import { connectRedis, isRedisUnavailable, type RedisClient } from '../store/redis.ts';
import type { WorkerRegistry } from '../store/workers.ts';
import { onQueueError, QueueName, type TaskJobData } from './task-queue.ts';
import { processTask, type ProcessorDeps } from './task-processor.ts';

export interface TaskWorkerSettings {
  redisUrl: string;
  prefix: string;
  concurrency: number;
  lockMs: number;
  stalledIntervalMs: number;
  maxStalled: number;
  drainTimeoutMs: number;
}

/**
 * Whether BullMQ has failed a job for good (so the task record must be failed here): its attempts
 * are used up, or BullMQ failed it without running it. The latter is how BullMQ ends a job that
 * stalled more than maxStalledCount times: the stalled checker stores a deferred failure on the
 * job (field `defa`, `job.deferredFailure`), and the next worker that fetches it fails it with an
 * UnrecoverableError carrying that text instead of calling the processor. processTask never throws
 * UnrecoverableError, so one here always comes from BullMQ.
 */
export function isFinalJobFailure(job: Job, err: Error): boolean {
  if (job.attemptsMade >= (job.opts.attempts ?? 1)) return true;
  return err instanceof UnrecoverableError || err.name === 'UnrecoverableError' || Boolean(job.deferredFailure);
}

export class TaskWorker {
  readonly id = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private worker: Worker<TaskJobData> | undefined;
  private connection: RedisClient | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly inFlight = new Map<string, { job: Job<TaskJobData>; token: string | undefined; abort: AbortController }>();

  constructor(
    private readonly deps: ProcessorDeps & { workers: WorkerRegistry },
    private readonly settings: TaskWorkerSettings,
  ) {}

  get log(): Logger {
    return this.deps.log;
  }

  /** Waits for the inference threads to load their models, then starts taking tasks. */
  async start(): Promise<void> {
    const providers = await this.deps.pool.ready();
    const s = this.settings;
    this.connection = connectRedis(s.redisUrl, { forQueue: true, name: `worker:${this.id}`, log: this.log });
    this.worker = new Worker<TaskJobData>(QueueName.Tasks, (job, token) => this.process(job, token), {
      connection: this.connection,
      prefix: s.prefix,
      concurrency: s.concurrency,
      lockDuration: s.lockMs,
      stalledInterval: s.stalledIntervalMs,
      maxStalledCount: s.maxStalled,
      autorun: false,
    });
    // Final failures BullMQ decides on its own (a task that lost its worker more than maxStalled
    // times is failed by the next worker that fetches it, without running it) end the record too.
    this.worker.on('failed', (job, err) => {
      if (!job) return;
      if (!isFinalJobFailure(job, err)) return;
      this.deps.tasks
        .fail(job.data.taskId, `WORKER_LOST: ${err.message} (the task's worker stopped while running it ${this.settings.maxStalled + 1} times)`, undefined, job.data.userId)
        .then(() => this.deps.onEnded?.())
        .catch((e: Error) => this.log.error({ err: e.message, taskId: job.data.taskId }, 'could not record task failure'));
    });
    onQueueError(this.worker, this.log, 'worker');
    void this.worker.run();
    await this.worker.waitUntilReady();
    const beats = failureReporter(this.log, 'worker heartbeat');
    const beat = () =>
      this.deps.workers.beat(this.id, 3 * 5_000).then(
        () => beats.succeeded(),
        // An outage is logged by the connection, once.
        (e: unknown) => (isRedisUnavailable(e) ? undefined : beats.failed(e)),
      );
    await beat();
    this.heartbeat = setInterval(beat, 5_000);
    this.heartbeat.unref();
    this.log.info({ workerId: this.id, concurrency: s.concurrency, providers: [...new Set(providers)] }, 'worker ready');
  }

  private async process(job: Job<TaskJobData>, token: string | undefined): Promise<string> {
    const taskId = job.data.taskId;
    const abort = new AbortController();
    this.inFlight.set(taskId, { job, token, abort });
    try {
      const attempt = { number: job.attemptsMade + 1, max: job.opts.attempts ?? 1, inferenceTimeouts: job.data.inferenceTimeouts ?? 0 };
      return await processTask(this.deps, { taskId, userId: job.data.userId }, attempt, abort.signal);
    } catch (e) {
      // A retried timeout is counted in the job, so the next attempt knows a second one is final.
      if (isAppError(e) && e.code === 'INFERENCE_TIMEOUT') {
        await job
          .updateData({ ...job.data, inferenceTimeouts: (job.data.inferenceTimeouts ?? 0) + 1 })
          .catch((err: Error) => this.log.warn({ taskId, err: err.message }, 'could not count the inference timeout; the task may be retried more than once'));
      }
      throw e;
    } finally {
      this.inFlight.delete(taskId);
    }
  }

  get running(): number {
    return this.inFlight.size;
  }

  /** Stops taking tasks; waits up to drainTimeoutMs for in-flight ones; hands back the rest. */
  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.deps.workers.remove(this.id).catch(() => {});
    if (!this.worker) return;
    const graceful = this.worker.close();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), this.settings.drainTimeoutMs)));
    const outcome = await Promise.race([graceful.then(() => 'drained' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      const handedBack = [...this.inFlight.keys()];
      this.log.warn({ handedBack }, 'drain timed out; handing in-flight tasks back to the queue');
      await Promise.all(
        [...this.inFlight.values()].map(async ({ job, token, abort }) => {
          abort.abort();
          if (!token) return; // no lock token: the lock lapses and the stalled check re-queues it
          await job.moveToWait(token).catch((e: Error) => this.log.warn({ taskId: job.data.taskId, err: e.message }, 'hand-back failed; the lock will lapse'));
        }),
      );
    }
    // After a timeout the graceful close is still waiting on the abandoned runs: do not await it.
    this.connection?.disconnect();
  }
}
