// Every error the APIs document, produced through the routes: the app from buildApp() (wired by
// createApi over createServices, as `npm run api` does) on a real Redis, driven with app.inject().
// Each case checks the HTTP status, the envelope {code, result, message} and the message.
//
// Not every state comes from a request: a job's outcome is written by a worker. Those records are
// written here through the real stores, the same calls a worker makes (TaskStore.claim / succeed /
// fail / cancel, TaskStore.purge for retention). An outage (503 store_unavailable, 300101 with HTTP
// 503) is made by the real stores over a Redis connection that is closed; another server fault
// (500 internal, 300101) by a Redis error reply. The last test checks that the README's
// two tables list exactly the codes produced here.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config/env.ts';
import { taskOutputKey } from '../../src/domain/blob-keys.ts';
import { silentLogger } from '../../src/domain/logger.ts';
import { AppError, ErrorCatalog, JobCode, toJobError, type ErrorCode } from '../../src/errors/codes.ts';
import { createApi } from '../../src/main/api-root.ts';
import { createServices, type Services } from '../../src/main/services.ts';
import { deleteKeysWithPrefix } from '../../src/store/redis.ts';
import { hashApiKey } from '../../src/store/accounts.ts';

const FACE = 'ad38697f9baafa7cd5f79808e838acf3a57470368d9a9139f6926d5ab4d14044';
const HS = '/api/service/v1/ai-hairstyle';
const TO = '/api/service/v1/ai-virtual-try-on';

let dataDir: string;
let config: Config;
let services: Services;
let app: FastifyInstance;
let photo: Buffer; // a small JPEG: the job APIs check magic bytes and size only, no worker runs here

/** What the tests produced, to compare with the README's tables at the end. */
const produced = { slugs: new Set<string>(), jobCodes: new Set<number>() };

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-error-catalog-'));
  config = parseConfig({
    REDIS_URL: inject('redisUrl'),
    REDIS_PREFIX: `t${randomBytes(5).toString('hex')}`,
    DATA_DIR: dataDir,
    MODELS_DIR: path.resolve('models'),
    LOG_LEVEL: 'silent',
    // The outbound policy is on, as in production: private targets are refused at create time.
    ALLOW_PRIVATE_URLS: 'false',
    BODY_MAX_BYTES: '4096',
    JOB_FILE_MAX_BYTES: '100000',
  });
  services = createServices(config, config.redisUrl!, silentLogger);
  app = await createApi(config, services);
  photo = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#a0785a' } }).jpeg().toBuffer();
});
afterAll(async () => {
  await app?.close();
  if (services) {
    await deleteKeysWithPrefix(services.redis, config.redisKeyPrefix);
    await services.close();
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function user(credits: number) {
  const { apiKey, userId } = await services.accounts.createKey();
  if (credits) await services.accounts.addCredits(userId, credits, 'test');
  return { token: apiKey, userId, bearer: `Bearer ${apiKey}` };
}

/** A task API error: HTTP status = envelope code, result.error = the slug (plus details), message.en. */
function expectTaskError(res: LightMyRequestResponse, status: number, slug: string, en: string | RegExp, details: Record<string, unknown> = {}) {
  const body = res.json();
  expect(res.statusCode).toBe(status);
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'result']);
  expect(body.code).toBe(status);
  expect(body.result).toEqual({ error: slug, ...details });
  expect(Object.keys(body.message)).toEqual(['en']);
  if (typeof en === 'string') expect(body.message.en).toBe(en);
  else expect(body.message.en).toMatch(en);
  produced.slugs.add(slug);
}

/** A job API answer: HTTP 200 (500 for 300101, or 503 when Redis is down), the numeric code, result and message.en. */
function expectJobCode(res: LightMyRequestResponse, code: number, en: string | RegExp, result: unknown = {}, http = code === JobCode.SYSTEM_ERROR ? 500 : 200) {
  const body = res.json();
  expect(res.statusCode).toBe(http);
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'result']);
  expect(body.code).toBe(code);
  expect(body.result).toEqual(result);
  expect(Object.keys(body.message)).toEqual(['en']);
  if (typeof en === 'string') expect(body.message.en).toBe(en);
  else expect(body.message.en).toMatch(en);
  produced.jobCodes.add(code);
}

