// Idempotent create (Idempotency-Key on create-task and both create-jobs), deadlines (Cancel-After)
// and the synchronous wait (Prefer: wait), end to end: a listening server, a real Redis, and a real
// worker where the behaviour needs one. No timing is asserted beyond generous waits.
import sharp from 'sharp';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACE_VERSION, startHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

let h: Harness; // with a worker
let idle: Harness; // no worker: nothing starts

beforeAll(async () => {
  [h, idle] = await Promise.all([startHarness(), startHarness({ worker: false })]);
});
afterAll(async () => {
  await Promise.all([h?.close(), idle?.close()]);
});

const create = (on: Harness, token: string, body: unknown, headers: Record<string, string> = {}) =>
  on.call('POST', '/api/tasks/v1/create', { token, body, headers });
const tasksOf = (on: Harness, userId: number) => on.services.redis.zcard(`${on.config.redisKeyPrefix}:user:${userId}:tasks`);

describe('Idempotency-Key on create-task', () => {
  it('the same key and body twice: the same task_id, charged once, the repeat marked as replayed', async () => {
    const { token, userId } = await h.user(10);
    const key = randomUUID();
    const image = h.fixtures.url('/files/astronaut.png');
    const first = await create(h, token, { version: FACE_VERSION, input: { image, min_score: 0.5 } }, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Key order and whitespace do not make another request.
    const again = await h.call('POST', '/api/tasks/v1/create', {
      token,
      raw: `{ "input": { "min_score": 0.5, "image": ${JSON.stringify(image)} }, "version": "${FACE_VERSION}" }`,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
    });
    expect(again.status).toBe(200);
    expect(again.json.result).toEqual(first.json.result);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await h.services.accounts.balance(userId)).toBe(9);
    expect(await tasksOf(h, userId)).toBe(1);
    expect((await h.waitForTask(token, first.json.result.task_id)).status).toBe('succeeded');
    // Still the same task once it has ended; still charged once.
    expect((await create(h, token, { version: FACE_VERSION, input: { image, min_score: 0.5 } }, { 'idempotency-key': key })).json.result).toEqual(first.json.result);
    expect(await h.services.accounts.balance(userId)).toBe(9);
  });

  it('the same key with another body: 422 idempotency_key_reused, nothing created or charged', async () => {
    const { token, userId } = await idle.user(10);
    const key = randomUUID();
    const first = await create(idle, token, { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } }, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    for (const body of [
      { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/group-four.jpg') } },
      { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') }, webhook_url: 'http://127.0.0.1:9/hook' },
    ]) {
      const r = await create(idle, token, body, { 'idempotency-key': key });
      expect(r.status).toBe(422);
      expect(r.json).toMatchObject({ code: 422, result: { error: 'idempotency_key_reused' }, message: { en: expect.stringMatching(/Idempotency-Key was already used with a different request/) } });
    }
    // A deadline is part of the request too.
    const withDeadline = await create(idle, token, { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } }, { 'idempotency-key': key, 'cancel-after': '5m' });
    expect(withDeadline.json.result.error).toBe('idempotency_key_reused');
    expect(await idle.services.accounts.balance(userId)).toBe(9);
    expect(await tasksOf(idle, userId)).toBe(1);
  });

  it('50 concurrent requests with one key create one task and charge once', async () => {
    const { token, userId } = await idle.user(100);
    const key = randomUUID();
    const body = { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } };
    const answers = await Promise.all(Array.from({ length: 50 }, () => create(idle, token, body, { 'idempotency-key': key })));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    expect(new Set(answers.map((a) => a.json.result.task_id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
    expect(await idle.services.accounts.balance(userId)).toBe(99);
    expect(await tasksOf(idle, userId)).toBe(1);
    const ledger = await idle.services.accounts.ledger(userId);
    expect(ledger.filter((e: { delta: number }) => e.delta < 0)).toHaveLength(1);
  });

  it('keys are per user: the same key and body from two users are two tasks', async () => {
    const a = await idle.user(5);
    const b = await idle.user(5);
    const key = randomUUID();
    const body = { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } };
    const ra = await create(idle, a.token, body, { 'idempotency-key': key });
    const rb = await create(idle, b.token, body, { 'idempotency-key': key });
    expect(ra.status).toBe(200);
    expect(rb.status).toBe(200);
    expect(ra.json.result.task_id).not.toBe(rb.json.result.task_id);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect(await idle.services.accounts.balance(a.userId)).toBe(4);
    expect(await idle.services.accounts.balance(b.userId)).toBe(4);
  });

  it('a malformed key: 400 idempotency_key_invalid, nothing charged', async () => {
    const { token, userId } = await idle.user(5);
    const body = { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } };
    for (const key of ['x'.repeat(256), ' ']) {
      const r = await create(idle, token, body, { 'idempotency-key': key });
      expect(r.status).toBe(400);
      expect(r.json.result.error).toBe('idempotency_key_invalid');
    }
    expect(await idle.services.accounts.balance(userId)).toBe(5);
  });
});

describe('Idempotency-Key on the create-jobs', () => {
  let photo: Buffer;
  let garment: Buffer;
  beforeAll(async () => {
    photo = await sharp('test/fixtures/astronaut.png').resize(256).jpeg({ quality: 85 }).toBuffer();
    garment = await sharp({ create: { width: 300, height: 400, channels: 3, background: '#c0392b' } }).png().toBuffer();
  });

  type Part = [string, string | Buffer];
  async function createJob(path: string, token: string, parts: Part[], key: string) {
    const form = new FormData();
    for (const [field, v] of parts) {
      if (typeof v === 'string') form.append(field, v);
      else form.append(field, new Blob([new Uint8Array(v)], { type: 'application/octet-stream' }), `${field}.bin`);
    }
    const res = await fetch(`${idle.baseUrl}/api/service/v1/${path}/create-job`, { method: 'POST', headers: { authorization: token, 'idempotency-key': key }, body: form });
    return { status: res.status, json: (await res.json()) as any, replayed: res.headers.get('idempotent-replayed') };
  }

  it('hairstyle: a repeat answers the same job_id and charges once, even with the balance spent', async () => {
    // Exactly one job's worth (2 pictures x 6): the repeat finds a zero balance, and is still answered.
    const { token, userId } = await idle.user(12);
    const key = randomUUID();
    const parts: Part[] = [['image_files', photo], ['hair_color', 'blonde'], ['num_outputs', '2']];
    const first = await createJob('ai-hairstyle', token, parts, key);
    expect(first.json).toMatchObject({ code: 100000, result: { job_id: expect.stringMatching(/^[0-9a-f]{32}$/) } });
    const again = await createJob('ai-hairstyle', token, parts, key);
    expect(again.json).toMatchObject({ code: 100000, result: { job_id: first.json.result.job_id } });
    expect(again.replayed).toBe('true');
    expect(await idle.services.accounts.balance(userId)).toBe(0);
    expect(await tasksOf(idle, userId)).toBe(1);
    // Another hair color under the same key is another request: refused, nothing charged.
    await idle.services.accounts.addCredits(userId, 12, 'test');
    const other = await createJob('ai-hairstyle', token, [['image_files', photo], ['hair_color', 'red'], ['num_outputs', '2']], key);
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ code: 400301, result: {}, message: { en: expect.stringMatching(/^Params error: this Idempotency-Key was already used with a different request/) } });
    expect(await idle.services.accounts.balance(userId)).toBe(12);
    expect(await tasksOf(idle, userId)).toBe(1);
  });

  it('try-on: files are part of the request (by their bytes); concurrent repeats make one job', async () => {
    const { token, userId } = await idle.user(100);
    const key = randomUUID();
    const parts: Part[] = [['clothes_image', garment], ['custom_model', photo], ['clothes_type', 'upper_body']];
    const answers = await Promise.all(Array.from({ length: 5 }, () => createJob('ai-virtual-try-on', token, parts, key)));
    expect(answers.map((a) => a.json.code)).toEqual(Array(5).fill(100000));
    expect(new Set(answers.map((a) => a.json.result.job_id)).size).toBe(1);
    expect(await idle.services.accounts.balance(userId)).toBe(92);
    // The same fields with another garment picture: refused.
    const otherGarment = await sharp({ create: { width: 300, height: 400, channels: 3, background: '#2980b9' } }).png().toBuffer();
    const other = await createJob('ai-virtual-try-on', token, [['clothes_image', otherGarment], ['custom_model', photo], ['clothes_type', 'upper_body']], key);
    expect(other.json.code).toBe(400301);
    expect(other.json.message.en).toMatch(/Idempotency-Key/);
    expect(await idle.services.accounts.balance(userId)).toBe(92);
    expect(await tasksOf(idle, userId)).toBe(1);
  });
});

