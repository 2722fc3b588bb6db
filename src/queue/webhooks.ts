// Task webhooks: durable, signed, retried.
//
// The terminal-status Lua script puts each event in an outbox (zset) in the same step as the status
// change. WebhookDispatcher moves outbox entries into the BullMQ "webhooks" queue (job id = event
// id, so a repeat is a no-op) with the task record as it is then: every delivery of an event
// carries the same body and the same webhook-id. WebhookWorker delivers: POST, signed the Standard
// Webhooks way with the user's secret, a per-attempt timeout, no redirects; anything but 2xx is
// retried with exponential backoff and jitter until the window after completion closes (at least
// minAttempts attempts). Delayed retries live in Redis, so restarts lose none.
import { Queue, Worker, type Job } from 'bullmq';
import type { Logger } from '../domain/logger.ts';
import type { Metrics } from '../domain/metrics.ts';
import { toTaskView } from '../domain/task.ts';
import { nextRetryDelay, signWebhook, webhookEventId, type RetryPolicy } from '../domain/webhooks.ts';
import type { Accounts } from '../store/accounts.ts';
import { connectRedis, isRedisUnavailable, type RedisClient } from '../store/redis.ts';
import { Schedule } from '../store/schedules.ts';
import type { TaskStore } from '../store/task-store.ts';
import type { OutboundHttp } from './outbound-http.ts';
import { PeriodicPass } from './periodic-pass.ts';
import { onQueueError, QueueName } from './task-queue.ts';

export interface WebhookJobData {
  eventId: string;
  taskId: string;
  userId: number;
  url: string;
  body: string;
  completedMs: number;
}

export interface WebhookSettings extends RetryPolicy {
  redisUrl: string;
  prefix: string;
  timeoutMs: number;
  concurrency: number;
}

const USER_AGENT = 'image-inference-worker-webhooks/1';
const OUTBOX_LEASE_MS = 30_000;

/** Moves events from the outbox into the delivery queue. Safe to run in every process. */
export class WebhookDispatcher {
  private readonly connection: RedisClient;
  private readonly queue: Queue<WebhookJobData>;
  private readonly loop: PeriodicPass;

  constructor(
    private readonly deps: { outbox: Schedule; tasks: TaskStore; publicBaseUrl: string; log: Logger },
    private readonly settings: WebhookSettings,
  ) {
    // A producer: fails fast while Redis is down (the outbox keeps the event for the next pass).
    this.connection = connectRedis(settings.redisUrl, { name: 'webhook-dispatcher', log: deps.log });
    this.queue = new Queue<WebhookJobData>(QueueName.Webhooks, { connection: this.connection, prefix: settings.prefix });
    onQueueError(this.queue, deps.log, 'webhook queue');
    this.loop = new PeriodicPass('webhook outbox flush', (now) => this.pass(now), deps.log);
  }

  /** Queues every event due in the outbox. Concurrent calls share one pass. */
  flush(): Promise<number> {
    return this.loop.run();
  }

  /**
   * A flush when a task ends, without waiting for it. Failing because Redis is down is not logged
   * (the event stays in the outbox for the timer's next pass, and the connection logs the outage
   * once); any other failure is.
   */
  flushSoon(): void {
    this.flush().catch((e: unknown) => {
      if (!isRedisUnavailable(e)) this.deps.log.warn({ err: (e as Error).message }, 'webhook outbox flush failed');
    });
  }

  private pass(now: number): Promise<number> {
    return this.deps.outbox.drainDue(now, OUTBOX_LEASE_MS, 100, async (taskId) => {
      const record = await this.deps.tasks.get(taskId);
      if (!record?.webhookUrl || record.completedMs === null) return false;
      const view = toTaskView(record, (key) => `${this.deps.publicBaseUrl}/files/${key}`);
      const data: WebhookJobData = {
        eventId: webhookEventId(taskId, record.status),
        taskId,
        userId: record.userId,
        url: record.webhookUrl,
        body: JSON.stringify(view),
        completedMs: record.completedMs,
      };
      await this.queue.add('deliver', data, {
        jobId: data.eventId,
        // The backoff strategy decides when to stop; this is only a ceiling.
        attempts: 1_000,
        backoff: { type: 'webhook' },
        removeOnComplete: { age: 3600, count: 10_000 },
        removeOnFail: { age: 24 * 3600, count: 10_000 },
      });
      return true;
    });
  }

  /** Also flushes on a timer, for events whose dispatcher died before queueing them. */
  start(intervalMs: number): void {
    this.loop.start(intervalMs);
  }

  async close(): Promise<void> {
    await this.loop.stop();
    await this.queue.close();
    this.connection.disconnect();
  }
}

/** Delivers queued events. Runs in worker processes. */
export class WebhookWorker {
  private readonly connection: RedisClient;
  private worker: Worker<WebhookJobData> | undefined;

  constructor(
    private readonly deps: { accounts: Pick<Accounts, 'webhookSecret'>; http: OutboundHttp; log: Logger; metrics?: Metrics },
    private readonly settings: WebhookSettings,
  ) {
    this.connection = connectRedis(settings.redisUrl, { forQueue: true, name: 'webhook-worker', log: deps.log });
  }

  async start(): Promise<void> {
    const s = this.settings;
    this.worker = new Worker<WebhookJobData>(QueueName.Webhooks, (job) => this.deliver(job), {
      connection: this.connection,
      prefix: s.prefix,
      concurrency: s.concurrency,
      // An attempt is bounded by its timeout, and the lock must outlast it with room to spare: a
      // lock that lapses mid-attempt (its renewal, every half lock, late on a starved event loop)
      // leaves the attempt unrecorded, and the stalled check runs the job again, a second delivery
      // of one attempt (seen once in CI with a 5 s lock). A worker that dies mid-attempt holds the
      // event for at most this long (BullMQ's default, 30 s).
      lockDuration: Math.max(30_000, s.timeoutMs * 2),
      settings: {
        backoffStrategy: (attemptsMade: number, _type?: string, _err?: Error, job?: { data: WebhookJobData }) => {
          if (!job) return -1;
          const delay = nextRetryDelay(attemptsMade, Date.now(), job.data.completedMs, s);
          return delay < 0 ? -1 : Math.round(delay);
        },
      },
    });
    this.worker.on('failed', (job, err) => {
      if (!job?.finishedOn) return;
      this.deps.metrics?.webhookGaveUp();
      this.deps.log.warn({ eventId: job.data.eventId, attempts: job.attemptsMade, err: err.message }, 'webhook delivery gave up');
    });
    onQueueError(this.worker, this.deps.log, 'webhook worker');
    await this.worker.waitUntilReady();
  }

  private async deliver(job: Job<WebhookJobData>): Promise<void> {
    const { eventId, userId, url, body } = job.data;
    const secret = await this.deps.accounts.webhookSecret(userId);
    const timestamp = Math.floor(Date.now() / 1000);
    const res = await this.deps.http
      .fetch(url, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secret, eventId, timestamp, body),
        },
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      })
      .catch((e: unknown) => {
        this.deps.metrics?.webhookAttempt('error');
        throw e;
      });
    await res.body?.cancel().catch(() => {});
    // 2xx ends the cycle; 3xx is a failure (redirects are not followed), as are 4xx and 5xx.
    const delivered = res.status >= 200 && res.status < 300;
    this.deps.metrics?.webhookAttempt(delivered ? 'delivered' : 'rejected');
    if (!delivered) throw new Error(`receiver answered HTTP ${res.status}`);
  }

  async close(): Promise<void> {
    await this.worker?.close();
    this.connection.disconnect();
  }
}