const createTask = (token: string | null, payload: unknown, a: FastifyInstance = app) =>
  a.inject({ method: 'POST', url: '/api/tasks/v1/create', headers: token ? { authorization: `Bearer ${token}` } : {}, payload: payload as object });

/** A multipart body as a real client (undici's FormData) writes it. */
async function multipart(parts: Array<[string, string | { bytes: Buffer; name: string }]>) {
  const form = new FormData();
  for (const [field, v] of parts) {
    if (typeof v === 'string') form.append(field, v);
    else form.append(field, new Blob([new Uint8Array(v.bytes)], { type: 'image/jpeg' }), v.name);
  }
  const r = new Response(form);
  return { payload: Buffer.from(await r.arrayBuffer()), contentType: r.headers.get('content-type')! };
}

async function createJob(api: string, auth: string | null, parts: Array<[string, string | { bytes: Buffer; name: string }]>, a: FastifyInstance = app) {
  const { payload, contentType } = await multipart(parts);
  return a.inject({ method: 'POST', url: `${api}/create-job`, headers: { 'content-type': contentType, ...(auth === null ? {} : { authorization: auth }) }, payload });
}
const getJob = (api: string, auth: string | null, jobId: string, a: FastifyInstance = app) =>
  a.inject({ method: 'GET', url: `${api}/get-job/${jobId}`, headers: auth === null ? {} : { authorization: auth } });

const hairstyleParts = (n = 1): Array<[string, string | { bytes: Buffer; name: string }]> => [['image_files', { bytes: photo, name: 'me.jpg' }], ['hair_color', 'red'], ['num_outputs', String(n)]];
const tryonParts = (): Array<[string, string | { bytes: Buffer; name: string }]> => [
  ['clothes_image', { bytes: photo, name: 'shirt.jpg' }],
  ['custom_model', { bytes: photo, name: 'me.jpg' }],
  ['clothes_type', 'upper_body'],
];

/** A task of `userId` that a worker ran to success, its outputs stored. */
async function succeededTask(token: string, outputs: string[]) {
  const create = await createTask(token, { version: FACE, input: { image: 'http://8.8.8.8/a.png' } });
  const taskId = create.json().result.task_id as string;
  await writeWorkerSuccess(taskId, outputs);
  return taskId;
}

/** What a worker writes when a run succeeds: the claim, the stored files, the success. */
async function writeWorkerSuccess(taskId: string, outputs: string[]) {
  expect((await services.tasks.claim(taskId)).result).toBe('ok');
  for (const name of outputs) await services.blobs.put(taskOutputKey(taskId, name), Buffer.from('x'));
  expect((await services.tasks.succeed(taskId, { outputKeys: outputs.map((n) => taskOutputKey(taskId, n)), logs: 'inference: 1.0 ms', predictTimeS: 0.001 })).result).toBe('ok');
}

