// Retention with short windows (files gone, URLs 410/404, record fields cleared, status and
// timings kept, record expiry), sweepers in parallel, and the task list.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/domain/logger.ts';
import { RetentionSweeper } from '../../src/queue/retention-sweeper.ts';
import { taskOutputKey } from '../../src/domain/blob-keys.ts';
import type { VersionId } from '../../src/domain/version-id.ts';
import { Accounts } from '../../src/store/accounts.ts';
import { LocalBlobStore } from '../../src/store/blob-store.ts';
import { keyspace } from '../../src/store/redis.ts';
import { Schedule } from '../../src/store/schedules.ts';
import { TaskStore } from '../../src/store/task-store.ts';
import { FACE_VERSION, startHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

describe('retention', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { TASK_RETENTION_MS: '600', SWEEP_INTERVAL_MS: '100', TASK_RECORD_TTL_DAYS: '1' } });
  });
  afterAll(() => h?.close());

  it('deletes inputs, outputs and logs after the window; keeps status and timings; URLs answer 410', async () => {
    const { token } = await h.user(10);
    const other = await h.user(10);
    const id = await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') });
    const done = await h.waitForTask(token, id);
    expect(done.status).toBe('succeeded');
    const dir = path.join(h.config.blobDir, 'tasks', id);
    expect(fs.readdirSync(dir).sort()).toEqual(['faces.json', 'preview.jpg']);
    expect((await h.call('GET', done.output[0], { token })).status).toBe(200);

    const purged = await h.waitForTask(token, id, (t) => t.output === null, 10_000);
    expect(fs.existsSync(dir)).toBe(false);
    expect(purged).toMatchObject({
      status: 'succeeded',
      output: null,
      logs: null,
      error: null,
      total_time: done.total_time,
      predict_time: done.predict_time,
      create_at: done.create_at,
      completed_at: done.completed_at,
    });
    const record = await h.services.tasks.get(id);
    expect(record!.input).toEqual({});
    for (const url of done.output) {
      const owner = await h.call('GET', url, { token });
      expect(owner.status).toBe(410);
      expect(owner.json.result.error).toBe('file_expired');
      expect((await h.call('GET', url, { token: other.token })).status).toBe(404);
    }
    // The record itself expires after TASK_RECORD_TTL_DAYS (1 day here).
    const ttl = await h.services.redis.pttl(`${h.config.redisKeyPrefix}:task:${id}`);
    expect(ttl).toBeGreaterThan(86_400_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000);
  });

  it('a failed task loses its logs on the same schedule', async () => {
    const { token } = await h.user(10);
    const id = await h.createTask(token, { image: h.fixtures.url('/text/x.jpg') });
    const t = await h.waitForTask(token, id);
    expect(t.status).toBe('failed');
    expect(t.logs).not.toBeNull();
    const purged = await h.waitForTask(token, id, (x) => x.logs === null, 10_000);
    expect(purged.error).toBe(t.error);
  });

  it('two sweepers sharing the schedule purge each task once and miss none', async () => {
    // Real stores on a key prefix and blob folder of their own, which no background loop touches:
    // only the two sweepers below work on these 250 tasks.
    const keys = keyspace(`${h.config.redisKeyPrefix}:sweep`);
    const tasks = new TaskStore(h.services.redis, keys, { retentionMs: 1_000, recordTtlMs: 86_400_000 });
    const accounts = new Accounts(h.services.redis, keys);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-sweep-'));
    const blobs = new LocalBlobStore(dir);
    try {
      const { userId } = await accounts.createKey();
      await accounts.addCredits(userId, 250, 'test');
      const ids = Array.from({ length: 250 }, () => randomBytes(16).toString('hex'));
      for (const id of ids) {
        const file = taskOutputKey(id, 'faces.json');
        await tasks.create({ taskId: id, userId, version: FACE_VERSION as VersionId, pipeline: 'face-detection', input: { image: 'http://x/y.png' }, webhookUrl: null, cost: 1 });
        await tasks.claim(id, userId);
        await blobs.put(file, Buffer.from('{"faces":[]}'));
        await tasks.succeed(id, { outputKeys: [file], logs: 'decode: 1.0 ms', predictTimeS: 0.01 }, userId);
      }
      // The terminal-status script scheduled each task's deletion.
      const schedule = new Schedule(h.services.redis, keys.retention());
      expect(await schedule.size()).toBe(250);

      const a = new RetentionSweeper({ schedule, tasks, blobs, log: silentLogger });
      const b = new RetentionSweeper({ schedule, tasks, blobs, log: silentLogger });
      const later = Date.now() + 60_000;
      const [na, nb] = await Promise.all([a.sweep(later), b.sweep(later)]);
      // 250 purges between them and every task purged: none twice, none missed.
      expect(na + nb).toBe(250);
      expect(await schedule.size()).toBe(0);
      for (const id of ids) {
        const r = (await tasks.get(id))!;
        expect(r).toMatchObject({ status: 'succeeded', input: {}, outputKeys: null, logs: null });
        expect(r.purgedMs).not.toBeNull();
        expect(await blobs.open(taskOutputKey(id, 'faces.json'))).toBeNull();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a sweeper that dies mid-way leaves its claimed items to the next one after the lease', async () => {
    const schedule = new Schedule(h.services.redis, `${h.config.redisKeyPrefix}:retention-lease`);
    await h.services.redis.zadd(schedule.key, 0, 'task:x');
    expect(await schedule.claimDue(1_000, 60_000, 10)).toEqual(['task:x']); // then "dies"
    expect(await schedule.claimDue(2_000, 60_000, 10)).toEqual([]); // leased: nobody else takes it
    expect(await schedule.claimDue(61_001, 60_000, 10)).toEqual(['task:x']); // lease over
  });
});

