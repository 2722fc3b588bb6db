// End to end through a listening server, a real Redis, the BullMQ worker and its inference
// threads, with inputs downloaded from a real local HTTP server.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACE_VERSION, freePort, startHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

let h: Harness;
let token: string;
let userId: number;

beforeAll(async () => {
  h = await startHarness({ env: { INPUT_MAX_BYTES: String(2 * 1024 * 1024), INPUT_MAX_PIXELS: String(2_000_000) } });
  ({ token, userId } = await h.user(100));
});
afterAll(() => h?.close());

async function runTask(input: Record<string, unknown>) {
  const id = await h.createTask(token, input);
  return h.waitForTask(token, id);
}

describe('face detection task', () => {
  it('finds exactly one face on the astronaut, boxed around her face, with files and timings', async () => {
    const create = await h.call('POST', '/api/tasks/v1/create', {
      token,
      body: { version: FACE_VERSION, input: { image: h.fixtures.url('/files/astronaut.png') } },
    });
    expect(create.status).toBe(200);
    expect(create.json.code).toBe(200);
    expect(create.json.result).toEqual({ task_id: expect.stringMatching(/^[0-9a-f]{32}$/), task_cost: 1 });
    expect(create.json.message.en).toBeTruthy();

    const t = await h.waitForTask(token, create.json.result.task_id);
    expect(Object.keys(t).sort()).toEqual(
      ['completed_at', 'create_at', 'error', 'logs', 'output', 'predict_time', 'status', 'task_id', 'total_time', 'user_id', 'version'].sort(),
    );
    expect(t).toMatchObject({ status: 'succeeded', user_id: userId, version: FACE_VERSION, error: null });
    expect(t.predict_time).toBeGreaterThan(0);
    expect(t.total_time).toBeGreaterThanOrEqual(t.predict_time);
    expect(t.completed_at).toBeGreaterThanOrEqual(t.create_at);
    for (const stage of ['download', 'decode', 'preprocess', 'inference', 'postprocess', 'store']) {
      expect(t.logs).toMatch(new RegExp(`^${stage}: \\d+\\.\\d ms$`, 'm'));
    }
    expect(t.output).toHaveLength(2);

    const json = await h.call('GET', t.output[0], { token });
    expect(json.status).toBe(200);
    expect(json.json.width).toBe(512);
    expect(json.json.faces).toHaveLength(1);
    const face = json.json.faces[0];
    // Her face spans roughly x 180-270, y 90-180 in the 512x512 photo.
    expect(face.box.x).toBeGreaterThan(150);
    expect(face.box.x + face.box.width).toBeLessThan(300);
    expect(face.box.y).toBeGreaterThan(50);
    expect(face.box.y + face.box.height).toBeLessThan(200);
    expect(face.score).toBeGreaterThan(0.7);
    const { right_eye, left_eye, nose_tip, mouth_center } = face.keypoints;
    expect(right_eye.x).toBeLessThan(left_eye.x); // the subject's right eye is on the image's left
    expect(nose_tip.y).toBeGreaterThan(right_eye.y);
    expect(mouth_center.y).toBeGreaterThan(nose_tip.y);
    for (const p of Object.values(face.keypoints) as Array<{ x: number; y: number }>) {
      expect(p.x).toBeGreaterThan(face.box.x - 5);
      expect(p.x).toBeLessThan(face.box.x + face.box.width + 5);
    }

    const preview = await fetch(t.output[1], { headers: { authorization: `Bearer ${token}` } });
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-type')).toBe('image/jpeg');
    const meta = await sharp(Buffer.from(await preview.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 512, 512]);
  });

  it('finds the four faces of the group photo, left to right, not overlapping', async () => {
    const t = await runTask({ image: h.fixtures.url('/files/group-four.jpg') });
    expect(t.status).toBe('succeeded');
    const faces = (await h.call('GET', t.output[0], { token })).json.faces as Array<{ box: { x: number; y: number; width: number; height: number } }>;
    expect(faces).toHaveLength(4);
    const boxes = faces.map((f) => f.box).sort((a, b) => a.x - b.x);
    for (let i = 1; i < boxes.length; i++) expect(boxes[i]!.x).toBeGreaterThan(boxes[i - 1]!.x + boxes[i - 1]!.width - 1);
    for (const b of boxes) expect(b.width).toBeGreaterThan(60);
  });

  it('honours min_score: a threshold above every score finds nothing', async () => {
    const t = await runTask({ image: h.fixtures.url('/files/astronaut.png'), min_score: 0.999 });
    expect(t.status).toBe('succeeded');
    expect((await h.call('GET', t.output[0], { token })).json.faces).toEqual([]);
  });

  it('follows a bounded number of redirects', async () => {
    expect((await runTask({ image: h.fixtures.url('/redirect/2') })).status).toBe('succeeded');
    const t = await runTask({ image: h.fixtures.url('/redirect/5') });
    expect(t.status).toBe('failed');
    expect(t.error).toMatch(/INPUT_UNREACHABLE: input\.image: more than 3 redirects/);
  });
});

