// The worker process's own part of the composition: inference threads, the task consumer and the
// webhook deliverer over the shared services.
import type { Config } from '../config/env.ts';
import type { Logger } from '../domain/logger.ts';
import type { VersionId } from '../domain/version-id.ts';
import type { Registry } from '../models/registry.ts';
import { PipelinePool } from '../queue/pipeline-pool.ts';
import { TaskWorker } from '../queue/task-worker.ts';
import { WebhookWorker } from '../queue/webhooks.ts';
import type { Services } from './services.ts';
import { startMetricsServer, type MetricsServer } from './metrics-server.ts';

export interface WorkerParts {
  worker: TaskWorker;
  pool: PipelinePool;
  webhooks: WebhookWorker;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A worker: task runner with its inference-thread pool (every version in the registry loaded on
 * each thread) and the webhook deliverer.
 */
export function createWorker(config: Config, s: Services, redisUrl: string, log: Logger): WorkerParts {
  const pool = new PipelinePool(
    {
      modelsDir: config.modelsDir,
      provider: config.executionProvider,
      intraOpThreads: config.ortIntraOpThreads,
      allowSpinning: config.ortAllowSpinning,
      maxPixels: config.input.maxPixels,
      ...warmList(config, s.registry),
      modelMemoryBytes: Math.floor(config.modelMemoryBytes / config.workerConcurrency),
      tasksPerThread: config.threadTasks,
      sharpConcurrency: config.sharpConcurrency,
      initialHeapMb: config.inferenceHeapMb,
    },
    config.workerConcurrency,
    (message) => log.warn(message),
    { runTimeoutMs: config.inferenceTimeoutMs },
  );
  const worker = new TaskWorker(
    {
      tasks: s.tasks,
      blobs: s.blobs,
      registry: s.registry,
      pool,
      limits: config.input,
      http: s.http,
      log,
      workers: s.workers,
      metrics: s.metrics,
      onEnded: () => s.dispatcher.flushSoon(),
    },
    {
      redisUrl,
      prefix: config.redisKeyPrefix,
      // Enough tasks in hand to fill every thread's batches, no more: the rest stay queued for
      // other workers.
      concurrency: config.workerConcurrency * config.threadTasks,
      lockMs: config.jobLockMs,
      stalledIntervalMs: config.stalledIntervalMs,
      maxStalled: config.maxStalled,
      drainTimeoutMs: config.drainTimeoutMs,
    },
  );
  const webhooks = new WebhookWorker({ accounts: s.accounts, http: s.http, log, metrics: s.metrics }, s.webhookSettings);
  const unwatchPool = s.metrics.watchPool(pool);
  let metricsServer: MetricsServer | undefined;
  return {
    worker,
    pool,
    webhooks,
    async start() {
      // METRICS_PORT (0: off) serves this process's registry; the all-in-one process's API also does.
      if (config.metricsPort > 0 && s.metrics.enabled) {
        metricsServer = await startMetricsServer(s.metrics, config.metricsPort, config.host);
        log.info({ port: metricsServer.port }, 'metrics listening');
      }
      await webhooks.start();
      await worker.start();
    },
    async close() {
      await worker.close();
      await webhooks.close();
      await metricsServer?.close();
      unwatchPool();
      await pool.close();
    },
  };
}

/**
 * The versions a worker loads at start: WARM_VERSIONS (by name or id; unknown ones fail start-up),
 * kept loaded (pinned); unset, every version, unpinned, or none when a memory budget is set (they
 * would not fit, or would crowd out what tasks need).
 */
function warmList(config: Config, registry: Registry): { warm: VersionId[]; pinned: boolean } {
  if (!config.warmVersions) return { warm: config.modelMemoryBytes > 0 ? [] : [...registry.versions.keys()], pinned: false };
  const warm = config.warmVersions.map((w) => {
    const v = registry.byName(w) ?? registry.get(w as VersionId);
    if (!v) throw new Error(`WARM_VERSIONS: unknown version "${w}"`);
    return v.id;
  });
  return { warm, pinned: true };
}
