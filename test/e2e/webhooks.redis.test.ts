// Task webhooks against a real local HTTP receiver: retries with backoff, one event id,
// signatures that verify, the window, timeouts, redirects, a worker restart mid-cycle, and the
// SSRF policy at create time. The retry schedule is checked on what BullMQ stored in Redis (each
// attempt's count, each retry's delay and due time, when the job gave up), never on wall-clock gaps
// measured by the test.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Job, Queue, QueueEvents } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/domain/webhooks.ts';
import { QueueName } from '../../src/queue/task-queue.ts';
import type { WebhookJobData } from '../../src/queue/webhooks.ts';
import { connectRedis } from '../../src/store/redis.ts';
import { FACE_VERSION, startHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process.ts';

/** The delivery job as Redis held it while an attempt was in flight. */
interface JobSnapshot {
  /** Attempts finished before this one. */
  attemptsMade: number;
  /** When this attempt started (BullMQ's timestamp). */
  processedOn: number | undefined;
  /** Why the previous attempt failed. */
  failedReason: string | undefined;
}

/** A retry as BullMQ scheduled it in Redis: the job's stored delay while it waited, and its due time. */
interface ScheduledRetry {
  /** Attempts made when it was scheduled (the backoff strategy's `attemptsMade`). */
  attemptsMade: number;
  /** The delay (ms) the backoff strategy gave, as BullMQ stored it in the job. */
  delay: number;
  /** When the retry became due (the "delayed" event's timestamp). */
  due: number;
}

/**
 * The webhooks BullMQ queue of one harness, read straight from Redis. A QueueEvents listener reads
 * each "delayed" event and, while the job waits in the delayed set (at least the smallest backoff,
 * 100 ms here), the delay stored in the job; BullMQ resets that field to 0 when it promotes the job.
 */
async function webhookJobs(hh: Harness) {
  const connection = connectRedis(hh.env.REDIS_URL!, { forQueue: true, name: 'test-webhook-jobs' });
  const queue = new Queue<WebhookJobData>(QueueName.Webhooks, { connection, prefix: hh.config.redisKeyPrefix });
  const events = new QueueEvents(QueueName.Webhooks, { connection: { url: hh.env.REDIS_URL! }, prefix: hh.config.redisKeyPrefix });
  const get = (eventId: string) => Job.fromId<WebhookJobData>(queue, eventId);
  const retries = new Map<string, Array<Promise<ScheduledRetry>>>();
  events.on('delayed', ({ jobId, delay }) => {
    const read = (async () => {
      const j = await get(jobId);
      return { attemptsMade: j?.attemptsMade ?? -1, delay: Number(j?.delay), due: Number(delay) };
    })();
    retries.set(jobId, [...(retries.get(jobId) ?? []), read]);
  });
  await events.waitUntilReady();
  return {
    get,
    async snapshot(eventId: string): Promise<JobSnapshot> {
      const j = await get(eventId);
      if (!j) throw new Error(`no delivery job ${eventId}`);
      return { attemptsMade: j.attemptsMade, processedOn: j.processedOn, failedReason: j.failedReason };
    },
    /** Resolves with the job once it is completed or failed for good (no attempt can follow). */
    settled(eventId: string, timeoutMs = 15_000) {
      return waitFor(
        async () => {
          // The state first, then the job: a terminal job's hash no longer changes. Read the other
          // way round, the job could be read before a last attempt and its state after it (seen in
          // CI: 6 requests for an attemptsMade of 5, the hash read while the sixth was in flight).
          const state = await queue.getJobState(eventId);
          if (state !== 'completed' && state !== 'failed') return undefined;
          const j = await get(eventId);
          return j ? { job: j, state } : undefined;
        },
        { timeoutMs, what: `delivery job ${eventId} to finish` },
      );
    },
    async state(eventId: string) {
      return (await get(eventId))?.getState();
    },
    /** The retries scheduled so far for one event, in order. */
    retries(eventId: string): Promise<ScheduledRetry[]> {
      return Promise.all(retries.get(eventId) ?? []);
    },
    async close() {
      await events.close();
      await queue.close();
      connection.disconnect();
    },
  };
}
type WebhookJobs = Awaited<ReturnType<typeof webhookJobs>>;

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The delivery job when this request arrived (read before answering). */
  job: JobSnapshot;
}
type Reply = { status: number; location?: string };

