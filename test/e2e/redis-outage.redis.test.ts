// A Redis outage, end to end: an API process and a worker process (`npm run api` / `npm run worker`)
// on a private redis-server (AOF, so its data survives) that the test stops and starts again on the
// same port. While it is down, creates answer 503 with Retry-After (task API: store_unavailable; job
// APIs: 300101 with HTTP 503), readiness answers 503 within its bound, and no process prints
// ioredis' "Unhandled error event" traces; each logs one line when Redis is lost and one when it is
// back. After the restart, tasks run again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startEmbeddedRedis, type EmbeddedRedis } from '../../src/main/embedded-redis.ts';
import { Accounts } from '../../src/store/accounts.ts';
import { connectRedis, keyspace, type RedisClient } from '../../src/store/redis.ts';
import { FACE_VERSION } from '../helpers/harness.ts';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { spawnApiProcess, spawnWorkerProcess, type ApiProcess, type WorkerProcess } from '../helpers/worker-process.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-outage-'));
let redis: EmbeddedRedis;
let redisPort: number;
let client: RedisClient;
let fixtures: FixtureServer;
let api: ApiProcess;
let worker: WorkerProcess;
let baseUrl: string;
let token: string;

beforeAll(async () => {
  redisPort = await freePort();
  redis = await startEmbeddedRedis(path.join(dir, 'redis'), { port: redisPort });
  fixtures = await startFixtureServer();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  const env = {
    REDIS_URL: redis.url,
    REDIS_PREFIX: 'outage',
    DATA_DIR: path.join(dir, 'data'),
    MODELS_DIR: path.resolve('models'),
    PORT: String(port),
    HOST: '127.0.0.1',
    ORT_INTRA_OP_THREADS: '1',
    ALLOW_PRIVATE_URLS: 'true',
    SWEEP_INTERVAL_MS: '200',
    WARM_VERSIONS: 'face-detection-blazeface',
  };
  [api, worker] = await Promise.all([spawnApiProcess(env, baseUrl, 60_000), spawnWorkerProcess(env, 60_000)]);
  client = connectRedis(redis.url);
  const accounts = new Accounts(client, keyspace('{outage}'));
  const key = await accounts.createKey();
  await accounts.addCredits(key.userId, 100, 'test');
  token = key.apiKey;
}, 120_000);

afterAll(async () => {
  for (const p of [api, worker]) if (p && p.exitCode === null) p.kill('SIGKILL');
  client?.disconnect();
  await fixtures?.close();
  await redis?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, p: string, body?: unknown) {
  const started = performance.now();
  const res = await fetch(baseUrl + p, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json, headers: res.headers, ms: performance.now() - started };
}

const create = () => call('POST', '/api/tasks/v1/create', { version: FACE_VERSION, input: { image: fixtures.url('/files/astronaut.png') } });

async function runsATask(): Promise<void> {
  const c = await create();
  expect(c.status, JSON.stringify(c.json)).toBe(200);
  const id = c.json.result.task_id as string;
  await waitFor(
    async () => {
      const t = await call('GET', `/api/tasks/v1/get/${id}`);
      return t.status === 200 && ['succeeded', 'failed', 'canceled'].includes(t.json.result.status) && t.json.result;
    },
    { timeoutMs: 30_000, what: `task ${id} to end` },
  ).then((t) => expect(t.status).toBe('succeeded'));
}

const lines = (p: { output: { stdout: string } }, msg: string) => p.output.stdout.split('\n').filter((l) => l.includes(`"msg":"${msg}`)).length;

describe('a Redis outage', { timeout: 120_000 }, () => {
  it('creates answer 503 with Retry-After, readiness answers 503 quickly, logs stay quiet, service resumes', async () => {
    await waitFor(async () => (await call('GET', '/health/ready')).status === 200, { timeoutMs: 30_000, what: 'readiness' });
    await runsATask();

    await redis.stop();
    // Some calls still find the connection open for a moment after the server exits; the outage
    // answers below are what every call gets once it is noticed.
    await waitFor(async () => (await call('GET', '/health/ready')).status === 503, { what: 'readiness to notice the outage' });

    const c = await create();
    expect(c.status).toBe(503);
    expect(c.headers.get('retry-after')).toBe('2');
    expect(c.json).toMatchObject({ code: 503, result: { error: 'store_unavailable' } });
    expect(c.ms).toBeLessThan(1_500);

    const job = await call('GET', `/api/service/v1/ai-hairstyle/get-job/${'0'.repeat(32)}`);
    expect(job.status).toBe(503);
    expect(job.headers.get('retry-after')).toBe('2');
    expect(job.json).toMatchObject({ code: 300101, result: {} });
    expect(job.json.message.en).toMatch(/^System error: /);

    // Readiness answers within its bound on every try, reconnect attempts going on meanwhile.
    const readyMs: number[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await call('GET', '/health/ready');
      expect(r.status).toBe(503);
      expect(r.json).toMatchObject({ status: 'not_ready', redis: 'down' });
      readyMs.push(r.ms);
      await new Promise((res) => setTimeout(res, 400));
    }
    console.log(`readiness during the outage answered 503 in ${readyMs.map((m) => m.toFixed(0)).join(', ')} ms`);
    expect(Math.max(...readyMs)).toBeLessThan(1_500);

    redis = await startEmbeddedRedis(path.join(dir, 'redis'), { port: redisPort });
    await waitFor(async () => (await call('GET', '/health/ready')).status === 200, { timeoutMs: 30_000, what: 'readiness after the restart' });
    // The key and credits survived (AOF); the worker takes tasks again.
    await runsATask();

    // A Redis that accepts connections but answers nothing (stopped with SIGSTOP): readiness still
    // answers 503 within its bound instead of waiting on the open connection.
    const pid = Number(/process_id:(\d+)/.exec(await client.info('server'))![1]);
    process.kill(pid, 'SIGSTOP');
    let hung;
    try {
      hung = await call('GET', '/health/ready');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    console.log(`readiness with a Redis that answers nothing answered ${hung.status} in ${hung.ms.toFixed(0)} ms`);
    expect(hung.status).toBe(503);
    expect(hung.ms).toBeLessThan(1_500);
    await waitFor(async () => (await call('GET', '/health/ready')).status === 200, { what: 'readiness after SIGCONT' });

    for (const p of [api, worker]) {
      expect(p.output.stderr).not.toMatch(/Unhandled error event/);
      expect(p.output.stderr).not.toMatch(/ECONNREFUSED/);
      expect(lines(p, 'redis connection lost')).toBe(1);
      expect(lines(p, 'redis reconnected')).toBe(1);
      // Nothing else warned: no line per failed pass, heartbeat or reconnect attempt.
      const warnings = p.output.stdout.split('\n').filter((l) => /"level":(40|50|60)/.test(l));
      expect(warnings.filter((l) => !l.includes('"msg":"redis connection lost'))).toEqual([]);
    }
  });
});
