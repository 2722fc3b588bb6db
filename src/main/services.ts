// The part of the composition shared by both processes: config-driven stores, the queue producer,
// the outbox loops and the registry over one Redis. It loads no inference code: the API's root
// (api-root.ts) adds HTTP, the worker's root (worker-root.ts) adds inference threads and consumers.
import { loadRegistry, RegistryError, type ModelVersion, type Registry } from '../models/registry.ts';
import { checkVersionsAgainstSpecs } from '../pipelines/specs.ts';
import type { JobKind } from '../domain/job.ts';
import type { VersionId } from '../domain/version-id.ts';
import { ConfigError, type Config } from '../config/env.ts';
import type { Logger } from '../domain/logger.ts';
import { Metrics } from '../domain/metrics.ts';
import { Accounts } from '../store/accounts.ts';
import { LocalBlobStore, type BlobStore } from '../store/blob-store.ts';
import { connectRedis, hasPreHashTagData, isRedisUnavailable, keyspace, type RedisClient } from '../store/redis.ts';
import { TaskStore } from '../store/task-store.ts';
import { WorkerRegistry } from '../store/workers.ts';
import { JobStore } from '../store/job-store.ts';
import { Schedule } from '../store/schedules.ts';
import { TaskQueue } from '../queue/task-queue.ts';
import { TaskSubmitter } from '../queue/task-submitter.ts';
import { OutboundHttp } from '../queue/outbound-http.ts';
import { RetentionSweeper } from '../queue/retention-sweeper.ts';
import { LostTaskSweeper } from '../queue/lost-task-sweeper.ts';
import { DeadlineSweeper } from '../queue/deadline-sweeper.ts';
import { TaskEndWaiter } from '../store/task-events.ts';
import { WebhookDispatcher, type WebhookSettings } from '../queue/webhooks.ts';

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
  /** The version each job API runs (resolved at start-up). */
  jobVersions: Readonly<Record<JobKind, ModelVersion | undefined>>;
  http: OutboundHttp;
  /** Queues webhook events from the outbox (runs in every process). */
  dispatcher: WebhookDispatcher;
  /** Deletes data whose retention ended (runs in every process). */
  sweeper: RetentionSweeper;
  /** Fails (and refunds) tasks whose queue job failed or vanished without ending them (every process). */
  lostTasks: LostTaskSweeper;
  /** Cancels (and refunds) tasks that reach their Cancel-After deadline unstarted (every process). */
  deadlines: DeadlineSweeper;
  /** Prefer: wait: the process's one subscription to task ends, opened on the first wait. */
  taskEnds: TaskEndWaiter;
  webhookSettings: WebhookSettings;
  /** The process's Prometheus registry (served by the API's /metrics and a worker's METRICS_PORT). */
  metrics: Metrics;
  /** Starts the background loops (outbox flush, retention sweep, lost-task sweep, deadline sweep). */
  startBackground(): void;
  close(): Promise<void>;
}

/**
 * Loads the registry and checks every version names a known pipeline with the algorithm version
 * its code implements (fails loudly at start-up, naming the manifest file).
 */
export function loadCheckedRegistry(modelsDir: string): Registry {
  const registry = loadRegistry(modelsDir);
  checkVersionsAgainstSpecs(registry.versions.values());
  return registry;
}

/**
 * The versions the job APIs run, resolved once at start-up: HAIRSTYLE_VERSION / TRYON_VERSION
 * (a name or id) when set, else the first version of the pipeline by name. A setting that names no
 * such version fails start-up with the variable's name; a pipeline with no version is undefined
 * (its jobs then fail with "no model version installed").
 */
export function resolveJobVersions(config: Config, registry: Registry): Readonly<Record<JobKind, ModelVersion | undefined>> {
  const one = (variable: string, pipeline: string, preferred: string | undefined) => {
    try {
      return registry.defaultFor(pipeline, preferred);
    } catch (e) {
      if (e instanceof RegistryError) throw new ConfigError(`${variable}: ${e.message}`);
      throw e;
    }
  };
  return { hairstyle: one('HAIRSTYLE_VERSION', 'hairstyle', config.jobs.hairstyleVersion), tryon: one('TRYON_VERSION', 'tryon', config.jobs.tryonVersion) };
}

/**
 * The configured blob store. The S3 one (and with it @aws-sdk) is loaded only when BLOB_STORE=s3,
 * on a dynamic import: each call waits for it (a failed load fails every call, naming why).
 */
function createBlobStore(config: Config): BlobStore & { close?(): void } {
  if (config.blobStore !== 's3') return new LocalBlobStore(config.blobDir);
  const s3 = import('../store/s3-blob-store.ts').then(({ S3BlobStore }) => new S3BlobStore(config.s3));
  s3.catch(() => undefined); // surfaced by the calls that use it
  return {
    put: async (key, data) => (await s3).put(key, data),
    putStream: async (key, data) => (await s3).putStream(key, data),
    open: async (key) => (await s3).open(key),
    removePrefix: async (prefix) => (await s3).removePrefix(prefix),
    close: () => void s3.then((store) => store.close(), () => undefined),
  };
}

