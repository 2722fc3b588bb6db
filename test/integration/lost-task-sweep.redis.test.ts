// The lost-task sweep against a real Redis and real BullMQ jobs: a record left starting or
// processing after its queue job failed or vanished is failed with WORKER_LOST and refunded exactly
// once; a task whose job is alive (waiting, or held by a running worker) is left alone.
import { randomBytes } from 'node:crypto';
import { UnrecoverableError, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '../../src/domain/logger.ts';
import type { VersionId } from '../../src/domain/version-id.ts';
import { LostTaskSweeper } from '../../src/queue/lost-task-sweeper.ts';
import { QueueName, TaskQueue, type TaskJobData } from '../../src/queue/task-queue.ts';
import { TaskSubmitter } from '../../src/queue/task-submitter.ts';
import { Accounts } from '../../src/store/accounts.ts';
import { connectRedis, deleteKeysWithPrefix, keyspace, type RedisClient } from '../../src/store/redis.ts';
import { Schedule } from '../../src/store/schedules.ts';
import { TaskStore } from '../../src/store/task-store.ts';
import { waitFor } from '../helpers/wait.ts';

const prefix = `t${randomBytes(5).toString('hex')}`;
const redisUrl = inject('redisUrl');
const keys = keyspace(prefix);
const V = 'a'.repeat(64) as VersionId;
let redis: RedisClient;
let tasks: TaskStore;
let accounts: Accounts;
let queue: TaskQueue;
let submitter: TaskSubmitter;
let sweeper: LostTaskSweeper;
let ended = 0;

beforeAll(() => {
  redis = connectRedis(redisUrl);
  tasks = new TaskStore(redis, keys, { retentionMs: 3_600_000, recordTtlMs: 86_400_000 });
  accounts = new Accounts(redis, keys);
  queue = new TaskQueue({ redisUrl, prefix, attempts: 3 });
  const outbox = new Schedule(redis, keys.enqueueOutbox());
  submitter = new TaskSubmitter({ tasks, queue, outbox, log: silentLogger });
  sweeper = new LostTaskSweeper(
    { index: new Schedule(redis, keys.activeTasks()), outbox, tasks, queue, log: silentLogger, onEnded: () => ended++ },
    60_000,
  );
});
afterAll(async () => {
  await queue.close();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

const newId = () => randomBytes(16).toString('hex');
/** A pass as if `ms` later: every index entry is due (the check interval is 60 s here). */
let clock = Date.now();
const sweepLater = () => sweeper.sweep((clock += 120_000));

async function submitted(userId: number, cost = 2): Promise<string> {
  const taskId = newId();
  await submitter.submit({ taskId, userId, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost });
  return taskId;
}

async function user(credits: number): Promise<number> {
  const { userId } = await accounts.createKey();
  await accounts.addCredits(userId, credits, 'test');
  return userId;
}

const refunds = async (userId: number, taskId: string) => (await accounts.ledger(userId)).filter((e) => e.ref === taskId && e.delta > 0).length;
const inIndex = async (taskId: string) => (await redis.zscore(keys.activeTasks(), taskId)) !== null;

describe('lost-task sweep', () => {
  it('fails a processing task whose job is gone, refunds once, and drops it from the index', async () => {
    const u = await user(10);
    const id = await submitted(u);
    expect(await inIndex(id)).toBe(true);
    expect((await tasks.claim(id, u)).result).toBe('ok');
    expect(await queue.removeIfQueued(id)).toBe(true); // the job behind the processing record vanishes
    expect(await accounts.balance(u)).toBe(8);

    const before = ended;
    expect(await sweepLater()).toBe(1);
    expect(ended).toBe(before + 1);
    const r = (await tasks.get(id))!;
    expect(r.status).toBe('failed');
    expect(r.error).toMatch(/^WORKER_LOST: its queue job is gone/);
    expect(await accounts.balance(u)).toBe(10);
    expect(await refunds(u, id)).toBe(1);
    expect(await inIndex(id)).toBe(false);

    // Again, and a late fail from the worker's own handler: nothing more is refunded.
    expect(await sweepLater()).toBe(0);
    expect((await tasks.fail(id, 'WORKER_LOST: late')).result).toBe('conflict');
    expect(await accounts.balance(u)).toBe(10);
    expect(await refunds(u, id)).toBe(1);
  });

  it('fails a processing task whose job BullMQ failed while nobody wrote the record', async () => {
    const u = await user(10);
    const id = await submitted(u);
    // A worker claims the task, then BullMQ fails the job for good; the process that should have
    // written the failure (the `failed` handler) is not there.
    const connection = connectRedis(redisUrl, { forQueue: true });
    const worker = new Worker<TaskJobData>(
      QueueName.Tasks,
      async (job) => {
        await tasks.claim(job.data.taskId, job.data.userId);
        throw new UnrecoverableError('the job stalled too many times');
      },
      { connection, prefix },
    );
    await waitFor(async () => (await queue.jobFates([id]))[0]!.fate === 'failed', { what: 'BullMQ to fail the job' });
    await worker.close();
    connection.disconnect();
    expect((await tasks.get(id))!.status).toBe('processing');

    expect(await sweepLater()).toBe(1);
    const r = (await tasks.get(id))!;
    expect(r.status).toBe('failed');
    expect(r.error).toMatch(/^WORKER_LOST: its queue job failed \(the job stalled too many times\)/);
    expect(await accounts.balance(u)).toBe(10);
    expect(await refunds(u, id)).toBe(1);
  });

  it('leaves live tasks alone: processing with its job waiting or held by a worker, starting in the outbox', async () => {
    const u = await user(10);
    // Processing, its job waiting again (a retry after a transient failure).
    const waiting = await submitted(u);
    await tasks.claim(waiting, u);
    // Processing, its job held by a running worker.
    const running = await submitted(u);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const connection = connectRedis(redisUrl, { forQueue: true });
    const worker = new Worker<TaskJobData>(
      QueueName.Tasks,
      async (job) => {
        if (job.data.taskId !== running) throw new Error('not this test\'s job');
        await tasks.claim(job.data.taskId, job.data.userId);
        await held;
        await tasks.succeed(job.data.taskId, { outputKeys: [], logs: '', predictTimeS: 0 }, job.data.userId);
      },
      { connection, prefix, autorun: false },
    );
    // Only the held task's job runs: the other one stays waiting.
    await queue.removeIfQueued(waiting);
    void worker.run();
    await waitFor(async () => (await tasks.status(running)) === 'processing', { what: 'the worker to claim its task' });
    await queue.enqueue(waiting, u); // back to waiting, after the worker is busy (concurrency 1)
    // Starting, created by a submitter that has not queued it yet: the outbox sweep's.
    const unqueued = newId();
    await tasks.create({ taskId: unqueued, userId: u, version: V, pipeline: 'face-detection', input: {}, webhookUrl: null, cost: 2 });

    expect(await sweepLater()).toBe(0);
    expect(await tasks.status(waiting)).toBe('processing');
    expect(await tasks.status(running)).toBe('processing');
    expect(await tasks.status(unqueued)).toBe('starting');
    expect(await accounts.balance(u)).toBe(4);
    expect([await inIndex(waiting), await inIndex(running), await inIndex(unqueued)]).toEqual([true, true, true]);

    release();
    await waitFor(async () => (await tasks.status(running)) === 'succeeded', { what: 'the held task to succeed' });
    expect(await inIndex(running)).toBe(false);
    await worker.close();
    connection.disconnect();
  });

  it('fails a starting task whose job is gone and that the enqueue outbox no longer holds', async () => {
    const u = await user(10);
    const id = await submitted(u);
    expect(await queue.removeIfQueued(id)).toBe(true);
    expect(await sweepLater()).toBe(1);
    const r = (await tasks.get(id))!;
    expect(r).toMatchObject({ status: 'failed', attempts: 0 });
    expect(await accounts.balance(u)).toBe(10);
    expect(await refunds(u, id)).toBe(1);
  });
});
