// Wiring shared by the entry points: the stores, the queue and the registry over one Redis.
import { loadRegistry, type Registry } from '../models/registry.ts';
import type { VersionId } from '../domain/version-id.ts';
import { staleAssets } from '../models/fetch-graphs.ts';
import { PIPELINE_INPUTS } from '../pipelines/inputs.ts';
import type { Config } from '../config/env.ts';
import type { Logger } from '../domain/logger.ts';
import { Accounts } from '../store/accounts.ts';
import { LocalBlobStore, type BlobStore } from '../store/blob-store.ts';
import { connectRedis, keyspace, type RedisClient } from '../store/redis.ts';
import { TaskStore } from '../store/task-store.ts';
import { WorkerRegistry } from '../store/workers.ts';
import { JobStore } from '../store/job-store.ts';
import { Schedule } from '../store/schedules.ts';
import { TaskQueue } from '../queue/task-queue.ts';
import { TaskSubmitter } from '../queue/task-submitter.ts';
import { PipelinePool } from '../queue/pipeline-pool.ts';
import { TaskWorker } from '../queue/task-worker.ts';
import { OutboundHttp } from '../queue/outbound-http.ts';
import { RetentionSweeper } from '../queue/retention-sweeper.ts';
import { WebhookDispatcher, WebhookWorker, type WebhookSettings } from '../queue/webhooks.ts';
import { buildApp } from '../api/app.ts';

export interface Services {
  redis: RedisClient;
  tasks: TaskStore;
  jobs: JobStore;
  accounts: Accounts;
  blobs: BlobStore;
  workers: WorkerRegistry;
  queue: TaskQueue;
  /** Creates, charges and queues tasks (with the enqueue outbox behind it). */
  submitter: TaskSubmitter;
  registry: Registry;
  http: OutboundHttp;
  /** Queues webhook events from the outbox (runs in every process). */
  dispatcher: WebhookDispatcher;
  /** Deletes data whose retention ended (runs in every process). */
  sweeper: RetentionSweeper;
  webhookSettings: WebhookSettings;
  /** Starts the background loops (outbox flush, retention sweep). */
  startBackground(): void;
  close(): Promise<void>;
}

/** Loads the registry and checks every version names a known pipeline (fails loudly at start-up). */
export function loadCheckedRegistry(modelsDir: string): Registry {
  const registry = loadRegistry(modelsDir);
  for (const v of registry.versions.values()) {
    if (!PIPELINE_INPUTS[v.manifest.pipeline]) {
      throw new Error(`${v.file}: unknown pipeline "${v.manifest.pipeline}" (known: ${Object.keys(PIPELINE_INPUTS).join(', ')})`);
    }
    const stale = staleAssets(v.manifest.assets);
    if (stale.length) throw new Error(`${v.file}: assets changed since the version was pinned: ${stale.join(', ')} (run npm run models -- pin)`);
  }
  return registry;
}

export function createServices(config: Config, redisUrl: string, log: Logger): Services {
  const redis = connectRedis(redisUrl, { name: 'stores' });
  const keys = keyspace(config.redisPrefix);
  const queue = new TaskQueue({ redisUrl, prefix: config.redisPrefix, attempts: config.jobAttempts });
  const tasks = new TaskStore(redis, keys, { retentionMs: config.retention.taskMs, recordTtlMs: config.retention.recordTtlMs });
  const blobs = new LocalBlobStore(config.blobDir);
  const http = new OutboundHttp({ allowPrivate: config.allowPrivateUrls });
  const webhookSettings: WebhookSettings = { redisUrl, prefix: config.redisPrefix, ...config.webhook };
  const dispatcher = new WebhookDispatcher(
    { outbox: new Schedule(redis, keys.webhookOutbox()), tasks, publicBaseUrl: config.publicBaseUrl, log },
    webhookSettings,
  );
  const sweeper = new RetentionSweeper({ schedule: new Schedule(redis, keys.retention()), tasks, blobs, log });
  const submitter = new TaskSubmitter({ tasks, queue, outbox: new Schedule(redis, keys.enqueueOutbox()), log });
  return {
    redis,
    tasks,
    jobs: new JobStore(redis, keys),
    accounts: new Accounts(redis, keys),
    blobs,
    workers: new WorkerRegistry(redis, keys),
    queue,
    submitter,
    registry: loadCheckedRegistry(config.modelsDir),
    http,
    dispatcher,
    sweeper,
    webhookSettings,
    startBackground() {
      dispatcher.start(Math.min(1_000, config.retention.sweepIntervalMs));
      submitter.start(Math.min(1_000, config.retention.sweepIntervalMs));
      sweeper.start(config.retention.sweepIntervalMs);
    },
    async close() {
      await dispatcher.close();
      await submitter.close();
      await sweeper.close();
      await queue.close();
      await http.close();
      redis.disconnect();
    },
  };
}

export function createApi(config: Config, s: Services) {
  return buildApp({
    tasks: s.tasks,
    accounts: s.accounts,
    blobs: s.blobs,
    queue: s.queue,
    submitter: s.submitter,
    registry: s.registry,
    workers: s.workers,
    http: s.http,
    publicBaseUrl: config.publicBaseUrl,
    bodyMaxBytes: config.bodyMaxBytes,
    maxPixels: config.input.maxPixels,
    jobs: {
      store: s.jobs,
      fileMaxBytes: config.jobs.fileMaxBytes,
      retentionMs: config.retention.jobMs,
      hairstyleVersion: config.jobs.hairstyleVersion,
      tryonVersion: config.jobs.tryonVersion,
    },
    readyRequiresWorker: config.readyRequiresWorker,
    logLevel: config.logLevel,
  });
}

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
      warm: warmList(config, s.registry),
    },
    config.workerConcurrency,
    (message) => log.warn(message),
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
      onEnded: () => void s.dispatcher.flush().catch((e: Error) => log.warn({ err: e.message }, 'webhook outbox flush failed')),
    },
    {
      redisUrl,
      prefix: config.redisPrefix,
      concurrency: config.workerConcurrency,
      lockMs: config.jobLockMs,
      stalledIntervalMs: config.stalledIntervalMs,
      maxStalled: config.maxStalled,
      drainTimeoutMs: config.drainTimeoutMs,
    },
  );
  const webhooks = new WebhookWorker({ accounts: s.accounts, http: s.http, log }, s.webhookSettings);
  return {
    worker,
    pool,
    webhooks,
    async start() {
      await webhooks.start();
      await worker.start();
    },
    async close() {
      await worker.close();
      await webhooks.close();
      await pool.close();
    },
  };
}

/** The versions a worker loads at start (WARM_VERSIONS, by name or id; default all). Unknown ones fail start-up. */
function warmList(config: Config, registry: Registry): VersionId[] {
  if (!config.warmVersions) return [...registry.versions.keys()];
  return config.warmVersions.map((w) => {
    const v = registry.byName(w) ?? registry.get(w as VersionId);
    if (!v) throw new Error(`WARM_VERSIONS: unknown version "${w}"`);
    return v.id;
  });
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits. */
export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (e: Error) => {
        log.error({ err: e.message }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}