describe('Cancel-After', () => {
  it('a task that cannot start in time (no worker) ends canceled at its deadline, refunded, saying so', async () => {
    const { token, userId } = await idle.user(3);
    const r = await create(idle, token, { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } }, { 'cancel-after': '1s' });
    expect(r.status).toBe(200);
    const id = r.json.result.task_id as string;
    expect(await idle.services.accounts.balance(userId)).toBe(2);
    const t = await idle.waitForTask(token, id, (x) => x.status !== 'starting', 20_000);
    expect(t).toMatchObject({ status: 'canceled', output: null });
    expect(t.error).toMatch(/^DEADLINE_EXCEEDED: canceled at its Cancel-After of 1 s: it never started; its 1 credit was refunded$/);
    expect(t.logs).toMatch(/never started/);
    expect(t.completed_at).not.toBeNull();
    expect(await idle.services.accounts.balance(userId)).toBe(3);
    expect((await idle.services.accounts.ledger(userId))[0]).toMatchObject({ delta: 1, reason: 'refund:canceled', ref: id });
    // Its queue job is gone, so a worker started later has nothing of it to run.
    expect(await idle.services.queue.queue.getJob(id)).toBeUndefined();
  });

  it('a running task is stopped at its deadline and canceled, refunded, without running its model', async () => {
    const { token, userId } = await h.user(3);
    const held = h.fixtures.nextHold();
    const r = await create(h, token, { version: FACE_VERSION, input: { image: h.fixtures.url('/hold/astronaut.png') } }, { 'cancel-after': '2s' });
    const id = r.json.result.task_id as string;
    try {
      await held; // the worker has claimed it and is downloading: it is running
      expect((await h.waitForTask(token, id, (x) => x.status !== 'starting')).status).toBe('processing');
      const t = await h.waitForTask(token, id, (x) => x.status !== 'processing', 20_000);
      expect(t).toMatchObject({ status: 'canceled', output: null });
      expect(t.error).toMatch(/^DEADLINE_EXCEEDED: canceled at its Cancel-After of 2 s while running \(stage: download\); the run stopped there and its 1 credit was refunded$/);
      expect(t.logs).toMatch(/^attempt: 1\/\d+\ncanceled: /m);
      expect(t.logs).not.toMatch(/inference/);
      expect(await h.services.accounts.balance(userId)).toBe(3);
    } finally {
      h.fixtures.release();
    }
    // The worker lets go of the job and the record stays canceled.
    await waitFor(async () => {
      const job = await h.services.queue.queue.getJob(id);
      return !job || ['completed', 'failed'].includes(await job.getState());
    }, { what: 'the worker to let go of the canceled task' });
    expect((await h.waitForTask(token, id)).status).toBe('canceled');
  });

  it('a task that ends before its deadline is not touched by it', async () => {
    const { token, userId } = await h.user(3);
    const r = await create(h, token, { version: FACE_VERSION, input: { image: h.fixtures.url('/files/astronaut.png') } }, { 'cancel-after': '1m' });
    const t = await h.waitForTask(token, r.json.result.task_id);
    expect(t).toMatchObject({ status: 'succeeded', error: null });
    expect(await h.services.accounts.balance(userId)).toBe(2);
  });

  it('a malformed or out-of-range Cancel-After: 400 cancel_after_invalid, nothing charged', async () => {
    const { token, userId } = await idle.user(3);
    for (const v of ['soon', '30', '1.5s', '0s', '25h', '2m1h']) {
      const r = await create(idle, token, { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } }, { 'cancel-after': v });
      expect(r.status, v).toBe(400);
      expect(r.json.result.error, v).toBe('cancel_after_invalid');
    }
    expect(await idle.services.accounts.balance(userId)).toBe(3);
    expect(await tasksOf(idle, userId)).toBe(0);
  });
});

