// The OpenAPI document against the running service: GET /openapi.json (no auth) is a valid
// OpenAPI 3.1 document, and real answers of a listening server with a worker (successes and
// errors of every documented operation) match the schema the document gives for that operation
// and status (ajv, JSON Schema 2020-12).
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACE_VERSION, startHarness, type CallResult, type Harness } from '../helpers/harness.ts';
import { answerChecker, validateDocument, type AnswerCheck } from '../helpers/openapi.ts';
import { tshirt } from '../helpers/garments.ts';
import { waitFor } from '../helpers/wait.ts';

const HS = '/api/service/v1/ai-hairstyle';
const TO = '/api/service/v1/ai-virtual-try-on';
const TASK = '0123456789abcdef0123456789abcdef';
let h: Harness;
let doc: Record<string, any>;
let check: AnswerCheck;
let face: Buffer; // a 256x256 JPEG portrait

beforeAll(async () => {
  h = await startHarness({ env: { JOB_FILE_MAX_BYTES: '400000' } });
  const res = await fetch(`${h.baseUrl}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as Record<string, any>;
  check = answerChecker(doc);
  face = await sharp('test/fixtures/astronaut.png').resize(256).jpeg({ quality: 85 }).toBuffer();
});
afterAll(() => h?.close());

/** The answer, after checking it against the document (`template`: the documented path). */
async function call(method: string, template: string, path: string, opts: Parameters<Harness['call']>[2] = {}): Promise<CallResult> {
  const r = await h.call(method, path, opts);
  check.expect(method, template, r);
  return r;
}

type Part = [field: string, value: string | { bytes: Buffer; name: string }];

/** A multipart request from a real client (fetch + FormData), checked against the document. */
async function form(template: string, parts: Part[], auth: string | null, headers: Record<string, string> = {}): Promise<CallResult> {
  const body = new FormData();
  for (const [field, v] of parts) {
    if (typeof v === 'string') body.append(field, v);
    else body.append(field, new Blob([new Uint8Array(v.bytes)], { type: 'image/jpeg' }), v.name);
  }
  const res = await fetch(h.baseUrl + template, { method: 'POST', headers: { ...headers, ...(auth ? { authorization: auth } : {}) }, body });
  const r = { status: res.status, json: await res.json(), headers: res.headers };
  check.expect('POST', template, r);
  return r;
}

const getJob = (api: string, jobId: string, auth: string | null) =>
  call('GET', `${api}/get-job/{job_id}`, `${api}/get-job/${jobId}`, { headers: auth ? { authorization: auth } : {} });

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, served without auth, naming the installed versions', async () => {
    const r = await validateDocument(doc);
    expect(r.errors).toBeUndefined();
    expect(r.valid).toBe(true);
    expect(doc.servers).toEqual([{ url: h.config.publicBaseUrl }]);
    expect(doc.components.schemas['TaskInput.face-detection'].description).toContain(FACE_VERSION);
    await call('GET', '/openapi.json', '/openapi.json');
  });
});

describe('the task API answers as documented', () => {
  it('create, get (queued or running, then ended), list, cancel and the output files', async () => {
    const { token } = await h.user(100);
    const create = await call('POST', '/api/tasks/v1/create', '/api/tasks/v1/create', { token, body: { version: FACE_VERSION, input: { image: h.fixtures.url('/files/astronaut.png') } } });
    expect(create.status).toBe(200);
    const id = create.json.result.task_id as string;
    await call('GET', '/api/tasks/v1/get/{task_id}', `/api/tasks/v1/get/${id}`, { token });
    const t = await h.waitForTask(token, id);
    expect(t.status).toBe('succeeded');
    await call('GET', '/api/tasks/v1/get/{task_id}', `/api/tasks/v1/get/${id}`, { token });
    await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') });
    const page = await call('GET', '/api/tasks/v1/list', '/api/tasks/v1/list?limit=1', { token });
    expect(page.json.result.next_cursor).toEqual(expect.any(String));
    await call('GET', '/api/tasks/v1/list', `/api/tasks/v1/list?limit=1&cursor=${page.json.result.next_cursor}`, { token });
    // Canceled while queued or running (200), or already ended (409): both are documented answers.
    const other = await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') });
    await call('POST', '/api/tasks/v1/cancel/{task_id}', `/api/tasks/v1/cancel/${other}`, { token });
    expect((await call('POST', '/api/tasks/v1/cancel/{task_id}', `/api/tasks/v1/cancel/${id}`, { token })).status).toBe(409);

    const files = '/files/tasks/{task_id}/{name}';
    for (const url of t.output as string[]) expect((await call('GET', files, url, { token })).status).toBe(200);
    expect((await call('GET', files, t.output[0], {})).status).toBe(401);
    expect((await call('GET', files, t.output[0].replace(/[^/]+$/, 'nothing.json'), { token })).status).toBe(404);
  });

  it('create with Idempotency-Key (a repeat, a reuse), Cancel-After and Prefer: wait', async () => {
    const { token } = await h.user(100);
    const body = { version: FACE_VERSION, input: { image: h.fixtures.url('/files/astronaut.png') } };
    const create = (headers: Record<string, string>, b: unknown = body) => call('POST', '/api/tasks/v1/create', '/api/tasks/v1/create', { token, body: b, headers });
    const key = `k-${Date.now()}`;
    const first = await create({ 'idempotency-key': key });
    const again = await create({ 'idempotency-key': key });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.result.task_id).toBe(first.json.result.task_id);
    expect((await create({ 'idempotency-key': key }, { ...body, webhook_url: 'http://127.0.0.1:1/x' })).json.result.error).toBe('idempotency_key_reused');
    expect((await create({ 'idempotency-key': 'x'.repeat(300) })).json.result.error).toBe('idempotency_key_invalid');
    expect((await create({ 'cancel-after': 'soon' })).json.result.error).toBe('cancel_after_invalid');
    expect((await create({ 'cancel-after': '2m' })).status).toBe(200);
    const waited = await create({ prefer: 'wait=20' });
    expect(waited.headers.get('preference-applied')).toBe('wait=20');
    expect(waited.json.result.status).toBe('succeeded');
  });

  it('errors: 400, 401, 402, 404, 409, 413 and 422 in the error envelope', async () => {
    const { token } = await h.user(100);
    const broke = await h.user(0);
    const create = (body: unknown, t: string | null = token) => call('POST', '/api/tasks/v1/create', '/api/tasks/v1/create', { token: t, body });
    const image = { image: h.fixtures.url('/files/astronaut.png') };
    const statuses = [
      (await create({ input: image })).status,
      (await create({ version: 'abc', input: image })).status,
      (await create({ version: FACE_VERSION, input: image }, null)).status,
      (await create({ version: FACE_VERSION, input: image }, 'iwk_not-a-key')).status,
      (await create({ version: FACE_VERSION, input: image }, broke.token)).status,
      (await create({ version: 'f'.repeat(64), input: image })).status,
      (await create({ version: FACE_VERSION, input: { image: 'x'.repeat(70_000) } })).status,
      (await create({ version: FACE_VERSION, input: { image: 'not a url' } })).status,
    ];
    expect(statuses).toEqual([400, 400, 401, 401, 402, 404, 413, 422]);
    expect((await call('GET', '/api/tasks/v1/get/{task_id}', `/api/tasks/v1/get/${TASK}`, { token })).status).toBe(404);
    expect((await call('GET', '/api/tasks/v1/get/{task_id}', `/api/tasks/v1/get/${TASK}`, {})).status).toBe(401);
    expect((await call('POST', '/api/tasks/v1/cancel/{task_id}', `/api/tasks/v1/cancel/${TASK}`, { token })).status).toBe(404);
    expect((await call('GET', '/api/tasks/v1/list', '/api/tasks/v1/list?limit=0', { token })).status).toBe(400);
    expect((await call('GET', '/api/tasks/v1/list', '/api/tasks/v1/list', {})).status).toBe(401);
  });
});

describe('the job APIs answer as documented', () => {
  const finished = (api: string, jobId: string, token: string) =>
    waitFor(async () => {
      const job = await getJob(api, jobId, token);
      return job.json.code === 300102 ? undefined : job;
    }, { timeoutMs: 50_000, what: `job ${jobId} to end` });

  it('hairstyle: create-job, get-job in progress and done, the job files', async () => {
    const { token } = await h.user(100);
    const r = await form(`${HS}/create-job`, [['image_files', { bytes: face, name: 'me.jpg' }], ['hair_color', 'blonde'], ['num_outputs', '1']], token);
    expect(r.json.code).toBe(100000);
    await getJob(HS, r.json.result.job_id, token);
    const job = await finished(HS, r.json.result.job_id, token);
    expect(job.json.code).toBe(300103);
    const files = '/files/jobs/{job_id}/{token}/{kind}/{name}';
    for (const url of [...job.json.result.output_image_url, ...job.json.result.input_image_url] as string[]) {
      expect((await call('GET', files, url)).status).toBe(200);
    }
    expect((await call('GET', files, job.json.result.output_image_url[0].replace(/\/[0-9a-f]{32}\/outputs/, `/${'0'.repeat(32)}/outputs`))).status).toBe(404);
  }, 60_000);

  it('try-on: create-job, then a failed job (300104)', async () => {
    const { token } = await h.user(100);
    const shirt = { bytes: await tshirt(), name: 'shirt.png' };
    const r = await form(`${TO}/create-job`, [['clothes_image', shirt], ['custom_model', shirt], ['clothes_type', 'upper_body']], `Bearer ${token}`);
    expect(r.json.code).toBe(100000);
    expect((await finished(TO, r.json.result.job_id, token)).json.code).toBe(300104);
  }, 60_000);

  it('errors: 400101, 400301, 400302, 400303 and 400501', async () => {
    const { token } = await h.user(100);
    const broke = await h.user(0);
    const codes = [
      (await form(`${HS}/create-job`, [['hair_color', 'blonde']], token)).json.code,
      (await form(`${TO}/create-job`, [['clothes_type', 'upper_body']], null)).json.code,
      (await form(`${TO}/create-job`, [['clothes_type', 'upper_body']], 'iwk_not-a-key')).json.code,
      (await form(`${HS}/create-job`, [['hair_color', 'blonde']], broke.token)).json.code,
      (await getJob(TO, TASK, token)).json.code,
      (await getJob(HS, TASK, null)).json.code,
      (await getJob(HS, TASK, 'iwk_not-a-key')).json.code,
      (await form(`${HS}/create-job`, [['hair_color', 'blonde']], token, { 'idempotency-key': 'x'.repeat(300) })).json.code,
    ];
    expect(codes).toEqual([400301, 400302, 400303, 400101, 400501, 400302, 400303, 400301]);
  });
});

describe('operations', () => {
  it('health, readiness and metrics', async () => {
    expect((await call('GET', '/health/live', '/health/live')).status).toBe(200);
    expect((await call('GET', '/health/ready', '/health/ready')).status).toBe(200);
    expect((await call('GET', '/metrics', '/metrics')).status).toBe(200);
  });

  it('every documented operation was answered and checked above', () => {
    const operations = Object.entries(doc.paths as Record<string, object>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    const answered = new Set([...check.checked].map((c) => c.replace(/ \d+$/, '')));
    expect(operations.filter((o) => !answered.has(o))).toEqual([]);
  });
});