export function createServices(config: Config, redisUrl: string, log: Logger): Services {
  // Registry and settings first: a bad manifest or version setting fails before any connection.
  const registry = loadCheckedRegistry(config.modelsDir);
  const jobVersions = resolveJobVersions(config, registry);
  const blobs = createBlobStore(config);
  const metrics = new Metrics((id) => registry.get(id as VersionId)?.manifest.name, { enabled: config.metricsEnabled });
  const redis = connectRedis(redisUrl, { name: 'stores', log, autoPipeline: config.redisAutoPipeline });
  const keys = keyspace(config.redisKeyPrefix);
  const queue = new TaskQueue({ redisUrl, prefix: config.redisKeyPrefix, attempts: config.jobAttempts, log, autoPipeline: config.redisAutoPipeline });
  const tasks = new TaskStore(redis, keys, { retentionMs: config.retention.taskMs, recordTtlMs: config.retention.recordTtlMs }, metrics);
  const http = new OutboundHttp({ allowPrivate: config.allowPrivateUrls }, { log });
  const webhookSettings: WebhookSettings = { redisUrl, prefix: config.redisKeyPrefix, ...config.webhook };
  const dispatcher = new WebhookDispatcher(
    { outbox: new Schedule(redis, keys.webhookOutbox()), tasks, publicBaseUrl: config.publicBaseUrl, log },
    webhookSettings,
  );
  const sweeper = new RetentionSweeper({ schedule: new Schedule(redis, keys.retention()), tasks, blobs, log });
  const enqueueOutbox = new Schedule(redis, keys.enqueueOutbox());
  const submitter = new TaskSubmitter({ tasks, queue, outbox: enqueueOutbox, log });
  const lostTasks = new LostTaskSweeper(
    {
      index: new Schedule(redis, keys.activeTasks()),
      outbox: enqueueOutbox,
      tasks,
      queue,
      log,
      onEnded: () => dispatcher.flushSoon(),
    },
    config.lostTaskCheckMs,
  );
  const deadlines = new DeadlineSweeper({ schedule: new Schedule(redis, keys.deadlines()), tasks, queue, log });
  const taskEnds = new TaskEndWaiter({ redisUrl, channel: keys.taskEndedChannel(), tasks, log });
  return {
    redis,
    tasks,
    jobs: new JobStore(redis, keys),
    accounts: new Accounts(redis, keys, config.authCacheMs),
    blobs,
    workers: new WorkerRegistry(redis, keys),
    queue,
    submitter,
    registry,
    jobVersions,
    http,
    dispatcher,
    sweeper,
    lostTasks,
    deadlines,
    taskEnds,
    webhookSettings,
    metrics,
    startBackground() {
      dispatcher.start(Math.min(1_000, config.retention.sweepIntervalMs));
      submitter.start(Math.min(1_000, config.retention.sweepIntervalMs));
      sweeper.start(config.retention.sweepIntervalMs);
      lostTasks.start(Math.min(1_000, config.retention.sweepIntervalMs));
      // Deadlines are seconds apart at most: checked as often as the outboxes.
      deadlines.start(Math.min(1_000, config.retention.sweepIntervalMs));
    },
    async close() {
      await dispatcher.close();
      await submitter.close();
      await sweeper.close();
      await lostTasks.close();
      await deadlines.close();
      taskEnds.close();
      await queue.close();
      await http.close();
      redis.disconnect();
      blobs.close?.();
    },
  };
}

/**
 * Refuses to start over a deployment whose data is still under the key form used before the
 * prefix became a hash tag (`iw:*`, now `{iw}:*`): running would look like an empty deployment
 * (unknown API keys, zero balances) beside the old data. Throws a ConfigError naming the fix.
 */
export async function checkKeyLayout(config: Config, services: Pick<Services, 'redis'>, log?: Logger): Promise<void> {
  // The first Redis read of a process: one started while Redis is away (a restart, a failover)
  // waits for it, up to REDIS_START_WAIT_MS, instead of exiting at once (commands fail fast here).
  const deadline = Date.now() + config.redisStartWaitMs;
  let found: boolean;
  for (let waited = false; ; ) {
    try {
      found = await hasPreHashTagData(services.redis, config.redisPrefix, config.redisKeyPrefix);
      if (waited) log?.info('redis reachable: starting');
      break;
    } catch (e) {
      if (!isRedisUnavailable(e) || Date.now() >= deadline) throw e;
      if (!waited) log?.warn({ waitMs: config.redisStartWaitMs }, 'redis unavailable at start: waiting for it');
      waited = true;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  if (found) {
    throw new ConfigError(
      `Redis holds this deployment's data under "${config.redisPrefix}:*", the key form before the prefix became a hash tag ("${config.redisKeyPrefix}:*"). ` +
        'Stop every process of the deployment, then run `npm run keys -- migrate-hash-tag` once against this Redis (README, "Redis Cluster").',
    );
  }
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
