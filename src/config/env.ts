// The one place the environment is read. Parsed once with zod into a frozen, typed Config;
// start-up fails fast on a bad value, naming the variable. Every default is declared here and
// mirrored in the README's configuration table.
import path from 'node:path';
import os from 'node:os';
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
/** The form store/redis.ts's parseClusterUrl reads: one or more host:port, comma-separated. */
const CLUSTER_URL = /^rediss?\+cluster:\/\/(?:[^:@/]*(?::[^@/]*)?@)?(?:[^,:/?#@]+|\[[0-9a-fA-F:.]+\]):\d{1,5}(?:,(?:[^,:/?#@]+|\[[0-9a-fA-F:.]+\]):\d{1,5})*\/?$/;

const EnvSchema = z.object({
  /** HTTP port of the API. @defaultValue 8080 */
  PORT: int(0, 65535).default(8080),
  /** Interface the API binds. @defaultValue 127.0.0.1 (the Docker image sets 0.0.0.0) */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Base of the output URLs handed to users. @defaultValue http://HOST:PORT */
  PUBLIC_BASE_URL: z.url().optional(),
  /**
   * Redis to use: `redis://[user:password@]host:port[/db]` (`rediss://` for TLS) for one server, or
   * `redis+cluster://[user:password@]host:port[,host:port...]` (`rediss+cluster://`) for a Redis
   * Cluster, naming one or more of its nodes (the rest are discovered). Unset: `npm start` runs a
   * private redis-server child.
   */
  REDIS_URL: z
    .string()
    .min(1)
    .refine((v) => !/^rediss?\+cluster:/.test(v) || CLUSTER_URL.test(v), 'a cluster URL is redis+cluster://[user:password@]host:port[,host:port...]')
    .optional(),
  /**
   * Send the Redis commands of one event-loop turn in one write (ioredis auto-pipelining) on the
   * stores' and the queue producer's connections; never on a worker's blocking one. @defaultValue true
   */
  REDIS_AUTO_PIPELINE: bool.default(true),
  /**
   * How long an API process remembers which user an API key belongs to, in ms; 0 = ask Redis on
   * every request. A key deleted from Redis keeps working in a process up to this long. Unknown
   * keys are never remembered. @defaultValue 10000
   */
  AUTH_CACHE_MS: int(0, 3_600_000).default(10_000),
  /**
   * Prometheus metrics: recorded, and served on /metrics (and METRICS_PORT). false: neither (the
   * bench measures what they cost). @defaultValue true
   */
  METRICS_ENABLED: bool.default(true),
  /**
   * Names the deployment's keys and BullMQ queues, so several deployments (or tests) share a Redis.
   * Keys start with it written as a Redis Cluster hash tag, `{iw}:` (see redisKeyPrefix). @defaultValue iw
   */
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]+$/).default('iw'),
  /** Local state: blobs and the embedded Redis. @defaultValue ./.data */
  DATA_DIR: z.string().min(1).default('.data'),
  /**
   * Where task inputs and outputs are kept: `local` (DATA_DIR/blobs) or `s3` (S3_BUCKET; the
   * credentials come from the standard AWS variables). @defaultValue local
   */
  BLOB_STORE: z.enum(['local', 's3']).default('local'),
  /** Bucket of BLOB_STORE=s3 (required then). */
  S3_BUCKET: z.string().min(1).optional(),
  /** Endpoint of an S3-compatible server (MinIO, Ceph RGW, R2). @defaultValue AWS S3 */
  S3_ENDPOINT: z.url().optional(),
  /** Region of the bucket (R2: auto). @defaultValue us-east-1 */
  S3_REGION: z.string().min(1).default('us-east-1'),
  /** Path-style addressing (endpoint/bucket/key), which MinIO and Ceph RGW usually need. @defaultValue false */
  S3_FORCE_PATH_STYLE: bool.default(false),
  /** Model manifests (versions/) and fetched graphs (cache/). @defaultValue ./models */
  MODELS_DIR: z.string().min(1).default('models'),
  /** onnxruntime execution provider: cpu, cuda or webgpu; falls back to cpu with a warning. @defaultValue cpu */
  EXECUTION_PROVIDER: z.enum(['cpu', 'cuda', 'webgpu']).default('cpu'),
  /**
   * Versions (names or ids, comma-separated) each worker loads at start and keeps loaded (pinned
   * against MODEL_MEMORY_MB); others load on first use. @defaultValue all, unpinned (none when
   * MODEL_MEMORY_MB is set)
   */
  WARM_VERSIONS: z.string().min(1).optional(),
  /**
   * Budget for loaded graphs per worker process, in MB of graph files (split evenly over its
   * inference threads; onnxruntime's arenas come on top). Least recently used graphs are released
   * to stay within it; 0 = no limit. @defaultValue 0
   */
  MODEL_MEMORY_MB: int(0, 1_000_000).default(0),
  /** Inference threads of one worker process (each runs THREAD_TASKS tasks at once). @defaultValue 1 */
  WORKER_CONCURRENCY: int(1, 64).default(1),
  /**
   * Tasks one inference thread runs at once. Above 1, the model calls of versions that declare
   * `params.batching` are batched across those tasks (dynamic batching); a worker takes
   * WORKER_CONCURRENCY x THREAD_TASKS tasks from the queue. @defaultValue 1
   */
  THREAD_TASKS: int(1, 256).default(1),
  /** onnxruntime intra-op threads per inference thread; 0 = (cores - 1) / concurrency, at least 1. @defaultValue 0 */
  ORT_INTRA_OP_THREADS: int(0, 256).default(0),
  /** Let onnxruntime's intra-op threads spin between runs: faster alone, slower in a busy process. @defaultValue false */
  ORT_ALLOW_SPINNING: bool.default(false),
  /**
   * Deadline of one pipeline run on an inference thread. Past it the attempt fails with
   * INFERENCE_TIMEOUT (retried once) and a new thread takes the slot; the old one exits when its
   * run ends (see PipelinePool.expire). @defaultValue 120000
   */
  INFERENCE_TIMEOUT_MS: int(100).default(120_000),
  /**
   * libvips threads per sharp operation (sharp.concurrency). Tasks already run in parallel on
   * WORKER_CONCURRENCY inference threads beside onnxruntime's intra-op threads, so one avoids
   * oversubscribing the cores. 0 = libvips' own default (one per core). @defaultValue 1
   */
  SHARP_CONCURRENCY: int(0, 256).default(1),
  /**
   * Initial V8 old-generation size of each inference thread, MB (V8's --initial-heap-size, set
   * before the threads start). With V8's default the pipelines' short-lived arrays set off a full
   * collection every few tens of MB: 49 in ten 1 MP try-on runs, 12 with 128 (64: 21). A thread's
   * heap may hold about this much garbage before one. 0 = V8's default. @defaultValue 128
   */
  INFERENCE_HEAP_MB: int(0, 4096).default(128),
  /** BullMQ lock of a running task; a dead worker's task is re-queued after about this long. @defaultValue 30000 */
  JOB_LOCK_MS: int(500).default(30_000),
  /** How often workers look for stalled (orphaned) tasks. @defaultValue 15000 */
  STALLED_INTERVAL_MS: int(100).default(15_000),
  /** Times a task may lose its worker before it is failed (poison-task guard). @defaultValue 2 */
  MAX_STALLED: int(0, 100).default(2),
  /**
   * How often each queued or running task's BullMQ job is checked by the lost-task sweep (every
   * process runs it): a task whose job failed or vanished without its record being ended is
   * failed with WORKER_LOST and refunded. @defaultValue 30000
   */
  LOST_TASK_CHECK_MS: int(100).default(30_000),
  /** Attempts for transient (retryable) failures. @defaultValue 3 */
  JOB_ATTEMPTS: int(1, 20).default(3),
  /** SIGTERM drain bound: in-flight tasks not done by then are handed back to the queue. @defaultValue 25000 */
  DRAIN_TIMEOUT_MS: int(0).default(25_000),
  /**
   * How long a process starting while Redis is away waits for it before giving up (exit 1); a
   * worker (re)started during a Redis restart then joins once Redis is back. @defaultValue 60000
   */
  REDIS_START_WAIT_MS: int(0).default(60_000),
  /** Largest input file accepted, in bytes. @defaultValue 20971520 (20 MiB) */
  INPUT_MAX_BYTES: int(1).default(20 * 1024 * 1024),
  /** Whole-download timeout of one input file. @defaultValue 15000 */
  INPUT_TIMEOUT_MS: int(100).default(15_000),
  /** Redirects followed when downloading an input. @defaultValue 3 */
  INPUT_MAX_REDIRECTS: int(0, 20).default(3),
  /** Largest decoded image, in pixels (decompression-bomb guard). @defaultValue 40000000 */
  INPUT_MAX_PIXELS: int(1).default(40_000_000),
  /** Largest JSON body of the task API, in bytes. @defaultValue 65536 */
  BODY_MAX_BYTES: int(1024).default(64 * 1024),
  /** Allow user-given URLs (inputs, webhooks) that resolve to loopback/private/link-local addresses. @defaultValue false */
  ALLOW_PRIVATE_URLS: bool.default(false),
  /** Per-attempt timeout of a webhook delivery. @defaultValue 10000 */
  WEBHOOK_TIMEOUT_MS: int(100).default(10_000),
  /** Webhook retries end this long after the task completed. @defaultValue 60000 */
  WEBHOOK_WINDOW_MS: int(0).default(60_000),
  /** Delay before the first webhook retry; doubles each time, with jitter. @defaultValue 1000 */
  WEBHOOK_BASE_DELAY_MS: int(1).default(1_000),
  /** Attempts made for each event even in a short window. @defaultValue 3 */
  WEBHOOK_MIN_ATTEMPTS: int(1, 100).default(3),
  /** Webhook deliveries one worker process makes at once. @defaultValue 16 */
  WEBHOOK_CONCURRENCY: int(1, 1000).default(16),
  /** Task inputs, outputs and logs are deleted this long after the task ends. @defaultValue 3600000 (1 h) */
  TASK_RETENTION_MS: int(0).default(3_600_000),
  /** Job inputs and outputs are deleted this long after the job ends. @defaultValue 86400000 (24 h) */
  JOB_RETENTION_MS: int(0).default(86_400_000),
  /** Task records (status, timings) expire this many days after the task ends. @defaultValue 7 */
  TASK_RECORD_TTL_DAYS: z.coerce.number().positive().max(3650).default(7),
  /** How often each process looks for data due for deletion and webhooks to queue. @defaultValue 10000 */
  SWEEP_INTERVAL_MS: int(50).default(10_000),
  /** Largest file accepted by the job APIs, in bytes. @defaultValue 10485760 (10 MiB) */
  JOB_FILE_MAX_BYTES: int(1).default(10 * 1024 * 1024),
  /**
   * Upload bytes one API process takes in at once over all create-job requests. Each request
   * reserves its Content-Length (or, without one, the largest body a job API accepts) before its
   * body is read, and gives it back when answered; one that does not fit is refused at once (503,
   * Retry-After) rather than queued, since a waiting upload still holds a connection. A single
   * request larger than the whole budget is let in when nothing else is in flight.
   * @defaultValue 268435456 (256 MiB)
   */
  UPLOAD_INFLIGHT_MAX_BYTES: int(1).default(256 * 1024 * 1024),
  /** Hairstyle version the job API runs (name or id). @defaultValue the registry's first hairstyle version */
  HAIRSTYLE_VERSION: z.string().min(1).optional(),
  /** Try-on version the job API runs (name or id). @defaultValue the registry's first try-on version */
  TRYON_VERSION: z.string().min(1).optional(),
  /** Credits given to a user created by `npm run keys -- create` without --credits. @defaultValue 100 */
  DEFAULT_CREDITS: int(0).default(100),
  /** /health/ready also waits for a live worker with its models loaded. @defaultValue true */
  READY_REQUIRES_WORKER: bool.default(true),
  /**
   * Port of a worker process's Prometheus endpoint (GET /metrics, on HOST); 0 = off. The API always
   * serves /metrics on PORT (in `npm start`'s one process, that covers the worker too). @defaultValue 0
   */
  METRICS_PORT: int(0, 65535).default(0),
  /** Log level of pino (fastify) and the worker. @defaultValue info */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.infer<typeof EnvSchema>;

/**
 * The parsed configuration: its type is what parseConfig builds from the schema, so it is never
 * restated by hand (each setting is documented once, in EnvSchema).
 */
export type Config = ReturnType<typeof parseConfig>;

export class ConfigError extends Error {}

/** Parses an environment (process.env by default) into a frozen Config. Throws ConfigError naming each bad variable. */
export function parseConfig(env: NodeJS.ProcessEnv = process.env) {
  // Empty strings mean "unset", the way shells and compose files pass them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  if (e.BLOB_STORE === 's3' && !e.S3_BUCKET) throw new ConfigError('invalid configuration:\n  S3_BUCKET: required when BLOB_STORE=s3');
  const dataDir = path.resolve(e.DATA_DIR);
  const cores = Math.max(1, os.availableParallelism());
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/+$/, ''),
    redisUrl: e.REDIS_URL,
    redisCluster: e.REDIS_URL !== undefined && CLUSTER_URL.test(e.REDIS_URL),
    redisPrefix: e.REDIS_PREFIX,
    // Always the hash-tag form, on one server as on a cluster: one key layout everywhere, so a
    // deployment can move onto a cluster without renaming, and fronts follow one contract.
    // (Data written before this form is refused at start-up: migrate with `npm run keys -- migrate-hash-tag`.)
    redisKeyPrefix: `{${e.REDIS_PREFIX}}`,
    redisAutoPipeline: e.REDIS_AUTO_PIPELINE,
    authCacheMs: e.AUTH_CACHE_MS,
    metricsEnabled: e.METRICS_ENABLED,
    dataDir,
    blobDir: path.join(dataDir, 'blobs'),
    blobStore: e.BLOB_STORE,
    s3: Object.freeze({ bucket: e.S3_BUCKET ?? '', endpoint: e.S3_ENDPOINT, region: e.S3_REGION, forcePathStyle: e.S3_FORCE_PATH_STYLE }),
    modelsDir: path.resolve(e.MODELS_DIR),
    executionProvider: e.EXECUTION_PROVIDER,
    workerConcurrency: e.WORKER_CONCURRENCY,
    threadTasks: e.THREAD_TASKS,
    warmVersions: e.WARM_VERSIONS?.split(',').map((v) => v.trim()).filter(Boolean),
    modelMemoryBytes: e.MODEL_MEMORY_MB * 2 ** 20,
    // One core is left to the event loop (Redis, downloads) and libvips: measured faster end to end.
    ortIntraOpThreads: e.ORT_INTRA_OP_THREADS || Math.max(1, Math.floor((cores - 1) / e.WORKER_CONCURRENCY)),
    ortAllowSpinning: e.ORT_ALLOW_SPINNING,
    inferenceTimeoutMs: e.INFERENCE_TIMEOUT_MS,
    sharpConcurrency: e.SHARP_CONCURRENCY,
    inferenceHeapMb: e.INFERENCE_HEAP_MB,
    jobLockMs: e.JOB_LOCK_MS,
    stalledIntervalMs: e.STALLED_INTERVAL_MS,
    maxStalled: e.MAX_STALLED,
    lostTaskCheckMs: e.LOST_TASK_CHECK_MS,
    jobAttempts: e.JOB_ATTEMPTS,
    drainTimeoutMs: e.DRAIN_TIMEOUT_MS,
    redisStartWaitMs: e.REDIS_START_WAIT_MS,
    input: Object.freeze({
      maxBytes: e.INPUT_MAX_BYTES,
      timeoutMs: e.INPUT_TIMEOUT_MS,
      maxRedirects: e.INPUT_MAX_REDIRECTS,
      maxPixels: e.INPUT_MAX_PIXELS,
    }),
    bodyMaxBytes: e.BODY_MAX_BYTES,
    allowPrivateUrls: e.ALLOW_PRIVATE_URLS,
    jobs: Object.freeze({
      fileMaxBytes: e.JOB_FILE_MAX_BYTES,
      uploadInflightMaxBytes: e.UPLOAD_INFLIGHT_MAX_BYTES,
      hairstyleVersion: e.HAIRSTYLE_VERSION,
      tryonVersion: e.TRYON_VERSION,
    }),
    webhook: Object.freeze({
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      windowMs: e.WEBHOOK_WINDOW_MS,
      baseDelayMs: e.WEBHOOK_BASE_DELAY_MS,
      minAttempts: e.WEBHOOK_MIN_ATTEMPTS,
      concurrency: e.WEBHOOK_CONCURRENCY,
    }),
    retention: Object.freeze({
      taskMs: e.TASK_RETENTION_MS,
      jobMs: e.JOB_RETENTION_MS,
      recordTtlMs: Math.round(e.TASK_RECORD_TTL_DAYS * 86_400_000),
      sweepIntervalMs: e.SWEEP_INTERVAL_MS,
    }),
    defaultCredits: e.DEFAULT_CREDITS,
    readyRequiresWorker: e.READY_REQUIRES_WORKER,
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
  });
}

let cached: Config | undefined;

/** The process's Config, parsed on first use. Entry points call this; libraries take a Config argument. */
export function loadConfig(): Config {
  cached ??= parseConfig();
  return cached;
}

/** For tests that change the environment between cases. */
export function resetConfigForTests(): void {
  cached = undefined;
}
