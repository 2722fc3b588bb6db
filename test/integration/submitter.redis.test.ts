// The enqueue outbox: a task created and charged by a process that died before queueing it is
// queued by the sweep of any other process, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACE_VERSION, startHarness, type Harness } from '../helpers/harness.ts';
import type { VersionId } from '../../src/domain/version-id.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ worker: false });
});
afterAll(() => h?.close());

describe('enqueue outbox', () => {
  it('queues what a dead submitter left behind, once, after the grace period', async () => {
    const { userId } = await h.user(10);
    const taskId = 'deadbeef'.repeat(4);
    // The first half of a submit: record, charge and outbox entry, then "the process dies".
    await h.services.tasks.create({ taskId, userId, version: FACE_VERSION as VersionId, pipeline: 'face-detection', input: { image: 'http://x/y.png' }, webhookUrl: null, cost: 1 });
    expect(await h.services.queue.queue.getJob(taskId)).toBeUndefined();
    expect(await h.services.submitter.sweep(Date.now())).toBe(0); // still within the grace period
    expect(await h.services.submitter.sweep(Date.now() + 10_000)).toBe(1);
    const job = await h.services.queue.queue.getJob(taskId);
    expect(job?.data).toEqual({ taskId, userId });
    expect(await h.services.submitter.sweep(Date.now() + 20_000)).toBe(0); // done: not queued twice
  });

  it('a normal submit leaves nothing in the outbox', async () => {
    const { token } = await h.user(10);
    await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') });
    expect(await h.services.redis.zcard(`${h.config.redisKeyPrefix}:tasks:outbox`)).toBe(0);
  });
});
