// The ONLY importer of ioredis. Connections for the stores and for BullMQ are made here.
import { Redis, type RedisOptions } from 'ioredis';

export type RedisClient = Redis;

export interface RedisConnectOptions {
  /** BullMQ's blocking connections need maxRetriesPerRequest: null (they wait forever by design). */
  forQueue?: boolean;
  /** Name shown by CLIENT LIST, to tell processes apart. */
  name?: string;
}

export function connectRedis(url: string, opts: RedisConnectOptions = {}): RedisClient {
  const options: RedisOptions = {
    connectionName: opts.name,
    maxRetriesPerRequest: opts.forQueue ? null : 3,
    enableReadyCheck: true,
    // Reconnect with a capped backoff; the process keeps running and retries.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  };
  return new Redis(url, options);
}

/** Key builder for one deployment prefix. Every key the stores use is spelled here. */
export function keyspace(prefix: string) {
  return {
    task: (taskId: string) => `${prefix}:task:${taskId}`,
    userTasks: (userId: number) => `${prefix}:user:${userId}:tasks`,
    credits: (userId: number) => `${prefix}:user:${userId}:credits`,
    ledger: (userId: number) => `${prefix}:user:${userId}:ledger`,
    apiKey: (hash: string) => `${prefix}:apikey:${hash}`,
    userSeq: () => `${prefix}:users:seq`,
    workers: () => `${prefix}:workers`,
    webhookSecret: (userId: number) => `${prefix}:user:${userId}:webhook_secret`,
    /** zset: "task:<id>" -> when its inputs, outputs and logs are due for deletion (unix ms). */
    retention: () => `${prefix}:retention`,
    /** zset: task id -> completion ms, for tasks whose webhook still has to be queued. */
    webhookOutbox: () => `${prefix}:webhooks:outbox`,
    /** zset: task id -> creation ms, for created tasks not yet confirmed in the BullMQ queue. */
    enqueueOutbox: () => `${prefix}:tasks:outbox`,
    job: (jobId: string) => `${prefix}:job:${jobId}`,
  };
}
export type Keyspace = ReturnType<typeof keyspace>;

/** Deletes every key under `prefix:` (SCAN, never KEYS): for tests and benchmarks on a shared Redis. */
export async function deleteKeysWithPrefix(redis: RedisClient, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}
