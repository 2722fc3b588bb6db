// Worker processes (`npm run worker`'s entry point) killed and stopped mid-task: no task is lost,
// none stays processing forever.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startEmbeddedRedis, type EmbeddedRedis } from '../../src/main/embedded-redis.ts';
import { startHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process.ts';

let h: Harness;
let token: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  h = await startHarness({ worker: false });
  ({ token } = await h.user(100));
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});
afterAll(() => h?.close());

async function spawnWorker(env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = await spawnWorkerProcess({ ...h.env, JOB_LOCK_MS: '1000', STALLED_INTERVAL_MS: '250', ...env });
  children.push(child);
  return child;
}

// Worker processes start with only the face-detection model warmed (the harness's WARM_VERSIONS),
// and each test may spawn two of them on a busy machine: generous timeouts.
describe('worker processes', { timeout: 90_000 }, () => {
  it('a worker SIGKILLed mid-task loses nothing: a second worker finishes the task', async () => {
    const a = await spawnWorker();
    const firstDownload = h.fixtures.nextHold();
    const id = await h.createTask(token, { image: h.fixtures.url('/hold/astronaut.png') });
    await firstDownload;
    await h.waitForTask(token, id, (t) => t.status === 'processing');
    a.kill('SIGKILL');
    await a.exited;
    h.fixtures.release(); // A's download answers into a dead socket

    const secondDownload = h.fixtures.nextHold();
    await spawnWorker();
    await secondDownload; // B re-took the task once A's lock lapsed
    h.fixtures.release();
    const t = await h.waitForTask(token, id);
    expect(t.status).toBe('succeeded');
    expect(h.fixtures.hits.get('/hold/astronaut.png')).toBe(2);
    const faces = await h.call('GET', t.output[0], { token });
    expect(faces.json.faces).toHaveLength(1);
  });

  it('SIGTERM drains: the in-flight task finishes, no new task is taken, the process exits 0', async () => {
    const a = await spawnWorker({ DRAIN_TIMEOUT_MS: '20000' });
    const held = h.fixtures.nextHold();
    const first = await h.createTask(token, { image: h.fixtures.url('/hold/astronaut.png') });
    await held;
    const registered = () => h.services.redis.zscore(`${h.config.redisKeyPrefix}:workers`, a.workerId);
    expect(await registered()).not.toBeNull();
    a.kill('SIGTERM');
    // Draining starts by leaving the worker registry, then closing the BullMQ worker: from then on
    // it takes no new task.
    await waitFor(async () => (await registered()) === null, { what: 'the worker to start draining' });
    const second = await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') });
    h.fixtures.release();
    expect(await a.exited).toBe(0);
    expect((await h.waitForTask(token, first)).status).toBe('succeeded');
    const waiting = await h.call('GET', `/api/tasks/v1/get/${second}`, { token });
    expect(waiting.json.result.status).toBe('starting');
    // A new worker picks the waiting one up.
    await spawnWorker();
    expect((await h.waitForTask(token, second)).status).toBe('succeeded');
  });

  it('SIGTERM past the drain bound hands the task back; another worker finishes it', async () => {
    const a = await spawnWorker({ DRAIN_TIMEOUT_MS: '300' });
    const held = h.fixtures.nextHold();
    const id = await h.createTask(token, { image: h.fixtures.url('/hold/astronaut.png') });
    await held;
    a.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    h.fixtures.release();
    const again = h.fixtures.nextHold();
    await spawnWorker();
    await again;
    h.fixtures.release();
    expect((await h.waitForTask(token, id)).status).toBe('succeeded');
  });

  it('a task that keeps losing its worker is failed, not left processing', async () => {
    // MAX_STALLED=0: the first lost worker is one too many.
    const a = await spawnWorker({ MAX_STALLED: '0' });
    const held = h.fixtures.nextHold();
    const id = await h.createTask(token, { image: h.fixtures.url('/hold/astronaut.png') });
    await held;
    a.kill('SIGKILL');
    await a.exited;
    h.fixtures.release();
    await spawnWorker({ MAX_STALLED: '0' });
    const t = await h.waitForTask(token, id);
    expect(t.status).toBe('failed');
    expect(t.error).toMatch(/^WORKER_LOST: job stalled more than allowable limit/);
  });

  it('a worker started while Redis is away waits for it and starts once it is back; past REDIS_START_WAIT_MS it exits 1', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-late-redis-'));
    const port = await freePort();
    let redis: EmbeddedRedis | undefined;
    try {
      let saidWaiting!: () => void;
      const waitingLine = new Promise<void>((r) => (saidWaiting = r));
      const starting = spawnWorkerProcess({ ...h.env, REDIS_URL: `redis://127.0.0.1:${port}` }, 90_000, (line) => {
        if (line.includes('redis unavailable at start: waiting for it')) saidWaiting();
      });
      // Nothing listens yet: the worker says it waits (not a line per retry), and does not exit.
      // Redis starts once it has said so (a fixed delay was too short for a worker starting on a
      // loaded 2-core machine: it had not tried Redis yet, so it never waited).
      const early = await Promise.race([starting.then(() => 'ready', (e: Error) => `failed: ${e.message}`), waitingLine.then(() => 'waiting')]);
      expect(early).toBe('waiting');
      redis = await startEmbeddedRedis(dir, { port });
      const w = await starting;
      children.push(w);
      const out = w.output.stdout;
      expect(out.split('\n').filter((l) => l.includes('redis unavailable at start: waiting for it'))).toHaveLength(1);
      expect(out).toContain('redis reachable: starting');
      expect(w.workerId).toMatch(/:/);
      w.kill('SIGTERM');
      expect(await w.exited).toBe(0);

      const gone = await freePort();
      await expect(spawnWorkerProcess({ ...h.env, REDIS_URL: `redis://127.0.0.1:${gone}`, REDIS_START_WAIT_MS: '1000' }, 30_000)).rejects.toThrow(/worker exited \(1\) before ready/);
    } finally {
      await redis?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
