// Task records, credits and keys against a real Redis: atomic transitions under concurrency,
// charges that never overdraw, refunds exactly once, keys stored only hashed.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Accounts, hashApiKey } from '../../src/store/accounts.ts';
import { connectRedis, deleteKeysWithPrefix, keyspace, type RedisClient } from '../../src/store/redis.ts';
import { TaskStore } from '../../src/store/task-store.ts';
import { idempotentTaskId } from '../../src/domain/idempotency.ts';
import type { VersionId } from '../../src/domain/version-id.ts';

const prefix = `t${randomBytes(5).toString('hex')}`;
const keys = keyspace(prefix);
let redis: RedisClient;
let tasks: TaskStore;
let accounts: Accounts;
const V = 'a'.repeat(64) as VersionId;
const newId = () => randomBytes(16).toString('hex');

beforeAll(() => {
  redis = connectRedis(inject('redisUrl'));
  tasks = new TaskStore(redis, keys, { retentionMs: 3_600_000, recordTtlMs: 7 * 86_400_000 });
  accounts = new Accounts(redis, keys);
});
afterAll(async () => {
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

async function newUser(credits: number) {
  const { userId } = await accounts.createKey();
  if (credits) await accounts.addCredits(userId, credits, 'test');
  return userId;
}

describe('task records', () => {
  it('create charges the cost and records it; the record starts as starting with Redis time', async () => {
    const user = await newUser(5);
    const id = newId();
    const before = Date.now();
    const created = await tasks.create({ taskId: id, userId: user, version: V, pipeline: 'face-detection', input: { image: 'http://x' }, webhookUrl: null, cost: 2 });
    if (!created.created) throw new Error('a create without an Idempotency-Key always creates');
    const { createdMs, balance } = created;
    expect(balance).toBe(3);
    expect(Math.abs(createdMs - before)).toBeLessThan(5_000);
    const r = (await tasks.get(id))!;
    expect(r).toMatchObject({ status: 'starting', userId: user, cost: 2, attempts: 0, input: { image: 'http://x' }, completedMs: null });
    const ledger = await accounts.ledger(user);
    expect(ledger[0]).toMatchObject({ delta: -2, balance: 3, reason: 'task', ref: id });
  });

  it('50 concurrent creates against a balance for 10 charge exactly 10 and never overdraw', async () => {
    const user = await newUser(10);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => tasks.create({ taskId: newId(), userId: user, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost: 1 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(refused).toHaveLength(40);
    expect(refused[0]!.reason.code).toBe('INSUFFICIENT_CREDITS');
    expect(await accounts.balance(user)).toBe(0);
    expect(await redis.zcard(keys.userTasks(user))).toBe(10);
  });

  it('enforces transitions; terminal states never change', async () => {
    const user = await newUser(1);
    const id = newId();
    await tasks.create({ taskId: id, userId: user, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost: 1 });
    expect((await tasks.succeed(id, { outputKeys: [], logs: '', predictTimeS: 0 })).result).toBe('conflict'); // starting -/-> succeeded
    expect(await tasks.claim(id)).toMatchObject({ result: 'ok', previous: 'starting' });
    expect(await tasks.claim(id)).toMatchObject({ result: 'ok', previous: 'processing' }); // re-claim after a lost worker
    expect((await tasks.get(id))!.attempts).toBe(2);
    expect((await tasks.succeed(id, { outputKeys: ['tasks/x/a.json'], logs: 'l', predictTimeS: 0.0123 })).result).toBe('ok');
    for (const attempt of [() => tasks.fail(id, 'x'), () => tasks.cancel(id), () => tasks.claim(id)]) {
      expect(await attempt()).toEqual({ result: 'conflict', current: 'succeeded' });
    }
    const r = (await tasks.get(id))!;
    expect(r).toMatchObject({ status: 'succeeded', outputKeys: ['tasks/x/a.json'], predictTimeS: 0.012 });
    expect(r.totalTimeS).toBeGreaterThanOrEqual(0);
    expect(r.completedMs).toBeGreaterThanOrEqual(r.createdMs);
    expect(await tasks.claim(newId())).toEqual({ result: 'missing' });
  });

  it('a succeed racing a cancel: exactly one wins, and the refund happens only if cancel won', async () => {
    for (let i = 0; i < 20; i++) {
      const user = await newUser(1);
      const id = newId();
      await tasks.create({ taskId: id, userId: user, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost: 1 });
      await tasks.claim(id);
      const [s, c] = await Promise.all([tasks.succeed(id, { outputKeys: [], logs: '', predictTimeS: 0 }), tasks.cancel(id)]);
      expect([s.result, c.result].sort()).toEqual(['conflict', 'ok']);
      const final = (await tasks.get(id))!.status;
      expect(final).toBe(s.result === 'ok' ? 'succeeded' : 'canceled');
      expect(await accounts.balance(user)).toBe(final === 'canceled' ? 1 : 0);
    }
  });

  it('refunds a failed task exactly once', async () => {
    const user = await newUser(3);
    const id = newId();
    await tasks.create({ taskId: id, userId: user, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost: 3 });
    await tasks.claim(id);
    const results = await Promise.all([tasks.fail(id, 'A: a'), tasks.fail(id, 'B: b'), tasks.cancel(id)]);
    expect(results.filter((r) => r.result === 'ok')).toHaveLength(1);
    expect(await accounts.balance(user)).toBe(3);
    const refunds = (await accounts.ledger(user)).filter((e) => e.reason.startsWith('refund'));
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ delta: 3, balance: 3, ref: id });
  });
});

describe('idempotency records', () => {
  const create = (user: number, keyHash: string, fingerprint: string) =>
    tasks.create({ taskId: newId(), userId: user, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost: 1, idempotency: { keyHash, fingerprint } });

  it('a key is one string with a lifetime; a repeat answers the first task, another fingerprint is refused', async () => {
    const user = await newUser(5);
    const first = await create(user, 'k'.repeat(64), 'f1');
    if (!first.created) throw new Error('the first use of a key creates');
    const key = keys.idempotency(user, 'k'.repeat(64));
    expect(await redis.type(key)).toBe('string');
    const pttl = await redis.pttl(key);
    expect(pttl).toBeGreaterThan(23 * 3_600_000);
    expect(pttl).toBeLessThanOrEqual(24 * 3_600_000);
    const again = await create(user, 'k'.repeat(64), 'f1');
    expect(again.created).toBe(false);
    if (again.created) return;
    const ids = await redis.zrange(keys.userTasks(user), 0, -1);
    expect(ids).toHaveLength(1);
    expect(again).toEqual({ created: false, taskId: ids[0], jobId: null, cost: 1, createdMs: first.createdMs });
    await expect(create(user, 'k'.repeat(64), 'f2')).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await accounts.balance(user)).toBe(4);
  });

  it('a record contract version 3 wrote (a hash) is still read', async () => {
    const user = await newUser(5);
    const key = keys.idempotency(user, 'h'.repeat(64));
    await redis.hset(key, 'fingerprint', 'f1', 'task_id', 'b'.repeat(32), 'job_id', 'j1', 'cost', 3, 'created_ms', 1234);
    expect(await create(user, 'h'.repeat(64), 'f1')).toEqual({ created: false, taskId: 'b'.repeat(32), jobId: 'j1', cost: 3, createdMs: 1234 });
    await expect(create(user, 'h'.repeat(64), 'f2')).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await accounts.balance(user)).toBe(5);
  });

  it('a fingerprint with the separator is refused, nothing written', async () => {
    const user = await newUser(5);
    await expect(create(user, 'p'.repeat(64), 'a|b')).rejects.toThrow(/must not contain \|/);
    expect(await redis.exists(keys.idempotency(user, 'p'.repeat(64)))).toBe(0);
    expect(await accounts.balance(user)).toBe(5);
  });

  it('a create refused for credits takes its claim on the key back: the retry after a top-up creates', async () => {
    const user = await newUser(0);
    await expect(create(user, 'c'.repeat(64), 'f1')).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    expect(await redis.exists(keys.idempotency(user, 'c'.repeat(64)))).toBe(0);
    await accounts.addCredits(user, 1, 'test');
    const retry = await create(user, 'c'.repeat(64), 'f1');
    expect(retry.created).toBe(true);
    expect(await redis.exists(keys.idempotency(user, 'c'.repeat(64)))).toBe(1);
  });

  it('a job id among the task pairs is what a repeat answers', async () => {
    const user = await newUser(5);
    const taskId = newId();
    const job = { jobId: 'job-1', fields: { kind: 'hairstyle' } };
    const first = await tasks.create({ taskId, userId: user, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost: 1, job, idempotency: { keyHash: 'j'.repeat(64), fingerprint: 'f1' } });
    expect(first.created).toBe(true);
    const again = await tasks.create({ taskId: newId(), userId: user, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost: 1, job, idempotency: { keyHash: 'j'.repeat(64), fingerprint: 'f1' } });
    expect(again).toMatchObject({ created: false, taskId, jobId: 'job-1', cost: 1 });
  });
});

