// Redis-side failures surface as errors, and BullMQ's own signal for a task that lost its worker
// too often is recognised, against a real Redis with a fresh prefix per file.
import { randomBytes } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectRedis, deleteKeysWithPrefix, type RedisClient } from '../../src/store/redis.ts';
import { QueueName, TaskQueue } from '../../src/queue/task-queue.ts';
import { isFinalJobFailure } from '../../src/queue/task-worker.ts';

const prefix = `t${randomBytes(5).toString('hex')}`;
const redisUrl = inject('redisUrl');
let redis: RedisClient;
let queue: TaskQueue;

beforeAll(() => {
  redis = connectRedis(redisUrl);
  queue = new TaskQueue({ redisUrl, prefix, attempts: 3 });
});
afterAll(async () => {
  await queue.close();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

describe('removeIfQueued', () => {
  it('removes a waiting task; false only while it runs', async () => {
    await queue.enqueue('a'.repeat(32), 1);
    expect(await queue.removeIfQueued('a'.repeat(32))).toBe(true);
    expect(await queue.queue.getJob('a'.repeat(32))).toBeUndefined();
    expect(await queue.removeIfQueued('a'.repeat(32))).toBe(true); // gone: nothing left to remove

    await queue.enqueue('c'.repeat(32), 1);
    const connection = connectRedis(redisUrl, { forQueue: true });
    const running = new Worker(QueueName.Tasks, null, { connection, prefix, lockDuration: 30_000, autorun: false });
    expect((await running.getNextJob('running'))?.id).toBe('c'.repeat(32));
    expect(await queue.removeIfQueued('c'.repeat(32))).toBe(false);
    await running.close();
    connection.disconnect();
  });

  it('rejects on a Redis error instead of answering "running"', async () => {
    const taskId = 'b'.repeat(32);
    await queue.enqueue(taskId, 1);
    // A real error reply from Redis inside BullMQ's script: the lock key holds the wrong type.
    await redis.hset(`${prefix}:${QueueName.Tasks}:${taskId}:lock`, 'x', '1');
    await expect(queue.removeIfQueued(taskId)).rejects.toThrow(/WRONGTYPE/);
    await redis.del(`${prefix}:${QueueName.Tasks}:${taskId}:lock`);
    expect(await queue.removeIfQueued(taskId)).toBe(true);
  });
});

describe('a task that stalled more than maxStalledCount times', () => {
  it('is failed by BullMQ with an UnrecoverableError the worker recognises', async () => {
    const name = `stall-${randomBytes(3).toString('hex')}`;
    const connection = connectRedis(redisUrl, { forQueue: true });
    const q = new Queue(name, { connection, prefix });
    await q.add('run', { n: 1 }, { jobId: 'stalls', attempts: 3 });
    // A worker takes the job and "dies": its lock is never renewed.
    const dead = new Worker(name, null, { connection, prefix, lockDuration: 300, maxStalledCount: 0, autorun: false });
    const token = 'dead-worker';
    expect((await dead.getNextJob(token))?.id).toBe('stalls');
    await new Promise((r) => setTimeout(r, 600));
    // The next worker's stalled check moves it back with BullMQ's deferred failure; fetching it fails it.
    const failed = new Promise<{ job: Job; err: Error }>((resolve) => {
      const live = new Worker(name, async () => 'ran', { connection, prefix, lockDuration: 5_000, stalledInterval: 100, maxStalledCount: 0 });
      live.on('failed', (job, err) => job && resolve({ job, err }));
      afterAll(() => live.close());
    });
    const { job, err } = await failed;
    expect(job.attemptsMade).toBeLessThan(3); // not the attempts: the stall limit
    expect(isFinalJobFailure(job, err)).toBe(true);
    // A plain retryable failure of an early attempt is not final.
    expect(isFinalJobFailure({ ...job, attemptsMade: 1, deferredFailure: undefined } as unknown as Job, new Error('x'))).toBe(false);
    await dead.close();
    await q.close();
    connection.disconnect();
  });
});