describe('record expiry', () => {
  let h: Harness;
  beforeAll(async () => {
    // 0.00003 days = 2.6 s.
    h = await startHarness({ env: { TASK_RECORD_TTL_DAYS: '0.00003' } });
  });
  afterAll(() => h?.close());

  it('a task record expires after the configured days; get answers 404 and the list drops it', async () => {
    const { token } = await h.user(10);
    const id = await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') });
    await h.waitForTask(token, id);
    // The ended record carries the configured expiry (2.6 s) ...
    const ttl = await h.services.redis.pttl(`${h.config.redisKeyPrefix}:task:${id}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(0.00003 * 86_400_000);
    // ... and once Redis has expired it, the API no longer knows the task.
    await waitFor(async () => !(await h.services.redis.exists(`${h.config.redisKeyPrefix}:task:${id}`)), { what: 'the record to expire' });
    expect((await h.call('GET', `/api/tasks/v1/get/${id}`, { token })).status).toBe(404);
    expect((await h.call('GET', '/api/tasks/v1/list', { token })).json.result.tasks).toEqual([]);
  });
});

describe('GET /api/tasks/v1/list', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ worker: false });
  });
  afterAll(() => h?.close());

  it('pages through the caller\'s tasks newest first, never showing another user\'s', async () => {
    const a = await h.user(100);
    const b = await h.user(100);
    const mine: string[] = [];
    for (let i = 0; i < 7; i++) {
      mine.push(await h.createTask(a.token, { image: h.fixtures.url('/files/astronaut.png') }));
      if (i === 3) await h.createTask(b.token, { image: h.fixtures.url('/files/astronaut.png') });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    do {
      const q: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
      const r = await h.call('GET', `/api/tasks/v1/list${q}`, { token: a.token });
      expect(r.status).toBe(200);
      pages.push(r.json.result.tasks.length);
      for (const t of r.json.result.tasks) {
        expect(t.user_id).toBe(a.userId);
        seen.push(t.task_id);
      }
      cursor = r.json.result.next_cursor;
    } while (cursor);
    expect(pages).toEqual([3, 3, 1]);
    // Newest first: created_ms order, ties by id; compare with the store's own order.
    const created = await Promise.all(mine.map(async (id) => [(await h.services.tasks.get(id))!.createdMs, id] as const));
    const expected = [...created].sort((x, y) => y[0] - x[0] || (y[1] > x[1] ? 1 : -1)).map(([, id]) => id);
    expect(seen).toEqual(expected);
  });

  it('refuses a forged cursor and a bad limit with 400', async () => {
    const a = await h.user(1);
    expect((await h.call('GET', '/api/tasks/v1/list?cursor=bm9wZQ', { token: a.token })).status).toBe(400);
    expect((await h.call('GET', '/api/tasks/v1/list?limit=1000', { token: a.token })).status).toBe(400);
    expect((await h.call('GET', '/api/tasks/v1/list')).status).toBe(401);
  });
});