describe('idempotency in the task record (create-task: the id derived from the key)', () => {
  const create = (user: number, keyHash: string, fingerprint: string, cost = 1) =>
    tasks.create({ taskId: idempotentTaskId(user, keyHash), userId: user, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost, idempotency: { keyHash, fingerprint, inTaskRecord: true } });

  it('records that outlive the key hold it; a store whose records do not, cannot', () => {
    expect(tasks.keysInTaskRecords).toBe(true);
    expect(new TaskStore(redis, keys, { retentionMs: 1000, recordTtlMs: 23 * 3_600_000 }).keysInTaskRecords).toBe(false);
  });

  it('no record of its own: the repeat finds the task by its id, another fingerprint is refused, charged once', async () => {
    const user = await newUser(5);
    const first = await create(user, 'r'.repeat(64), 'f1', 2);
    if (!first.created) throw new Error('the first use of a key creates');
    expect(await redis.exists(keys.idempotency(user, 'r'.repeat(64)))).toBe(0);
    expect(await redis.hget(keys.task(idempotentTaskId(user, 'r'.repeat(64))), 'idempotency_fingerprint')).toBe('f1');
    expect(await create(user, 'r'.repeat(64), 'f1', 2)).toEqual({ created: false, taskId: idempotentTaskId(user, 'r'.repeat(64)), jobId: null, cost: 2, createdMs: first.createdMs });
    await expect(create(user, 'r'.repeat(64), 'f2', 2)).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await accounts.balance(user)).toBe(3);
    expect(await redis.zcard(keys.userTasks(user))).toBe(1);
    // The same key from another user is another task.
    const other = await newUser(5);
    expect(idempotentTaskId(other, 'r'.repeat(64))).not.toBe(idempotentTaskId(user, 'r'.repeat(64)));
    expect((await create(other, 'r'.repeat(64), 'f1')).created).toBe(true);
  });

  it('a record of its own (a producer without derived ids, or an API before them) still answers', async () => {
    const user = await newUser(5);
    await redis.set(keys.idempotency(user, 'o'.repeat(64)), `f1|3|${'b'.repeat(32)}||1234`, 'PX', 60_000);
    expect(await create(user, 'o'.repeat(64), 'f1')).toEqual({ created: false, taskId: 'b'.repeat(32), jobId: null, cost: 3, createdMs: 1234 });
    await expect(create(user, 'o'.repeat(64), 'f2')).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await accounts.balance(user)).toBe(5);
    expect(await redis.exists(keys.task(idempotentTaskId(user, 'o'.repeat(64))))).toBe(0);
  });

  it('a create refused for credits writes nothing: the retry after a top-up creates', async () => {
    const user = await newUser(0);
    await expect(create(user, 'n'.repeat(64), 'f1')).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    expect(await redis.exists(keys.task(idempotentTaskId(user, 'n'.repeat(64))))).toBe(0);
    await accounts.addCredits(user, 1, 'test');
    expect((await create(user, 'n'.repeat(64), 'f1')).created).toBe(true);
  });
});

describe('API keys', () => {
  it('are stored only as their sha256 and resolve to their user', async () => {
    const { apiKey, userId } = await accounts.createKey();
    expect(apiKey).toMatch(/^iwk_[A-Za-z0-9_-]{43}$/);
    expect(await accounts.resolve(apiKey)).toBe(userId);
    expect(await accounts.resolve(apiKey + 'x')).toBeNull();
    const all = await redis.keys(`${prefix}:*`);
    expect(all.some((k) => k.includes(apiKey))).toBe(false);
    expect(await redis.get(keys.apiKey(hashApiKey(apiKey)))).toBe(String(userId));
  });

  it('an explicit user id keeps the sequence ahead of it', async () => {
    const { userId } = await accounts.createKey(9000);
    expect(userId).toBe(9000);
    expect((await accounts.createKey()).userId).toBe(9001);
  });
});
