// The ONLY importer of ioredis. Connections for the stores and for BullMQ are made here, and so is
// the knowledge of what a lost connection looks like (isRedisUnavailable).
import { Redis, type RedisOptions } from 'ioredis';
import { AppError } from '../errors/codes.ts';
import type { Logger } from '../domain/logger.ts';

export type RedisClient = Redis;

export interface RedisConnectOptions {
  /**
   * For BullMQ's Worker (blocking commands): maxRetriesPerRequest null, and commands wait for a
   * reconnect, as BullMQ requires. Every other connection (stores, BullMQ Queue producers) fails
   * its commands at once while Redis is down.
   */
  forQueue?: boolean;
  /** Name shown by CLIENT LIST, to tell processes apart. */
  name?: string;
  /** Where state changes are logged: one line when the link is lost and one when it is back. */
  log?: Logger;
}

/**
 * Backstop for a connection that is open but answers nothing (a stopped or wedged Redis, a
 * half-open TCP link): such a command fails after this long instead of hanging. A Redis that is
 * down (refused, reset) fails commands at once, without waiting for this.
 */
const COMMAND_TIMEOUT_MS = 5_000;

export function connectRedis(url: string, opts: RedisConnectOptions = {}): RedisClient {
  const options: RedisOptions = {
    connectionName: opts.name,
    // Not for BullMQ workers: a command in flight when the link drops fails at once instead of
    // being re-sent after a reconnect (a re-sent create or transition script could run twice).
    maxRetriesPerRequest: opts.forQueue ? null : 0,
    ...(opts.forQueue ? {} : { commandTimeout: COMMAND_TIMEOUT_MS }),
    enableReadyCheck: true,
    // Reconnect with a capped backoff; the process keeps running and retries.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  };
  const client = new Redis(url, options);
  if (!opts.forQueue) {
    // Commands issued before the first connection wait for it (start-up order does not matter);
    // once connected, a command issued while the link is down fails at once
    // (ioredis reads this option per command) rather than queueing until Redis is back.
    client.once('ready', () => (client.options.enableOfflineQueue = false));
  }
  watchConnection(client, url, opts.name ?? 'redis', opts.log);
  return client;
}

/**
 * Whether an error means Redis could not be reached (connection refused, reset or closed; a
 * command failed fast or timed out while the link was down; Redis still loading its data after a
 * restart), as opposed to a bad command or a script error.
 */
export function isRedisUnavailable(e: unknown): boolean {
  for (let cur = e, depth = 0; cur instanceof Error && depth < 3; cur = cur.cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (cur.name === 'MaxRetriesPerRequestError') return true;
    if (UNAVAILABLE_MESSAGES.some((m) => cur instanceof Error && cur.message.includes(m))) return true;
    if (/^(LOADING|BUSY|MASTERDOWN|TRYAGAIN) /.test(cur.message)) return true;
  }
  return false;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGES = [
  "Stream isn't writeable",
  'Connection is closed',
  'Command timed out',
  'Command aborted due to connection close',
  'Reached the max retries per request limit',
];

/** STORE_UNAVAILABLE (HTTP 503, Retry-After) for an error that means Redis is down; else undefined. */
export function asStoreUnavailable(e: unknown): AppError | undefined {
  if (!isRedisUnavailable(e)) return undefined;
  return new AppError('STORE_UNAVAILABLE', undefined, undefined, { cause: e });
}

/**
 * Every connection gets an `error` listener (without one, ioredis prints "[ioredis] Unhandled
 * error event" with a stack trace on each reconnect attempt). State changes are logged per Redis
 * URL and process, not per connection or attempt: "lost" when the first connection to it drops,
 * "reconnected" when the last one is back.
 */
function watchConnection(client: Redis, url: string, name: string, log: Logger | undefined): void {
  const link = linkTo(url, log);
  const id = `${name}#${++link.seq}`;
  let up = false;
  let lastError = '';
  client.on('error', (e: Error) => {
    lastError = e.message;
    if (!up && !link.everUp && !link.warnedUnreachable) {
      link.warnedUnreachable = true;
      link.log?.warn({ redis: redactUrl(url), err: e.message }, 'redis not reachable yet; retrying');
    }
  });
  client.on('ready', () => {
    up = true;
    link.everUp = true;
    if (!link.connectedLogged && link.log) {
      link.connectedLogged = true;
      link.log.info({ redis: redactUrl(url) }, 'redis connected');
    }
    if (link.down.delete(id) && link.down.size === 0) {
      link.log?.info({ redis: redactUrl(url), downMs: Date.now() - link.downSinceMs }, 'redis reconnected');
    }
  });
  // Emitted only when ioredis will try again (not on a deliberate disconnect).
  client.on('reconnecting', () => {
    if (!up) return;
    up = false;
    if (link.down.size === 0) {
      link.downSinceMs = Date.now();
      link.log?.warn({ redis: redactUrl(url), connection: name, err: lastError || 'connection closed' }, 'redis connection lost; commands fail until it is back');
    }
    link.down.add(id);
  });
  client.on('end', () => {
    up = false;
    link.down.delete(id);
  });
}

interface Link {
  seq: number;
  everUp: boolean;
  connectedLogged: boolean;
  warnedUnreachable: boolean;
  down: Set<string>;
  downSinceMs: number;
  log: Logger | undefined;
}
const links = new Map<string, Link>();

function linkTo(url: string, log: Logger | undefined): Link {
  let link = links.get(url);
  if (!link) {
    link = { seq: 0, everUp: false, connectedLogged: false, warnedUnreachable: false, down: new Set(), downSinceMs: 0, log };
    links.set(url, link);
  }
  link.log ??= log;
  return link;
}

/** The URL without its password, for logs. */
function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
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
    /**
     * zset: task id -> when it is next due a lost-task check (unix ms), for every task starting or
     * processing. Written by the create and claim scripts, left by the terminal one. (Not under
     * `${prefix}:tasks:`: that is the BullMQ queue's own namespace, `:active` its active list.)
     */
    activeTasks: () => `${prefix}:active-tasks`,
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