describe('Prefer: wait', () => {
  it('returns the final record in the create answer when the task ends in time', async () => {
    const { token, userId } = await h.user(3);
    const r = await create(h, token, { version: FACE_VERSION, input: { image: h.fixtures.url('/files/astronaut.png') } }, { prefer: 'wait=30' });
    expect(r.status).toBe(200);
    expect(r.headers.get('preference-applied')).toBe('wait=30');
    expect(r.json).toMatchObject({ code: 200, message: { en: 'task succeeded' } });
    expect(r.json.result).toMatchObject({ task_id: expect.stringMatching(/^[0-9a-f]{32}$/), user_id: userId, status: 'succeeded', error: null });
    expect(r.json.result.output).toHaveLength(2);
    // The same record as a read gives.
    const read = await h.call('GET', `/api/tasks/v1/get/${r.json.result.task_id}`, { token });
    expect(read.json.result).toEqual(r.json.result);
    expect(h.services.taskEnds.size).toBe(0);
  });

  it('a repeat (same Idempotency-Key) of an ended task answers its record at once', async () => {
    const { token } = await h.user(3);
    const key = randomUUID();
    const body = { version: FACE_VERSION, input: { image: h.fixtures.url('/files/astronaut.png') } };
    const first = await create(h, token, body, { 'idempotency-key': key });
    await h.waitForTask(token, first.json.result.task_id);
    const again = await create(h, token, body, { 'idempotency-key': key, prefer: 'respond-async, wait=20' });
    expect(again.json.result).toMatchObject({ task_id: first.json.result.task_id, status: 'succeeded' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers the usual {task_id, task_cost} when the task does not end in time', async () => {
    const { token } = await idle.user(3);
    const body = { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } };
    const r = await create(idle, token, body, { prefer: 'wait=1' });
    expect(r.status).toBe(200);
    expect(r.headers.get('preference-applied')).toBe('wait=1');
    expect(r.json).toEqual({ code: 200, result: { task_id: expect.stringMatching(/^[0-9a-f]{32}$/), task_cost: 1 }, message: { en: 'task created' } });
    expect(idle.services.taskEnds.size).toBe(0);
  });

  it('a wait over 60 s is applied as 60; a cancel ends the wait with the canceled record', async () => {
    const { token, userId } = await idle.user(3);
    const pending = create(idle, token, { version: FACE_VERSION, input: { image: idle.fixtures.url('/files/astronaut.png') } }, { prefer: 'wait=600' });
    const id = await waitFor(async () => (await idle.services.tasks.listIds(userId, 1))[0]?.taskId, { what: 'the task to exist' });
    await waitFor(() => idle.services.taskEnds.size === 1, { what: 'the create to wait' });
    expect((await idle.call('POST', `/api/tasks/v1/cancel/${id}`, { token })).status).toBe(200);
    const r = await pending;
    expect(r.headers.get('preference-applied')).toBe('wait=60');
    expect(r.json.result).toMatchObject({ task_id: id, status: 'canceled' });
  });
});