describe('task API: every result.error of the README table', () => {
  it('400 body_invalid: a missing field, an unknown field, malformed JSON, a bad webhook_url, a forged list cursor', async () => {
    const { token } = await user(10);
    expectTaskError(await createTask(token, { input: {} }), 400, 'body_invalid', 'invalid request body: version: required, a 64-character version ID');
    expectTaskError(await createTask(token, { version: FACE, input: {}, priority: 1 }), 400, 'body_invalid', /^invalid request body: \(body\): .*"priority"/);
    expectTaskError(
      await createTask(token, { version: FACE, input: { image: 'http://8.8.8.8/a.png' }, webhook_url: 'javascript:alert(1)' }),
      400,
      'body_invalid',
      'invalid request body: webhook_url: must be an http(s) URL',
    );
    const malformed = await app.inject({ method: 'POST', url: '/api/tasks/v1/create', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: '{"version": ' });
    expectTaskError(malformed, 400, 'body_invalid', /^invalid request body: /);
    const list = await app.inject({ method: 'GET', url: '/api/tasks/v1/list?cursor=bm9wZQ', headers: { authorization: `Bearer ${token}` } });
    expectTaskError(list, 400, 'body_invalid', 'cursor: not a cursor returned by this API');
  });

  it('400 version_invalid', async () => {
    const { token } = await user(10);
    expectTaskError(await createTask(token, { version: 'abc', input: {} }), 400, 'version_invalid', 'version must be a 64-character lowercase hex ID (got 3 characters)');
    expectTaskError(await createTask(token, { version: FACE.toUpperCase(), input: {} }), 400, 'version_invalid', 'version must be lowercase hex (it has uppercase letters)');
  });

  it('401 auth_missing and auth_invalid, on every task API route', async () => {
    for (const [method, url] of [
      ['POST', '/api/tasks/v1/create'],
      ['GET', `/api/tasks/v1/get/${'0'.repeat(32)}`],
      ['POST', `/api/tasks/v1/cancel/${'0'.repeat(32)}`],
      ['GET', '/api/tasks/v1/list'],
      ['GET', `/files/tasks/${'0'.repeat(32)}/faces.json`],
    ] as const) {
      expectTaskError(await app.inject({ method, url }), 401, 'auth_missing', 'missing Authorization header (expected "Bearer <API token>")');
      expectTaskError(await app.inject({ method, url, headers: { authorization: 'Bearer ' } }), 401, 'auth_missing', /^missing Authorization header/);
      expectTaskError(await app.inject({ method, url, headers: { authorization: 'Bearer iwk_not-a-key' } }), 401, 'auth_invalid', 'invalid API token');
    }
  });

  it('402 insufficient_credits, with the balance and the cost; nothing is queued', async () => {
    const { token, userId } = await user(0);
    const r = await createTask(token, { version: FACE, input: { image: 'http://8.8.8.8/a.png' } });
    expectTaskError(r, 402, 'insufficient_credits', 'this costs 1 credits; the balance is 0', { balance: 0, cost: 1 });
    expect(await services.redis.zcard(`${config.redisKeyPrefix}:user:${userId}:tasks`)).toBe(0);
  });

  it('404 version_not_found', async () => {
    const { token } = await user(10);
    expectTaskError(await createTask(token, { version: 'f'.repeat(64), input: {} }), 404, 'version_not_found', `model version ${'f'.repeat(64)} not found`);
  });

  it("404 task_not_found: an unknown task and someone else's read the same", async () => {
    const a = await user(10);
    const b = await user(10);
    const mine = (await createTask(a.token, { version: FACE, input: { image: 'http://8.8.8.8/a.png' } })).json().result.task_id as string;
    const unknown = 'f'.repeat(32);
    expectTaskError(await app.inject({ method: 'GET', url: `/api/tasks/v1/get/${unknown}`, headers: { authorization: b.bearer } }), 404, 'task_not_found', `task ${unknown} not found`);
    expectTaskError(await app.inject({ method: 'GET', url: `/api/tasks/v1/get/${mine}`, headers: { authorization: b.bearer } }), 404, 'task_not_found', `task ${mine} not found`);
    expectTaskError(await app.inject({ method: 'POST', url: `/api/tasks/v1/cancel/${mine}`, headers: { authorization: b.bearer } }), 404, 'task_not_found', `task ${mine} not found`);
  });

  it("404 file_not_found: an unknown file, someone else's, a task without it", async () => {
    const a = await user(10);
    const b = await user(10);
    const taskId = await succeededTask(a.token, ['faces.json']); // written as a worker would
    const get = (name: string, auth: string) => app.inject({ method: 'GET', url: `/files/tasks/${taskId}/${name}`, headers: { authorization: auth } });
    expect((await get('faces.json', a.bearer)).statusCode).toBe(200); // the owner gets it
    expectTaskError(await get('faces.json', b.bearer), 404, 'file_not_found', `file faces.json of task ${taskId} not found`);
    expectTaskError(await get('other.json', a.bearer), 404, 'file_not_found', `file other.json of task ${taskId} not found`);
    expectTaskError(await app.inject({ method: 'GET', url: `/files/tasks/${'e'.repeat(32)}/faces.json`, headers: { authorization: a.bearer } }), 404, 'file_not_found', /^file faces\.json of task e+ not found$/);
  });

  it('410 file_expired: a purged task (written through the stores, as the retention sweeper does)', async () => {
    const a = await user(10);
    const taskId = await succeededTask(a.token, ['faces.json']);
    await services.tasks.purge(taskId);
    await services.blobs.removePrefix(`tasks/${taskId}`);
    const r = await app.inject({ method: 'GET', url: `/files/tasks/${taskId}/faces.json`, headers: { authorization: a.bearer } });
    expectTaskError(r, 410, 'file_expired', `outputs of task ${taskId} were deleted after the retention period`);
  });

  it('404 route_not_found', async () => {
    expectTaskError(await app.inject({ method: 'GET', url: '/api/tasks/v2/nothing?x=1' }), 404, 'route_not_found', 'no route GET /api/tasks/v2/nothing');
  });

  it('409 task_already_ended, with the status it ended in', async () => {
    const a = await user(10);
    const taskId = (await createTask(a.token, { version: FACE, input: { image: 'http://8.8.8.8/a.png' } })).json().result.task_id as string;
    const cancel = () => app.inject({ method: 'POST', url: `/api/tasks/v1/cancel/${taskId}`, headers: { authorization: a.bearer } });
    const first = await cancel();
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ code: 200, result: { task_id: taskId, status: 'canceled' }, message: { en: 'task canceled' } });
    expectTaskError(await cancel(), 409, 'task_already_ended', `task ${taskId} has already ended (canceled)`, { status: 'canceled' });
    const done = await succeededTask(a.token, ['faces.json']);
    expectTaskError(
      await app.inject({ method: 'POST', url: `/api/tasks/v1/cancel/${done}`, headers: { authorization: a.bearer } }),
      409,
      'task_already_ended',
      `task ${done} has already ended (succeeded)`,
      { status: 'succeeded' },
    );
  });

  it('413 body_too_large (BODY_MAX_BYTES is 4096 here)', async () => {
    const { token } = await user(10);
    const r = await createTask(token, { version: FACE, input: { image: `http://8.8.8.8/${'a'.repeat(5000)}` } });
    expectTaskError(r, 413, 'body_too_large', 'request body is larger than the limit');
  });

  it('422 input_invalid, naming the field path', async () => {
    const { token } = await user(10);
    expectTaskError(await createTask(token, { version: FACE, input: { image: 'astronaut.png' } }), 422, 'input_invalid', 'invalid input: input.image: must be an http(s) URL');
    expectTaskError(await createTask(token, { version: FACE, input: { image: 'http://8.8.8.8/a.png', min_score: 2 } }), 422, 'input_invalid', /^invalid input: input\.min_score: /);
  });

  it('422 url_not_allowed: a private input or webhook target, charging nothing', async () => {
    const { token, userId } = await user(5);
    expectTaskError(
      await createTask(token, { version: FACE, input: { image: 'http://10.0.0.5/a.png' } }),
      422,
      'url_not_allowed',
      "input.image: the URL's host is not a public address",
    );
    expectTaskError(
      await createTask(token, { version: FACE, input: { image: 'http://8.8.8.8/a.png' }, webhook_url: 'http://169.254.169.254/latest' }),
      422,
      'url_not_allowed',
      "webhook_url: the URL's host is not a public address",
    );
    expect(await services.accounts.balance(userId)).toBe(5);
  });
});

