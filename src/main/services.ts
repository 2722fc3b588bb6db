// Wiring shared by the entry points: the stores, the queue and the registry over one Redis.
import { loadRegistry, type Registry } from '../models/registry.ts';
import { PIPELINE_INPUTS } from '../pipelines/inputs.ts';
import type { Config } from '../config/env.ts';
import type { Logger } from '../domain/logger.ts';
import { Accounts } from '../store/accounts.ts';
import { LocalBlobStore, type BlobStore } from '../store/blob-store.ts';
import { connectRedis, keyspace, type RedisClient } from '../store/redis.ts';
import { TaskStore } from '../store/task-store.ts';
import { WorkerRegistry } from '../store/workers.ts';
import { TaskQueue } from '../queue/task-queue.ts';
import { PipelinePool } from '../queue/pipeline-pool.ts';
import { TaskWorker } from '../queue/task-worker.ts';
import { buildApp } from '../api/app.ts';

export interface Services {
  redis: RedisClient;
  tasks: TaskStore;
  accounts: Accounts;
  blobs: BlobStore;
  workers: WorkerRegistry;
  queue: TaskQueue;
  registry: Registry;
  close(): Promise<void>;
}

/** Loads the registry and checks every version names a known pipeline (fails loudly at start-up). */
export function loadCheckedRegistry(modelsDir: string): Registry {
  const registry = loadRegistry(modelsDir);
  for (const v of registry.versions.values()) {
    if (!PIPELINE_INPUTS[v.manifest.pipeline]) {
      throw new Error(`${v.file}: unknown pipeline "${v.manifest.pipeline}" (known: ${Object.keys(PIPELINE_INPUTS).join(', ')})`);
    }
  }
  return registry;
}

export function createServices(config: Config, redisUrl: string): Services {
  const redis = connectRedis(redisUrl, { name: 'stores' });
  const keys = keyspace(config.redisPrefix);
  const queue = new TaskQueue({ redisUrl, prefix: config.redisPrefix, attempts: config.jobAttempts });
  return {
    redis,
    tasks: new TaskStore(redis, keys),
    accounts: new Accounts(redis, keys),
    blobs: new LocalBlobStore(config.blobDir),
    workers: new WorkerRegistry(redis, keys),
    queue,
    registry: loadCheckedRegistry(config.modelsDir),
    async close() {
      await queue.close();
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
    registry: s.registry,
    workers: s.workers,
    publicBaseUrl: config.publicBaseUrl,
    bodyMaxBytes: config.bodyMaxBytes,
    readyRequiresWorker: config.readyRequiresWorker,
    logLevel: config.logLevel,
  });
}

/** A worker with its inference-thread pool; every version in the registry is loaded on each thread. */
export function createWorker(config: Config, s: Services, redisUrl: string, log: Logger): { worker: TaskWorker; pool: PipelinePool } {
  const pool = new PipelinePool(
    {
      modelsDir: config.modelsDir,
      provider: config.executionProvider,
      intraOpThreads: config.ortIntraOpThreads,
      allowSpinning: config.ortAllowSpinning,
      maxPixels: config.input.maxPixels,
      warm: [...s.registry.versions.keys()],
    },
    config.workerConcurrency,
    (message) => log.warn(message),
  );
  const worker = new TaskWorker(
    { tasks: s.tasks, blobs: s.blobs, registry: s.registry, pool, limits: config.input, log, workers: s.workers },
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
  return { worker, pool };
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
