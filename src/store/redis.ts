// The ONLY importer of ioredis. Connections for the stores and for BullMQ are made here (one server,
// or a Redis Cluster from a `redis+cluster://` URL), and so is the knowledge of what a lost
// connection looks like (isRedisUnavailable).
//
// Redis Cluster: every key of a deployment starts with its prefix written as a hash tag, `{iw}:`
// (config.redisKeyPrefix; BullMQ's `prefix` is the same string, as BullMQ documents for Cluster),
// so all of them hash to one slot. That is what lets the Lua scripts, BullMQ's own scripts and the
// pipelines here touch several keys at once on a cluster; the price is that one deployment lives on
// one shard (a cluster gives it failover, not write scaling: run several prefixes for that).
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { AppError } from '../errors/codes.ts';
import type { Logger } from '../domain/logger.ts';

export type RedisClient = Redis | Cluster;

/**
 * The seed nodes of a `redis+cluster://[user:password@]host:port[,host:port...]` URL
 * (`rediss+cluster://` for TLS); undefined for any other connection string (one server, which
 * ioredis parses itself). config/env.ts checks the same form at start-up, naming REDIS_URL.
 */
export function parseClusterUrl(url: string): { nodes: Array<{ host: string; port: number }>; username?: string; password?: string; tls: boolean } | undefined {
  const m = /^(rediss?)\+cluster:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?([^/?#]+)\/?$/.exec(url);
  if (!m) return undefined;
  const nodes = m[4]!.split(',').map((hp) => {
    const at = hp.lastIndexOf(':');
    const host = hp.slice(0, at).replace(/^\[(.*)\]$/, '$1');
    const port = Number(hp.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`bad cluster node "${hp}" in a redis+cluster URL (host:port)`);
    return { host, port };
  });
  const dec = (v: string | undefined) => (v ? decodeURIComponent(v) : undefined);
  return { nodes, username: dec(m[2]), password: dec(m[3]), tls: m[1] === 'rediss' };
}

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
  /** ioredis auto-pipelining (REDIS_AUTO_PIPELINE); never on a blocking (forQueue) connection. */
  autoPipeline?: boolean;
}

/**
 * Backstop for a connection that is open but answers nothing (a stopped or wedged Redis, a
 * half-open TCP link): such a command fails after this long instead of hanging. A Redis that is
 * down (refused, reset) fails commands at once, without waiting for this.
 */
const COMMAND_TIMEOUT_MS = 5_000;

export function connectRedis(url: string, opts: RedisConnectOptions = {}): RedisClient {
  const cluster = parseClusterUrl(url);
  const options: RedisOptions = {
    connectionName: opts.name,
    // Not for BullMQ workers: a command in flight when the link drops fails at once instead of
    // being re-sent after a reconnect (a re-sent create or transition script could run twice).
    maxRetriesPerRequest: opts.forQueue ? null : 0,
    ...(opts.forQueue ? {} : { commandTimeout: COMMAND_TIMEOUT_MS }),
    enableReadyCheck: true,
    // Commands issued in one event-loop turn leave in one write: with many requests in flight, one
    // syscall per command was the API's largest single cost (bench core, create throughput).
    enableAutoPipelining: !opts.forQueue && opts.autoPipeline === true,
    // Reconnect with a capped backoff; the process keeps running and retries.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  };
  const client: RedisClient = cluster ? connectCluster(cluster, options) : new Redis(url, options);
  if (!opts.forQueue) {
    // Commands issued before the first connection wait for it (start-up order does not matter);
    // once connected, a command issued while the link is down fails at once
    // (ioredis reads this option per command, a Cluster too) rather than queueing until Redis is back.
    client.once('ready', () => (client.options.enableOfflineQueue = false));
  }
  watchConnection(client, url, opts.name ?? 'redis', opts.log);
  return client;
}

function connectCluster(target: NonNullable<ReturnType<typeof parseClusterUrl>>, node: RedisOptions): Cluster {
  const { retryStrategy, ...redisOptions } = node;
  const options: ClusterOptions = {
    // Per-node options: timeouts, retries per request, credentials. A node's own reconnects are
    // the cluster's business (it refreshes the slot map), hence no per-node retryStrategy.
    redisOptions: {
      ...redisOptions,
      username: target.username,
      password: target.password,
      ...(target.tls ? { tls: {} } : {}),
    },
    enableReadyCheck: true,
    clusterRetryStrategy: retryStrategy,
  };
  return new Cluster(target.nodes, options);
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
    if (/^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN) /.test(cur.message)) return true;
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
  // ioredis Cluster: no slot map yet, or none of the nodes answers.
  "Cluster isn't ready",
  'None of startup nodes is available',
  'Failed to refresh slots cache',
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
function watchConnection(client: RedisClient, url: string, name: string, log: Logger | undefined): void {
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

/**
 * Key builder for one deployment's key prefix (config.redisKeyPrefix, `{iw}`: see the header).
 * Every key the stores use is spelled here.
 */
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
    /**
     * hash: what a user's Idempotency-Key (by its sha256) created: fingerprint, task_id, job_id,
     * cost, created_ms. Written by the create script only; expires 24 h after the first use.
     */
    idempotency: (userId: number, keyHash: string) => `${prefix}:user:${userId}:idempotency:${keyHash}`,
    /** zset: task id -> its Cancel-After deadline (unix ms, Redis clock), for the deadline sweep. */
    deadlines: () => `${prefix}:deadlines`,
    /**
     * Pub/sub channel (not a key): the terminal-transition script publishes a task's id here when
     * someone waits on it (Prefer: wait), for the API's one subscription per process.
     */
    taskEndedChannel: () => `${prefix}:task-ended`,
  };
}
export type Keyspace = ReturnType<typeof keyspace>;

/**
 * Deletes every key under `prefix:` (SCAN, never KEYS; on a cluster, on each master): for tests and
 * benchmarks on a shared Redis. One DEL per key, so a prefix that is not a hash tag works too.
 */
export async function deleteKeysWithPrefix(redis: RedisClient, prefix: string): Promise<number> {
  let deleted = 0;
  for (const node of redis instanceof Cluster ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length === 0) continue;
      const pipe = node.pipeline();
      for (const k of keys) pipe.del(k);
      for (const [err, n] of (await pipe.exec()) ?? []) {
        if (err) throw err;
        deleted += Number(n);
      }
    } while (cursor !== '0');
  }
  return deleted;
}