describe('bad inputs fail the task with a clear error and a refund', () => {
  it.each([
    ['an unreachable URL', 'closed-port', /INPUT_UNREACHABLE: input\.image: could not download http:\/\/127\.0\.0\.1:\d+\/x\.png: connection refused$/],
    ['a URL answering 404', '/status/404', /INPUT_UNREACHABLE: input\.image: .* answered HTTP 404/],
    ['a text file', '/text/x.jpg', /INPUT_NOT_IMAGE: input\.image: not a JPEG, PNG or WebP image \(\d+ bytes starting 3c 21 44 4f/],
    ['a truncated PNG', '/truncated/astronaut.png', /^IMAGE_DECODE_FAILED: image could not be decoded \(corrupt or truncated data\)$/],
    ['a file above the size cap', '/big/x', /INPUT_TOO_LARGE: input\.image: file is larger than the limit of 2097152 bytes/],
  ])('%s', async (_name, where, error) => {
    const before = await h.services.accounts.balance(userId);
    const url = where === 'closed-port' ? `http://127.0.0.1:${await freePort()}/x.png` : h.fixtures.url(where);
    const t = await runTask({ image: url });
    expect(t.status).toBe('failed');
    expect(t.error).toMatch(error);
    expect(t.output).toBeNull();
    expect(t.completed_at).not.toBeNull();
    expect(await h.services.accounts.balance(userId)).toBe(before); // charged 1, refunded 1
  });

  it('an image above the pixel cap (decompression-bomb guard)', async () => {
    // 1500x1500 = 2.25 Mpx, above this harness's 2 Mpx cap, yet a small file.
    const png = await sharp({ create: { width: 1500, height: 1500, channels: 3, background: '#888' } }).png().toBuffer();
    expect(png.length).toBeLessThan(100_000);
    const t = await runTask({ image: h.fixtures.url(h.fixtures.serve('bomb.png', png)) });
    expect(t.status).toBe('failed');
    expect(t.error).toMatch(/IMAGE_TOO_MANY_PIXELS: image is 1500x1500 \(2250000 pixels\), above the limit of 2000000/);
  });
});

describe('authentication', () => {
  it('refuses a missing, empty or unknown token on every route, with 401', async () => {
    const routes: Array<[string, string]> = [
      ['POST', '/api/tasks/v1/create'],
      ['GET', '/api/tasks/v1/get/0123456789abcdef0123456789abcdef'],
      ['POST', '/api/tasks/v1/cancel/0123456789abcdef0123456789abcdef'],
      ['GET', '/files/tasks/0123456789abcdef0123456789abcdef/faces.json'],
    ];
    for (const [method, p] of routes) {
      const missing = await h.call(method, p, { body: method === 'POST' ? {} : undefined });
      expect(missing.status).toBe(401);
      expect(missing.json).toMatchObject({ code: 401, result: { error: 'auth_missing' } });
      const empty = await h.call(method, p, { headers: { authorization: 'Bearer ' } });
      expect(empty.json.result.error).toBe('auth_missing');
      const wrong = await h.call(method, p, { token: 'iwk_not-a-real-key' });
      expect(wrong.status).toBe(401);
      expect(wrong.json).toMatchObject({ code: 401, result: { error: 'auth_invalid' }, message: { en: 'invalid API token' } });
    }
  });

  it("hides another user's task and its files behind 404", async () => {
    const t = await runTask({ image: h.fixtures.url('/files/astronaut.png') });
    const other = await h.user(10);
    const get = await h.call('GET', `/api/tasks/v1/get/${t.task_id}`, { token: other.token });
    expect(get.status).toBe(404);
    expect(get.json.result.error).toBe('task_not_found');
    const unknown = await h.call('GET', `/api/tasks/v1/get/ffffffffffffffffffffffffffffffff`, { token });
    // Indistinguishable from a task that does not exist.
    expect([unknown.status, unknown.json.code, unknown.json.result]).toEqual([get.status, get.json.code, get.json.result]);
    expect((await h.call('POST', `/api/tasks/v1/cancel/${t.task_id}`, { token: other.token })).status).toBe(404);
    for (const url of t.output) {
      expect((await h.call('GET', url, { token: other.token })).status).toBe(404);
      expect((await h.call('GET', url)).status).toBe(401);
      expect((await h.call('GET', url, { token })).status).toBe(200);
    }
    expect((await h.call('GET', t.output[0].replace('faces.json', '..%2F..%2Fsecret'), { token })).status).toBe(404);
  });
});

describe('validation of create', () => {
  const create = (body: unknown, raw?: string) =>
    h.call('POST', '/api/tasks/v1/create', raw === undefined ? { token, body } : { token, raw, headers: { 'content-type': 'application/json' } });
  const good = () => ({ version: FACE_VERSION, input: { image: h.fixtures.url('/files/astronaut.png') } });

  it.each([
    ['version missing', () => ({ input: {} }), 400, 'body_invalid', /version: required/],
    ['input missing', () => ({ version: FACE_VERSION }), 400, 'body_invalid', /input: required/],
    ['unknown top-level field', () => ({ ...good(), priority: 1 }), 400, 'body_invalid', /priority/],
    ['version not 64 hex', () => ({ ...good(), version: 'abc' }), 400, 'version_invalid', /64-character lowercase hex ID \(got 3 characters\)/],
    ['version upper-case hex', () => ({ ...good(), version: FACE_VERSION.toUpperCase() }), 400, 'version_invalid', /^version must be lowercase hex \(it has uppercase letters\)$/],
    ['unknown version', () => ({ ...good(), version: 'f'.repeat(64) }), 404, 'version_not_found', /not found/],
    ['image not a URL', () => ({ ...good(), input: { image: 'astronaut.png' } }), 422, 'input_invalid', /input\.image: must be an http\(s\) URL/],
    ['image with ftp scheme', () => ({ ...good(), input: { image: 'ftp://x/y.png' } }), 422, 'input_invalid', /input\.image/],
    ['image missing', () => ({ ...good(), input: {} }), 422, 'input_invalid', /input\.image/],
    ['min_score out of range', () => ({ ...good(), input: { ...good().input, min_score: 2 } }), 422, 'input_invalid', /input\.min_score/],
    ['unknown input field', () => ({ ...good(), input: { ...good().input, colour: 'red' } }), 422, 'input_invalid', /colour/],
    ['webhook_url not http', () => ({ ...good(), webhook_url: 'javascript:alert(1)' }), 400, 'body_invalid', /webhook_url: must be an http\(s\) URL/],
  ])('%s -> %s %s', async (_n, body, status, error, message) => {
    const before = await h.services.accounts.balance(userId);
    const r = await create(body());
    expect(r.status).toBe(status);
    expect(r.json.code).toBe(status);
    expect(r.json.result.error).toBe(error);
    expect(r.json.message.en).toMatch(message);
    expect(await h.services.accounts.balance(userId)).toBe(before);
  });

  it('rejects malformed JSON (400) and an oversized body (413)', async () => {
    const bad = await create(undefined, '{"version": ');
    expect([bad.status, bad.json.result.error]).toEqual([400, 'body_invalid']);
    const big = await create(undefined, JSON.stringify({ ...good(), input: { image: 'http://x/' + 'a'.repeat(70_000) } }));
    expect([big.status, big.json.result.error]).toEqual([413, 'body_too_large']);
  });

  it('refuses a task the balance cannot pay for (402), queueing nothing', async () => {
    const poor = await h.user(0);
    const r = await h.call('POST', '/api/tasks/v1/create', { token: poor.token, body: good() });
    expect(r.status).toBe(402);
    expect(r.json).toMatchObject({ code: 402, result: { error: 'insufficient_credits', balance: 0, cost: 1 } });
    expect(await h.services.redis.zcard(`${h.config.redisKeyPrefix}:user:${poor.userId}:tasks`)).toBe(0);
  });
});

describe('cancel', () => {
  it('cancels a running task: it ends canceled, refunded, with no outputs, and stays canceled', async () => {
    const before = await h.services.accounts.balance(userId);
    const held = h.fixtures.nextHold();
    const id = await h.createTask(token, { image: h.fixtures.url('/hold/astronaut.png') });
    await held; // the worker is downloading ...
    await h.waitForTask(token, id, (t) => t.status === 'processing'); // ... so the task is processing
    const c = await h.call('POST', `/api/tasks/v1/cancel/${id}`, { token });
    expect(c.status).toBe(200);
    expect(c.json.result.status).toBe('canceled');
    h.fixtures.release();
    // The worker reaches its next step and lets go of the job (completed jobs are removed); the
    // record must not have moved.
    await waitFor(
      async () => {
        const job = await h.services.queue.queue.getJob(id);
        return !job || ['completed', 'failed'].includes(await job.getState());
      },
      { what: 'the worker to finish with the canceled task' },
    );
    const t = await h.waitForTask(token, id);
    expect(t).toMatchObject({ status: 'canceled', output: null });
    expect(t.completed_at).not.toBeNull();
    expect(await h.services.accounts.balance(userId)).toBe(before);
    const again = await h.call('POST', `/api/tasks/v1/cancel/${id}`, { token });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ result: { error: 'task_already_ended', status: 'canceled' } });
  });

  it('refuses to cancel a succeeded task (409) and leaves it succeeded', async () => {
    const t = await runTask({ image: h.fixtures.url('/files/astronaut.png') });
    const c = await h.call('POST', `/api/tasks/v1/cancel/${t.task_id}`, { token });
    expect(c.status).toBe(409);
    expect(c.json.message.en).toMatch(/already ended \(succeeded\)/);
    expect((await h.waitForTask(token, t.task_id)).status).toBe('succeeded');
  });
});

describe('health', () => {
  it('is live, and ready with Redis up and a worker whose models are loaded', async () => {
    expect((await h.call('GET', '/health/live')).json).toEqual({ status: 'live' });
    const ready = await h.call('GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.json).toMatchObject({ status: 'ready', redis: 'ok' });
    expect(ready.json.workers).toBeGreaterThanOrEqual(1);
  });

  it('answers unknown routes with a 404 envelope', async () => {
    const r = await h.call('GET', '/api/tasks/v2/nothing');
    expect(r.status).toBe(404);
    expect(r.json.result.error).toBe('route_not_found');
  });
});
