// Faults under load, bounded: worker processes SIGKILLed again and again while tasks stream in, and
// the Redis server itself restarted (a private redis-server with AOF on a free loopback port, so its
// data survives). Afterwards: 0 lost (every accepted task ended), 0 stuck (none left starting or
// processing, the active-task index empty), credits exact (each user's balance is what it was
// granted minus the cost of its succeeded tasks, and each ended-unsuccessful task was refunded
// exactly once).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTerminal, type TaskRecord } from '../../src/domain/task.ts';
import { freePort, startEmbeddedRedis, type EmbeddedRedis } from '../../src/main/embedded-redis.ts';
import { FACE_VERSION, startHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process.ts';

const TASKS = 120;
const CREATE_EVERY_MS = 180;
const KILL_EVERY_MS = 2_500;
const WORKERS = 2;
const USERS = 3;
const GRANT = 60;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-faults-'));
let redis: EmbeddedRedis;
let redisPort: number;
let h: Harness;
const workers = new Set<WorkerProcess>();
const spawning = new Set<Promise<unknown>>();

beforeAll(async () => {
  redisPort = await freePort();
  redis = await startEmbeddedRedis(path.join(dir, 'redis'), { port: redisPort });
  h = await startHarness({
    worker: false,
    env: {
      REDIS_URL: redis.url,
      // A dead worker's task is re-queued within about a second; the lost-task sweep looks at
      // each task every 2 s.
      JOB_LOCK_MS: '1000',
      STALLED_INTERVAL_MS: '250',
      LOST_TASK_CHECK_MS: '2000',
    },
  });
}, 60_000);

afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await Promise.allSettled(spawning);
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await h?.close();
  await redis?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts a worker process in the background; it joins `workers` once ready. */
function addWorker(): void {
  const p = spawnWorkerProcess(h.env, 60_000).then(
    (w) => {
      workers.add(w);
      void w.exited.then(() => workers.delete(w));
    },
    (e: Error) => console.warn(`a worker did not start: ${e.message.slice(0, 300)}`),
  );
  spawning.add(p);
  void p.finally(() => spawning.delete(p));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('faults under load', { timeout: 240_000 }, () => {
  it('SIGKILLed workers and a Redis restart lose no task, leave none stuck, and keep credits exact', async () => {
    const users = await Promise.all(Array.from({ length: USERS }, () => h.user(GRANT)));
    for (let i = 0; i < WORKERS; i++) addWorker();
    await waitFor(() => workers.size === WORKERS, { timeoutMs: 60_000, what: 'the first workers' });

    const created: Array<{ id: string; userId: number }> = [];
    const refused = new Map<number, number>();
    let kills = 0;
    let restarts = 0;
    let loadDone = false;

    const load = (async () => {
      for (let i = 0; i < TASKS; i++) {
        const u = users[i % USERS]!;
        const r = await h.call('POST', '/api/tasks/v1/create', { token: u.token, body: { version: FACE_VERSION, input: { image: h.fixtures.url('/files/astronaut.png') } } });
        if (r.status === 200) created.push({ id: r.json.result.task_id, userId: u.userId });
        else {
          refused.set(r.status, (refused.get(r.status) ?? 0) + 1);
          // Only the outage may refuse a create, and it says so.
          expect(r.status, JSON.stringify(r.json)).toBe(503);
          expect(r.headers.get('retry-after')).toBe('2');
        }
        await sleep(CREATE_EVERY_MS);
      }
      loadDone = true;
    })();

    const chaos = (async () => {
      let round = 0;
      while (!loadDone) {
        await sleep(KILL_EVERY_MS);
        round++;
        if (round === 4) {
          // Redis goes away for a moment, mid-load, and comes back with its data (AOF).
          await redis.stop();
          await sleep(1_500);
          redis = await startEmbeddedRedis(path.join(dir, 'redis'), { port: redisPort });
          restarts++;
          continue;
        }
        const victim = [...workers][Math.floor(Math.random() * workers.size)];
        if (!victim) continue;
        victim.kill('SIGKILL');
        kills++;
        addWorker();
      }
    })();

    await Promise.all([load, chaos]);
    // Workers started during the chaos finish starting; at least one is there to drain the queue.
    await Promise.allSettled(spawning);
    if (workers.size === 0) addWorker();

    // The owners' task lists are the truth: every accepted task is there (0 lost). A create refused
    // because the link dropped after Redis ran it may be there too (its answer was lost with the
    // connection); it counts like any other task, so at most as many extra as refusals.
    const owner = new Map<string, number>();
    for (const u of users) for (const { taskId } of await h.services.tasks.listIds(u.userId, 1_000)) owner.set(taskId, u.userId);
    expect(created.filter(({ id }) => !owner.has(id))).toEqual([]);
    expect(owner.size - created.length).toBeLessThanOrEqual(refused.get(503) ?? 0);

    const records = new Map<string, TaskRecord>();
    await waitFor(
      async () => {
        for (const id of owner.keys()) {
          if (records.has(id)) continue;
          const r = await h.services.tasks.get(id);
          if (r && isTerminal(r.status)) records.set(id, r);
        }
        return records.size === owner.size;
      },
      {
        timeoutMs: 90_000,
        what: 'every task to end',
        describe: async () => {
          const open = [...owner.keys()].filter((id) => !records.has(id)).slice(0, 5);
          return Promise.all(open.map(async (id) => ({ id, status: await h.services.tasks.status(id) })));
        },
      },
    );
    // 0 stuck: nothing is left in the active-task index either.
    expect(await h.services.redis.zcard(`${h.config.redisKeyPrefix}:active-tasks`)).toBe(0);

    // Credits exact: grant minus the cost of what succeeded; every other end refunded once.
    for (const u of users) {
      const mine = [...records.values()].filter((r) => r.userId === u.userId);
      const spent = mine.filter((r) => r.status === 'succeeded').reduce((s, r) => s + r.cost, 0);
      expect(await h.services.accounts.balance(u.userId)).toBe(GRANT - spent);
      const ledger = await h.services.accounts.ledger(u.userId, 10_000);
      for (const r of mine) {
        const refunds = ledger.filter((e) => e.ref === r.taskId && e.delta > 0).length;
        expect(refunds, `refunds of ${r.taskId} (${r.status})`).toBe(r.status === 'succeeded' ? 0 : 1);
      }
    }

    const byOutcome = new Map<string, number>();
    for (const r of records.values()) {
      const k = r.status === 'failed' ? `failed ${r.error?.split(':')[0]}` : r.status;
      byOutcome.set(k, (byOutcome.get(k) ?? 0) + 1);
    }
    console.log(
      `faults: ${created.length} tasks accepted, ${owner.size} recorded (${[...refused].map(([s, n]) => `${n} refused with ${s}`).join(', ') || 'none refused'}), ` +
        `${kills} worker SIGKILLs, ${restarts} Redis restart(s); ended: ${[...byOutcome].map(([k, n]) => `${n} ${k}`).join(', ')}; ` +
        `0 lost, 0 stuck, credits exact for ${USERS} users`,
    );
    expect(kills).toBeGreaterThanOrEqual(5);
    expect(restarts).toBe(1);
    // Most tasks survive the faults; the rest end honestly (failed and refunded), never stuck.
    expect(byOutcome.get('succeeded') ?? 0).toBeGreaterThan(created.length / 2);
  });
});