/**
 * Whether a deployment still has its data under the key form used before the prefix became a
 * hash tag (`iw:*` rather than `{iw}:*`): its user counter exists in the old form and not in the
 * new. Start-up refuses then (see migrateToHashTag), rather than run empty beside the old data.
 */
export async function hasPreHashTagData(redis: RedisClient, name: string, keyPrefix: string): Promise<boolean> {
  if (name === keyPrefix) return false;
  // Two single-key reads: the two keys hash to different slots on a cluster.
  const [old, current] = await Promise.all([redis.exists(keyspace(name).userSeq()), redis.exists(keyspace(keyPrefix).userSeq())]);
  return old === 1 && current === 0;
}

/**
 * Renames every `name:*` key to `{name}:*` (RENAMENX: an existing new key is never overwritten;
 * TTLs are kept). For one Redis server, with every process of the deployment stopped: a cluster
 * cannot RENAME across slots, so migrate before moving the data onto a cluster. Returns the number
 * of keys renamed and of those left because the new key existed.
 */
export async function migrateToHashTag(redis: RedisClient, name: string, keyPrefix: string): Promise<{ renamed: number; skipped: number }> {
  if (redis instanceof Cluster) throw new Error('the key migration runs on one Redis server, not a cluster (RENAME cannot cross slots)');
  let renamed = 0;
  let skipped = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${name}:*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) {
      if ((await redis.renamenx(k, keyPrefix + k.slice(name.length))) === 1) renamed++;
      else skipped++;
    }
  } while (cursor !== '0');
  return { renamed, skipped };
}
