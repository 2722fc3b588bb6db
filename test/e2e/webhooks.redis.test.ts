// Task webhooks against a real local HTTP receiver: retries with backoff, one event id,
// signatures that verify, the window, timeouts, redirects, a worker restart mid-cycle, and the
// SSRF policy at create time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/domain/webhooks.ts';
import { FACE_VERSION, startHarness, type Harness } from '../helpers/harness.ts';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process.ts';

interface Delivery {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Reply = { status: number; delayMs?: number; location?: string };

/** A webhook receiver answering the n-th request (0-based) with reply(n). */
async function startReceiver(reply: (n: number) => Reply) {
  const deliveries: Delivery[] = [];
  let waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = deliveries.length;
      deliveries.push({ at: Date.now(), headers: req.headers, body: Buffer.concat(chunks).toString() });
      for (const w of waiters) w();
      waiters = [];
      const r = reply(n);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(r.status, r.location ? { location: r.location } : {}).end('ok');
      }, r.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    deliveries,
    /** Resolves once `count` deliveries have arrived. */
    async waitFor(count: number, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (deliveries.length < count) {
        if (Date.now() > deadline) throw new Error(`only ${deliveries.length} of ${count} deliveries arrived`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const WEBHOOK_ENV = {
  WEBHOOK_WINDOW_MS: '3000',
  WEBHOOK_BASE_DELAY_MS: '200',
  WEBHOOK_TIMEOUT_MS: '500',
  WEBHOOK_MIN_ATTEMPTS: '3',
};

let h: Harness;
let token: string;
let userId: number;
const cleanups: Array<() => Promise<unknown> | unknown> = [];

beforeAll(async () => {
  h = await startHarness({ env: WEBHOOK_ENV });
  ({ token, userId } = await h.user(100));
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
afterAll(() => h?.close());

async function taskWithHook(url: string, image = '/files/astronaut.png') {
  const id = await h.createTask(token, { image: h.fixtures.url(image) }, { webhook_url: url });
  const t = await h.waitForTask(token, id);
  const completedMs = (await h.services.tasks.get(id))!.completedMs!;
  return { id, t, completedMs };
}

describe('task webhooks', () => {
  it('a receiver that fails twice gets three deliveries: one webhook-id, growing gaps, verifiable signatures, the task record', async () => {
    const rx = await startReceiver((n) => ({ status: n === 0 ? 500 : n === 1 ? 503 : 200 }));
    cleanups.push(rx.close);
    const { id, t, completedMs } = await taskWithHook(rx.url);
    await rx.waitFor(3);
    await new Promise((r) => setTimeout(r, 800)); // nothing more after the 2xx
    expect(rx.deliveries).toHaveLength(3);

    const ids = new Set(rx.deliveries.map((d) => d.headers['webhook-id']));
    expect([...ids]).toEqual([`evt_${id}_succeeded`]);
    const [a, b, c] = rx.deliveries.map((d) => d.at) as [number, number, number];
    expect(a - completedMs).toBeLessThan(1000);
    const g1 = b - a;
    const g2 = c - b;
    expect(g1).toBeGreaterThanOrEqual(90); // base 200 ms: first gap in [100, 200]
    expect(g2).toBeGreaterThan(g1 - 20); // second in [200, 400]
    expect(g2).toBeGreaterThanOrEqual(180);

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
    const rx = await startReceiver(() => ({ status: 204 }));
    cleanups.push(rx.close);
    const { id } = await taskWithHook(rx.url, '/text/x.jpg');
    await rx.waitFor(1);
    expect(rx.deliveries[0]!.headers['webhook-id']).toBe(`evt_${id}_failed`);
    expect(JSON.parse(rx.deliveries[0]!.body)).toMatchObject({ status: 'failed', error: expect.stringMatching(/^INPUT_NOT_IMAGE/) });
  });

  it('a receiver down for good gets its last attempt within the window, and nothing after', async () => {
    const rx = await startReceiver(() => ({ status: 500 }));
    cleanups.push(rx.close);
    const { completedMs } = await taskWithHook(rx.url);
    await new Promise((r) => setTimeout(r, Math.max(0, completedMs + 3000 + 1500 - Date.now())));
    const times = rx.deliveries.map((d) => d.at - completedMs);
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times[times.length - 1]!).toBeLessThanOrEqual(3000 + 250);
    for (let i = 2; i < times.length - 1; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThan(0);
    const count = rx.deliveries.length;
    await new Promise((r) => setTimeout(r, 700));
    expect(rx.deliveries.length).toBe(count);
  });

  it('a slow receiver hits the per-attempt timeout and is retried', async () => {
    const rx = await startReceiver((n) => ({ status: 200, delayMs: n === 0 ? 2_000 : 0 }));
    cleanups.push(rx.close);
    await taskWithHook(rx.url);
    await rx.waitFor(2);
    const [a, b] = rx.deliveries.map((d) => d.at) as [number, number];
    expect(b - a).toBeGreaterThanOrEqual(500); // the 500 ms timeout, then the backoff
    expect(b - a).toBeLessThan(2_000); // not waiting for the slow answer
    expect(rx.deliveries[1]!.headers['webhook-id']).toBe(rx.deliveries[0]!.headers['webhook-id']);
  });

  it('a redirect is a failure: not followed, retried', async () => {
    const target = await startReceiver(() => ({ status: 200 }));
    const rx = await startReceiver((n) => (n === 0 ? { status: 302, location: target.url } : { status: 200 }));
    cleanups.push(rx.close, target.close);
    await taskWithHook(rx.url);
    await rx.waitFor(2);
    expect(target.deliveries).toHaveLength(0);
  });
});

describe('webhooks across a worker restart', () => {
  let h2: Harness;
  const children: WorkerProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await h2?.close();
  });

  it('the worker is killed in the middle of a retry cycle; a new worker delivers the event', async () => {
    h2 = await startHarness({ worker: false, env: { ...WEBHOOK_ENV, WEBHOOK_WINDOW_MS: '8000', WEBHOOK_BASE_DELAY_MS: '1500' } });
    const u = await h2.user(10);
    const rx = await startReceiver((n) => ({ status: n === 0 ? 500 : 200 }));
    cleanups.push(rx.close);
    const spawn = async () => {
      const c = await spawnWorkerProcess({ ...h2.env, JOB_LOCK_MS: '1000', STALLED_INTERVAL_MS: '250' });
      children.push(c);
      return c;
    };
    const a = await spawn();
    const id = await h2.createTask(u.token, { image: h2.fixtures.url('/files/astronaut.png') }, { webhook_url: rx.url });
    await rx.waitFor(1); // first attempt failed with 500; the retry waits in Redis
    await new Promise((r) => setTimeout(r, 200));
    a.kill('SIGKILL');
    await a.exited;
    await spawn();
    await rx.waitFor(2, 20_000);
    expect(rx.deliveries[1]!.headers['webhook-id']).toBe(`evt_${id}_succeeded`);
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
    ['webhook_url on loopback', { webhook_url: 'http://127.0.0.1:9999/hook' }, /webhook_url: 127\.0\.0\.1 resolves to 127\.0\.0\.1, a non-public address/],
    ['webhook_url on the metadata address', { webhook_url: 'http://169.254.169.254/latest' }, /webhook_url: .*169\.254\.169\.254/],
    ['webhook_url named localhost', { webhook_url: 'http://localhost:8080/x' }, /webhook_url: localhost resolves to/],
    ['webhook_url on private IPv6', { webhook_url: 'http://[fd00::1]/x' }, /webhook_url: fd00::1/],
    ['input on a private network', { input: { image: 'http://10.0.0.5/a.png' } }, /input\.image: 10\.0\.0\.5/],
  ])('refuses %s with 422 url_not_allowed, charging nothing', async (_n, body, message) => {
    const u = await strict.user(5);
    const r = await strict.call('POST', '/api/tasks/v1/create', {
      token: u.token,
      body: { version: FACE_VERSION, input: { image: 'http://8.8.8.8/a.png' }, ...body },
    });
    expect(r.status).toBe(422);
    expect(r.json.result.error).toBe('url_not_allowed');
    expect(r.json.message.en).toMatch(message);
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