describe('task API: the create headers (Idempotency-Key, Cancel-After)', () => {
  it('400 idempotency_key_invalid, 400 cancel_after_invalid, 422 idempotency_key_reused; nothing charged by a refusal', async () => {
    const { token, userId } = await user(5);
    const body = { version: FACE, input: { image: 'http://8.8.8.8/a.png' } };
    const create = (payload: unknown, headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/api/tasks/v1/create', headers: { authorization: `Bearer ${token}`, ...headers }, payload: payload as object });
    expectTaskError(await create(body, { 'idempotency-key': 'k'.repeat(256) }), 400, 'idempotency_key_invalid', 'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID, say); it has 256 characters');
    expectTaskError(await create(body, { 'cancel-after': 'soon' }), 400, 'cancel_after_invalid', 'Cancel-After must be a duration such as 30s, 2m or 1h30m (got "soon")');
    expectTaskError(await create(body, { 'cancel-after': '48h' }), 400, 'cancel_after_invalid', 'Cancel-After must be from 1s to 24h (got 48h)');
    expect((await create(body, { 'idempotency-key': 'key-1' })).statusCode).toBe(200);
    expectTaskError(
      await create({ ...body, input: { image: 'http://8.8.8.8/b.png' } }, { 'idempotency-key': 'key-1' }),
      422,
      'idempotency_key_reused',
      /^this Idempotency-Key was already used with a different request/,
    );
    expect(await services.accounts.balance(userId)).toBe(4);
  });
});

describe('job APIs: every code of the README conformance table', () => {
  it('100000 on both create-jobs; 300102 while queued (no worker runs here)', async () => {
    const u = await user(100);
    for (const [api, parts] of [[HS, hairstyleParts()], [TO, tryonParts()]] as const) {
      const r = await createJob(api, u.token, parts);
      expectJobCode(r, 100000, 'Request success', { job_id: expect.stringMatching(/^[0-9a-f]{32}$/) });
      const jobId = r.json().result.job_id as string;
      const g = await getJob(api, u.bearer, jobId);
      expectJobCode(g, 300102, 'Image generation in progress', {
        job_id: jobId,
        message: '',
        output_image_url: [],
        input_image_url: (await services.jobs.get(jobId))!.inputs.map((n) => expect.stringContaining(`/inputs/${n}`)),
      });
    }
  });

  it('300103 for a hairstyle job and 100000 for a try-on job a worker finished (written through the stores)', async () => {
    const u = await user(100);
    for (const [api, parts, code, en, pictures] of [
      [HS, hairstyleParts(2), 300103, 'Image generated successfully', ['result-1.jpg', 'result-2.jpg']],
      [TO, tryonParts(), 100000, 'Request success', ['result-1.jpg']],
    ] as const) {
      const jobId = (await createJob(api, u.token, parts)).json().result.job_id as string;
      const job = (await services.jobs.get(jobId))!;
      // A worker's outputs: the pictures and files the job API does not list.
      await writeWorkerSuccess(job.taskId, [...pictures, 'analysis.json']);
      const g = await getJob(api, u.token, jobId);
      expectJobCode(g, code, en, {
        job_id: jobId,
        message: '',
        output_image_url: pictures.map((n) => `${config.publicBaseUrl}/files/jobs/${jobId}/${job.fileToken}/outputs/${n}`),
        input_image_url: job.inputs.map((n) => `${config.publicBaseUrl}/files/jobs/${jobId}/${job.fileToken}/inputs/${n}`),
      });
    }
  });

  it('300104 for a failed job with the reason, and for a canceled one (written through the stores)', async () => {
    const u = await user(100);
    const failed = (await createJob(HS, u.token, hairstyleParts())).json().result.job_id as string;
    const failedTask = (await services.jobs.get(failed))!.taskId;
    await services.tasks.claim(failedTask);
    expect((await services.tasks.fail(failedTask, 'NO_FACE_FOUND: no face found in image 2')).result).toBe('ok');
    const g = await getJob(HS, u.token, failed);
    expectJobCode(g, 300104, 'Image generation failed', { job_id: failed, message: 'no face found in image 2', output_image_url: [], input_image_url: expect.any(Array) });
    expect(await services.accounts.balance(u.userId)).toBe(100); // refunded

    const canceled = (await createJob(TO, u.token, tryonParts())).json().result.job_id as string;
    await services.tasks.cancel((await services.jobs.get(canceled))!.taskId);
    expectJobCode(await getJob(TO, u.token, canceled), 300104, 'Image generation failed', {
      job_id: canceled,
      message: 'the job was canceled',
      output_image_url: [],
      input_image_url: expect.any(Array),
    });
  });

  it('400101 when the balance is below the cost; nothing queued', async () => {
    const u = await user(11);
    expectJobCode(await createJob(HS, u.token, hairstyleParts(2)), 400101, 'Insufficient credits: this costs 12 credits; the balance is 11');
    const poor = await user(7);
    expectJobCode(await createJob(TO, poor.bearer, tryonParts()), 400101, 'Insufficient credits: this costs 8 credits; the balance is 7');
    for (const x of [u, poor]) expect(await services.redis.zcard(`${config.redisKeyPrefix}:user:${x.userId}:tasks`)).toBe(0);
    expect([await services.accounts.balance(u.userId), await services.accounts.balance(poor.userId)]).toEqual([11, 7]);
  });

  it('400301 for bad params, a non-image, a file over the cap, a non-multipart body', async () => {
    const u = await user(100);
    expectJobCode(
      await createJob(HS, u.token, [['image_files', { bytes: photo, name: 'me.jpg' }], ['hair_color', 'orange']]),
      400301,
      'Params error: hair_color: must be one of black, brown, blonde, red, white, grey, pink, blue, green, purple (got "orange")',
    );
    expectJobCode(await createJob(HS, u.token, [['image_files', { bytes: Buffer.from('<html>'), name: 'me.jpg' }], ['hair_color', 'red']]), 400301, 'Params error: image_files: file 1 (me.jpg) is not a JPEG, PNG or WebP image');
    expectJobCode(await createJob(HS, u.token, [['image_files', { bytes: Buffer.alloc(100_001, 0xff), name: 'big.jpg' }], ['hair_color', 'red']]), 400301, /^Params error: image_files: file 1 \(big\.jpg\) is larger than 100000 bytes/);
    expectJobCode(await createJob(TO, u.token, [['clothes_image', { bytes: photo, name: 'g.jpg' }], ['clothes_type', 'dresses']]), 400301, 'Params error: custom_model: exactly 1 file required');
    const json = await app.inject({ method: 'POST', url: `${HS}/create-job`, headers: { authorization: u.token, 'content-type': 'application/json' }, payload: '{"hair_color":"red"}' });
    expectJobCode(json, 400301, /^Params error: .*the body must be multipart\/form-data/);
    expect(await services.accounts.balance(u.userId)).toBe(100);
  });

  it('400302 and 400303 on all four endpoints', async () => {
    for (const [method, url] of [
      ['POST', `${HS}/create-job`],
      ['GET', `${HS}/get-job/${'a'.repeat(32)}`],
      ['POST', `${TO}/create-job`],
      ['GET', `${TO}/get-job/${'a'.repeat(32)}`],
    ] as const) {
      expectJobCode(await app.inject({ method, url }), 400302, 'Token is null');
      expectJobCode(await app.inject({ method, url, headers: { authorization: '' } }), 400302, 'Token is null');
      expectJobCode(await app.inject({ method, url, headers: { authorization: 'iwk_unknown' } }), 400303, 'Token error');
      expectJobCode(await app.inject({ method, url, headers: { authorization: 'Bearer iwk_unknown' } }), 400303, 'Token error');
    }
  });

  it("400501 for an unknown job, someone else's, the other API's, a malformed id", async () => {
    const a = await user(100);
    const b = await user(100);
    const jobId = (await createJob(TO, a.token, tryonParts())).json().result.job_id as string;
    for (const [api, auth, id] of [
      [TO, b.token, jobId],
      [HS, a.token, jobId],
      [TO, a.token, 'f'.repeat(32)],
      [TO, a.token, 'not-a-job'],
    ] as const) {
      expectJobCode(await getJob(api, auth, id), 400501, 'Task not found');
    }
  });

  it('200000 is never sent: no catalog error maps to it', () => {
    for (const code of Object.keys(ErrorCatalog) as ErrorCode[]) expect(toJobError(new AppError(code)).code).not.toBe(JobCode.FAILURE);
  });
});

describe('server faults: the real stores over a closed Redis connection', () => {
  let broken: { services: Services; app: FastifyInstance } | undefined;
  beforeAll(async () => {
    const s = createServices(config, config.redisUrl!, silentLogger);
    const a = await createApi(config, s);
    s.redis.disconnect(); // every store call now fails with ioredis's "Connection is closed."
    broken = { services: s, app: a };
  });
  afterAll(async () => {
    await broken?.app.close();
    await broken?.services.close();
  });

  it('503 store_unavailable on the task API, with Retry-After', async () => {
    for (const r of [
      await broken!.app.inject({ method: 'GET', url: `/api/tasks/v1/get/${'0'.repeat(32)}`, headers: { authorization: 'Bearer iwk_any' } }),
      await createTask('iwk_any', { version: FACE, input: { image: 'http://8.8.8.8/a.png' } }, broken!.app),
    ]) {
      expectTaskError(r, 503, 'store_unavailable', ErrorCatalog.STORE_UNAVAILABLE.message);
      expect(r.headers['retry-after']).toBe('2');
    }
  });

  it('300101 "System error" with HTTP 503 and Retry-After on the job APIs', async () => {
    const en = `System error: ${ErrorCatalog.STORE_UNAVAILABLE.message}`;
    for (const r of [await getJob(HS, 'iwk_any', 'a'.repeat(32), broken!.app), await createJob(TO, 'iwk_any', tryonParts(), broken!.app)]) {
      expectJobCode(r, 300101, en, {}, 503);
      expect(r.headers['retry-after']).toBe('2');
    }
  });

  it('500 internal / 300101 with HTTP 500 for any other server fault (a Redis error reply), with no detail leaked', async () => {
    // The key's entry holds the wrong type: Redis answers WRONGTYPE, a fault that is not an outage.
    await services.redis.hset(`${config.redisKeyPrefix}:apikey:${hashApiKey('iwk_wrongtype')}`, 'x', '1');
    const r = await app.inject({ method: 'GET', url: `/api/tasks/v1/get/${'0'.repeat(32)}`, headers: { authorization: 'Bearer iwk_wrongtype' } });
    expectTaskError(r, 500, 'internal', 'internal error');
    expect(r.headers['retry-after']).toBeUndefined();
    expectJobCode(await getJob(HS, 'iwk_wrongtype', 'a'.repeat(32)), 300101, 'System error');
    expectJobCode(await createJob(TO, 'iwk_wrongtype', tryonParts()), 300101, 'System error');
  });

  it('503 not_ready on /health/ready (Redis down)', async () => {
    const r = await broken!.app.inject({ method: 'GET', url: '/health/ready' });
    expect(r.statusCode).toBe(503);
    expect(r.json()).toEqual({ status: 'not_ready', redis: 'down', workers: 0 });
  });
});

describe('the README tables', () => {
  const readme = fs.readFileSync('README.md', 'utf8');

  it('list exactly the task API slugs and job API codes produced above', () => {
    const slugs = new Set([...readme.matchAll(/^\| \d{3} \| `([a-z_]+)` \|/gm)].map((m) => m[1]!));
    const jobCodes = new Set([...readme.matchAll(/^\| (\d{6}) "[^"]+" \|/gm)].map((m) => Number(m[1])));
    expect(slugs.size).toBeGreaterThan(10);
    expect([...produced.slugs].sort()).toEqual([...slugs].sort());
    jobCodes.delete(JobCode.FAILURE); // "in the spec's table but never sent" (checked above)
    expect([...produced.jobCodes].sort()).toEqual([...jobCodes].sort());
  });
});