/**
 * A webhook receiver answering the n-th request (0-based) with reply(n); a promise holds the
 * answer until it resolves. Before answering it reads the delivery job from Redis.
 */
async function startReceiver(jobs: WebhookJobs, reply: (n: number) => Reply | Promise<Reply>) {
  const deliveries: Delivery[] = [];
  let received = 0;
  // A path of its own: the port is picked by the OS and may be one another test's receiver just
  // released, whose event (of another harness, still being retried) would otherwise count here.
  const path = `/hook/${randomUUID()}`;
  const server = http.createServer((req, res) => {
    if (req.url !== path) {
      res.writeHead(410).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const n = received++;
      const job = await jobs.snapshot(String(req.headers['webhook-id']));
      deliveries[n] = { headers: req.headers, body: Buffer.concat(chunks).toString(), job };
      const r = await reply(n);
      if (res.destroyed) return;
      res.writeHead(r.status, r.location ? { location: r.location } : {}).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  const arrived = () => deliveries.filter(Boolean).length;
  return {
    url,
    deliveries,
    /** Resolves once `count` deliveries have arrived. */
    waitFor: (count: number, timeoutMs = 15_000) =>
      waitFor(() => arrived() >= count, { timeoutMs, what: `${count} deliveries`, describe: arrived }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const WINDOW_MS = 3000;
const BASE_DELAY_MS = 200;
const WEBHOOK_ENV = {
  WEBHOOK_WINDOW_MS: String(WINDOW_MS),
  WEBHOOK_BASE_DELAY_MS: String(BASE_DELAY_MS),
  WEBHOOK_TIMEOUT_MS: '500',
  WEBHOOK_MIN_ATTEMPTS: '3',
};
/** Retry k (k >= 1) waits between half and all of base * 2^(k-1) ("equal jitter"), unless cut. */
const jitterRange = (k: number, base = BASE_DELAY_MS) => [(base * 2 ** (k - 1)) / 2, base * 2 ** (k - 1)] as const;

let h: Harness;
let jobs: WebhookJobs;
let token: string;
let userId: number;
const cleanups: Array<() => Promise<unknown> | unknown> = [];

beforeAll(async () => {
  h = await startHarness({ env: WEBHOOK_ENV });
  jobs = await webhookJobs(h);
  ({ token, userId } = await h.user(100));
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
afterAll(async () => {
  await jobs?.close();
  await h?.close();
});

async function taskWithHook(url: string, image = '/files/astronaut.png') {
  const id = await h.createTask(token, { image: h.fixtures.url(image) }, { webhook_url: url });
  const t = await h.waitForTask(token, id);
  const completedMs = (await h.services.tasks.get(id))!.completedMs!;
  return { id, t, completedMs };
}

describe('task webhooks', () => {
  it('a receiver that fails twice gets three deliveries: one webhook-id, growing backoff, verifiable signatures, the task record', async () => {
    const rx = await startReceiver(jobs, (n) => ({ status: n === 0 ? 500 : n === 1 ? 503 : 200 }));
    cleanups.push(rx.close);
    const { id, t, completedMs } = await taskWithHook(rx.url);
    const eventId = `evt_${id}_succeeded`;
    // Completed in Redis: the cycle is over, no attempt can follow the 2xx.
    const { job, state } = await jobs.settled(eventId);
    expect(state).toBe('completed');
    expect(rx.deliveries).toHaveLength(3);
    expect(job.attemptsMade).toBe(3);
    expect(job.opts).toMatchObject({ attempts: 1000, backoff: { type: 'webhook' } });
    expect(job.data).toMatchObject({ eventId, taskId: id, userId, url: rx.url, completedMs });

    const ids = new Set(rx.deliveries.map((d) => d.headers['webhook-id']));
    expect([...ids]).toEqual([eventId]);
    // What each attempt found in Redis: the attempts before it, and why the last one failed.
    expect(rx.deliveries.map((d) => [d.job.attemptsMade, d.job.failedReason])).toEqual([
      [0, undefined],
      [1, 'receiver answered HTTP 500'],
      [2, 'receiver answered HTTP 503'],
    ]);
    // Two retries, each scheduled with a delay in its jitter range: base 200 ms, [100, 200] then [200, 400].
    const retries = await jobs.retries(eventId);
    expect(retries.map((r) => r.attemptsMade)).toEqual([1, 2]);
    retries.forEach((r, i) => {
      expect(r.delay).toBeGreaterThanOrEqual(jitterRange(i + 1)[0]);
      expect(r.delay).toBeLessThanOrEqual(jitterRange(i + 1)[1]);
    });
    // BullMQ held each retry until it was due.
    expect(rx.deliveries[1]!.job.processedOn).toBeGreaterThanOrEqual(retries[0]!.due);
    expect(rx.deliveries[2]!.job.processedOn).toBeGreaterThanOrEqual(retries[1]!.due);

    const secret = await h.services.accounts.webhookSecret(userId);
    for (const d of rx.deliveries) {
      expect(d.headers['content-type']).toBe('application/json');
      const ok = verifyWebhook(
        secret,
        { id: String(d.headers['webhook-id']), timestamp: String(d.headers['webhook-timestamp']), signature: String(d.headers['webhook-signature']) },
        d.body,
      );
      expect(ok).toBe(true);
      expect(verifyWebhook('whsec_' + Buffer.alloc(32).toString('base64'), { id: String(d.headers['webhook-id']), timestamp: String(d.headers['webhook-timestamp']), signature: String(d.headers['webhook-signature']) }, d.body)).toBe(false);
    }
    const body = JSON.parse(rx.deliveries[2]!.body);
    expect(body).toEqual(t); // the task record, no envelope
    expect(body.status).toBe('succeeded');
    expect(rx.deliveries.every((d) => d.body === rx.deliveries[0]!.body)).toBe(true);
  });

  it('a failed task sends a failed event', async () => {
    const rx = await startReceiver(jobs, () => ({ status: 204 }));
    cleanups.push(rx.close);
    const { id } = await taskWithHook(rx.url, '/text/x.jpg');
    await rx.waitFor(1);
    expect(rx.deliveries[0]!.headers['webhook-id']).toBe(`evt_${id}_failed`);
    expect(JSON.parse(rx.deliveries[0]!.body)).toMatchObject({ status: 'failed', error: expect.stringMatching(/^INPUT_NOT_IMAGE/) });
    expect((await jobs.settled(`evt_${id}_failed`)).state).toBe('completed');
    expect(rx.deliveries).toHaveLength(1);
  });

  it('a receiver down for good is retried until the window closes, and not after', async () => {
    const rx = await startReceiver(jobs, () => ({ status: 500 }));
    cleanups.push(rx.close);
    const { id, completedMs } = await taskWithHook(rx.url);
    const eventId = `evt_${id}_succeeded`;
    // The backoff strategy ends the cycle (returns -1): the job fails for good in Redis.
    const { job, state } = await jobs.settled(eventId);
    expect(state).toBe('failed');
    const deadline = completedMs + WINDOW_MS;
    const n = job.attemptsMade;
    expect(n).toBeGreaterThanOrEqual(3); // WEBHOOK_MIN_ATTEMPTS
    expect(n).toBeLessThan(job.opts.attempts!); // ended by the window, not by the attempts ceiling
    expect(job.failedReason).toBe('receiver answered HTTP 500');
    // Every attempt reached the receiver once, and no other request did. (The attempt counts
    // first: a failure then shows which attempt arrived twice or never.)
    expect(rx.deliveries.map((d) => d.job.attemptsMade)).toEqual([...Array(n).keys()]);
    expect(rx.deliveries).toHaveLength(n);
    // One retry after each failed attempt but the last. Delays grow with the attempt, each in its
    // jitter range; only the last may be cut short to land on the deadline.
    const retries = await jobs.retries(eventId);
    expect(retries.map((r) => r.attemptsMade)).toEqual([...Array(n - 1).keys()].map((k) => k + 1));
    retries.forEach((r, i) => {
      const [lo, hi] = jitterRange(i + 1);
      expect(r.delay).toBeLessThanOrEqual(hi);
      if (i < retries.length - 1) expect(r.delay).toBeGreaterThanOrEqual(lo);
    });
    // No retry was due past the window. The slack covers the worker's two clock reads (the
    // strategy's, then BullMQ's stamp) and the rounding of the delay.
    for (const r of retries) expect(r.due).toBeLessThanOrEqual(deadline + 50);
    // It kept trying until the window closed: it gave up only once the deadline had passed.
    expect(job.finishedOn).toBeGreaterThanOrEqual(deadline);
  });

  it('a slow receiver hits the per-attempt timeout and is retried', async () => {
    // The first request is never answered until the test ends: the retry must not wait for it.
    let release!: () => void;
    const held = new Promise<Reply>((r) => (release = () => r({ status: 200 })));
    const rx = await startReceiver(jobs, (n) => (n === 0 ? held : { status: 200 }));
    cleanups.push(async () => {
      release();
      await rx.close();
    });
    const { id } = await taskWithHook(rx.url);
    await rx.waitFor(2); // arrives while the first request is still held
    const second = rx.deliveries[1]!;
    expect(second.headers['webhook-id']).toBe(`evt_${id}_succeeded`);
    expect(second.job.attemptsMade).toBe(1);
    expect(second.job.failedReason).toMatch(/timeout/i); // WEBHOOK_TIMEOUT_MS aborted the attempt
    const [retry] = await jobs.retries(`evt_${id}_succeeded`);
    expect(retry!.delay).toBeGreaterThanOrEqual(jitterRange(1)[0]);
    expect(retry!.delay).toBeLessThanOrEqual(jitterRange(1)[1]);
    expect((await jobs.settled(`evt_${id}_succeeded`)).state).toBe('completed');
  });

  it('a redirect is a failure: not followed, retried', async () => {
    const target = await startReceiver(jobs, () => ({ status: 200 }));
    const rx = await startReceiver(jobs, (n) => (n === 0 ? { status: 302, location: target.url } : { status: 200 }));
    cleanups.push(rx.close, target.close);
    const { id } = await taskWithHook(rx.url);
    await rx.waitFor(2);
    expect(rx.deliveries[1]!.job.failedReason).toBe('receiver answered HTTP 302');
    expect((await jobs.settled(`evt_${id}_succeeded`)).state).toBe('completed');
    expect(target.deliveries).toHaveLength(0);
  });
});

describe('webhooks across a worker restart', () => {
  let h2: Harness;
  let jobs2: WebhookJobs;
  const children: WorkerProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await jobs2?.close();
    await h2?.close();
  });

  it('the worker is killed in the middle of a retry cycle; a new worker delivers the event', async () => {
    h2 = await startHarness({ worker: false, env: { ...WEBHOOK_ENV, WEBHOOK_WINDOW_MS: '8000', WEBHOOK_BASE_DELAY_MS: '1500' } });
    jobs2 = await webhookJobs(h2);
    const u = await h2.user(10);
    const rx = await startReceiver(jobs2, (n) => ({ status: n === 0 ? 500 : 200 }));
    cleanups.push(rx.close);
    const spawn = async () => {
      const c = await spawnWorkerProcess({ ...h2.env, JOB_LOCK_MS: '1000', STALLED_INTERVAL_MS: '250' });
      children.push(c);
      return c;
    };
    const a = await spawn();
    const id = await h2.createTask(u.token, { image: h2.fixtures.url('/files/astronaut.png') }, { webhook_url: rx.url });
    const eventId = `evt_${id}_succeeded`;
    await rx.waitFor(1); // the first attempt is answered 500 ...
    await waitFor(async () => (await jobs2.state(eventId)) === 'delayed', { what: 'the retry to wait in Redis' }); // ... and its retry waits in Redis
    a.kill('SIGKILL');
    await a.exited;
    await spawn();
    await rx.waitFor(2, 20_000);
    expect(rx.deliveries[1]!.headers['webhook-id']).toBe(eventId);
    expect(rx.deliveries[1]!.job).toMatchObject({ attemptsMade: 1, failedReason: 'receiver answered HTTP 500' });
    // The retry scheduled before the kill, with its delay, is the one the new worker ran.
    const retries = await jobs2.retries(eventId);
    expect(retries).toHaveLength(1);
    expect(retries[0]!.delay).toBeGreaterThanOrEqual(jitterRange(1, 1500)[0]);
    expect(retries[0]!.delay).toBeLessThanOrEqual(jitterRange(1, 1500)[1]);
    expect(rx.deliveries[1]!.job.processedOn).toBeGreaterThanOrEqual(retries[0]!.due);
    expect(JSON.parse(rx.deliveries[1]!.body).status).toBe('succeeded');
  }, 90_000);
});

describe('outbound URL policy at create time', () => {
  let strict: Harness;
  beforeAll(async () => {
    strict = await startHarness({ worker: false, env: { ALLOW_PRIVATE_URLS: 'false' } });
  });
  afterAll(() => strict?.close());

  it.each([
    // The message says what was refused, never what the name resolved to.
    ['webhook_url on loopback', { webhook_url: 'http://127.0.0.1:9999/hook' }, "webhook_url: the URL's host is not a public address"],
    ['webhook_url on the metadata address', { webhook_url: 'http://169.254.169.254/latest' }, "webhook_url: the URL's host is not a public address"],
    ['webhook_url on the metadata address, IPv4-mapped', { webhook_url: 'http://[::ffff:a9fe:a9fe]/latest' }, "webhook_url: the URL's host is not a public address"],
    ['webhook_url on loopback, 6to4', { webhook_url: 'http://[2002:7f00:1::]/x' }, "webhook_url: the URL's host is not a public address"],
    ['webhook_url named localhost', { webhook_url: 'http://localhost:8080/x' }, "webhook_url: the URL's host is not a public address"],
    ['webhook_url on private IPv6', { webhook_url: 'http://[fd00::1]/x' }, "webhook_url: the URL's host is not a public address"],
    ['input on a private network', { input: { image: 'http://10.0.0.5/a.png' } }, "input.image: the URL's host is not a public address"],
    ['input on loopback, IPv4-mapped', { input: { image: 'http://[::ffff:127.0.0.1]/a.png' } }, "input.image: the URL's host is not a public address"],
  ])('refuses %s with 422 url_not_allowed, charging nothing', async (_n, body, message) => {
    const u = await strict.user(5);
    const r = await strict.call('POST', '/api/tasks/v1/create', {
      token: u.token,
      body: { version: FACE_VERSION, input: { image: 'http://8.8.8.8/a.png' }, ...body },
    });
    expect(r.status).toBe(422);
    expect(r.json.result.error).toBe('url_not_allowed');
    expect(r.json.message.en).toBe(message);
    expect(await strict.services.accounts.balance(u.userId)).toBe(5);
  });

  it('accepts public targets', async () => {
    const u = await strict.user(5);
    const r = await strict.call('POST', '/api/tasks/v1/create', {
      token: u.token,
      body: { version: FACE_VERSION, input: { image: 'http://8.8.8.8/a.png' }, webhook_url: 'https://1.1.1.1/hook' },
    });
    expect(r.status).toBe(200);
  });
});
