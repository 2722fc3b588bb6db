// The queue contract end to end: a producer that imports no project code creates a user's task with
// the shipped create script, enqueues its job, and the real API and worker run and serve it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACE_VERSION, startHarness, type Harness } from '../helpers/harness.ts';
import { submitByContract } from '../helpers/contract-producer.ts';

describe('queue contract: a foreign front', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates, charges and enqueues a task that the worker runs and the task API serves', async () => {
    const { token, userId } = await h.user(5);
    const { taskId, result } = await submitByContract({
      redisUrl: h.env.REDIS_URL!,
      prefix: h.env.REDIS_PREFIX!,
      userId,
      version: FACE_VERSION,
      pipeline: 'face-detection',
      cost: 1,
      input: { image: h.fixtures.url('/files/group-four.jpg') },
    });
    expect(result[0]).toBeGreaterThan(0);
    expect(result[1]).toBe(4);

    const task = await h.waitForTask(token, taskId);
    expect(task).toMatchObject({ task_id: taskId, user_id: userId, version: FACE_VERSION, status: 'succeeded', error: null });
    expect(task.output).toHaveLength(2);
    expect(task.logs).toMatch(/inference: /);
    expect(task.predict_time).toBeGreaterThan(0);
    // Charged once, never refunded; the outbox entry was cleared by the producer.
    expect(await h.services.accounts.balance(userId)).toBe(4);
    expect(await h.services.redis.zscore(`${h.config.redisKeyPrefix}:tasks:outbox`, taskId)).toBeNull();
  });

  it('refuses a task the balance cannot pay, leaving nothing behind', async () => {
    const { token, userId } = await h.user(0);
    const { taskId, result } = await submitByContract({
      redisUrl: h.env.REDIS_URL!, prefix: h.env.REDIS_PREFIX!, userId, version: FACE_VERSION, pipeline: 'face-detection', cost: 1,
      input: { image: h.fixtures.url('/files/group-four.jpg') },
    });
    expect(result).toEqual([-1, 0]);
    expect((await h.call('GET', `/api/tasks/v1/get/${taskId}`, { token })).status).toBe(404);
  });

  it('npm run enqueue submits by the same contract', async () => {
    const { token, userId } = await h.user(2);
    const input = JSON.stringify({ image: h.fixtures.url('/files/group-four.jpg') });
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/enqueue.ts', '--version', FACE_VERSION, '--input', input, '--user', String(userId)], {
      env: { ...process.env, ...h.env },
    });
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ task_cost: 1, balance: 1 });
    expect(await h.waitForTask(token, out.task_id)).toMatchObject({ status: 'succeeded', version: FACE_VERSION });
    expect(await h.services.accounts.balance(userId)).toBe(1);
  });
});
