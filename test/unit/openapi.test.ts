// The OpenAPI document without Redis: it builds, a real OpenAPI 3.1 validator accepts it, the app
// serves it at /openapi.json without auth, it documents exactly the routes the app registers, and
// the answers the envelope builders make conform to it (real answers of a running server are
// checked in test/e2e/openapi.redis.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from '../../src/api/app.ts';
import { errorEnvelope, ok } from '../../src/api/envelope.ts';
import { buildOpenApiDocument } from '../../src/api/openapi.ts';
import { toTaskView, type TaskRecord } from '../../src/domain/task.ts';
import { AppError, JobCode, toJobError } from '../../src/errors/codes.ts';
import { PIPELINE_SPECS } from '../../src/pipelines/specs.ts';
import { DOC_ID, answerChecker, documentAjv, validateDocument } from '../helpers/openapi.ts';

const VERSION = 'ad38697f9baafa7cd5f79808e838acf3a57470368d9a9139f6926d5ab4d14044';
const versions = new Map([[VERSION, { id: VERSION, manifest: { name: 'face-detection-blazeface', pipeline: 'face-detection' } }]]);
const doc = buildOpenApiDocument({ publicBaseUrl: 'https://api.example.test', pipelines: PIPELINE_SPECS, versions: versions.values(), metrics: true }) as Record<string, any>;
const check = answerChecker(doc);

describe('the document', () => {
  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const r = await validateDocument(doc);
    expect(r.errors).toBeUndefined();
    expect([r.valid, r.version, doc.openapi]).toEqual([true, '3.1', '3.1.1']);
  });

  it('has component schemas that are strict JSON Schema 2020-12 (every one compiles under ajv strict mode)', () => {
    const ajv = documentAjv(doc);
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.getSchema(`${DOC_ID}#/components/schemas/${name}`), name).not.toThrow();
    }
  });

  it('and those checks have teeth: a malformed operation or schema is refused', async () => {
    const badParam = structuredClone(doc);
    badParam.paths['/api/tasks/v1/get/{task_id}'].get.parameters[0].in = 'body';
    expect((await validateDocument(badParam)).valid).toBe(false);
    // The OpenAPI schema leaves Schema Objects to the JSON Schema dialect: ajv checks those.
    const badSchema = structuredClone(doc);
    badSchema.components.schemas.Task.type = 'objekt';
    expect(() => documentAjv(badSchema).getSchema(`${DOC_ID}#/components/schemas/Task`)).toThrow(/type/);
  });

  it('takes the task input schemas from the pipelines, naming the installed versions', () => {
    const schemas = doc.components.schemas;
    for (const name of Object.keys(PIPELINE_SPECS)) expect(schemas[`TaskInput.${name}`]?.type, name).toBe('object');
    expect(schemas['TaskInput.face-detection'].description).toContain(VERSION);
    expect(schemas['TaskInput.face-detection'].properties.min_score).toEqual({ type: 'number', minimum: 0, maximum: 1 });
    expect(schemas.CreateTaskRequest.required).toEqual(['version', 'input']);
    expect(schemas.CreateTaskRequest.additionalProperties).toBe(false);
    expect(schemas.CreateTaskRequest.properties.input.anyOf).toHaveLength(Object.keys(PIPELINE_SPECS).length);
    // The hairstyle rules are the task input's and the job form's alike: one zod schema.
    expect(schemas.HairstyleJobForm.properties.hair_color).toEqual(schemas['TaskInput.hairstyle'].properties.hair_color);
    expect(schemas.HairstyleJobForm.properties.hair_color.enum).toContain('blonde');
    expect(schemas.HairstyleJobForm.required).toEqual(['image_files', 'hair_color']);
    expect(schemas.HairstyleJobForm.properties.image_files).toMatchObject({ type: 'array', minItems: 1, maxItems: 4 });
    expect(schemas.TryonJobForm.required).toEqual(['clothes_image', 'custom_model', 'clothes_type']);
    expect(schemas.TryonJobForm.properties.clothes_type.enum).toEqual(['upper_body', 'lower_body', 'dresses']);
  });

  it('describes multipart bodies, Bearer security, and the error statuses from the catalog', () => {
    const create = doc.paths['/api/service/v1/ai-virtual-try-on/create-job'].post;
    expect(Object.keys(create.requestBody.content)).toEqual(['multipart/form-data']);
    expect(create.requestBody.content['multipart/form-data'].encoding.clothes_image.contentType).toMatch(/image\/png/);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/health/live'].get.security).toEqual([]);
    const createTask = doc.paths['/api/tasks/v1/create'].post.responses;
    expect(Object.keys(createTask).sort()).toEqual(['200', '400', '401', '402', '404', '413', '422', '500', '503']);
    expect(createTask['503'].headers['Retry-After']).toBeDefined();
    expect(createTask['422'].content['application/json'].schema.allOf[1].properties.result.properties.error.enum).toEqual(['input_invalid', 'url_not_allowed', 'idempotency_key_reused']);
  });

  it("describes the create operations' headers: Idempotency-Key, Cancel-After, Prefer: wait", () => {
    const names = (op: { parameters?: Array<{ name: string; in: string }> }) => (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
    const createTask = doc.paths['/api/tasks/v1/create'].post;
    expect(names(createTask)).toEqual(['Idempotency-Key', 'Cancel-After', 'Prefer']);
    expect(Object.keys(createTask.responses['200'].headers)).toEqual(['Idempotent-Replayed', 'Preference-Applied']);
    // Either answer is strict: a create answer's task_id is one of ours (32 hex), not any text.
    expect(check.problems('POST', '/api/tasks/v1/create', 200, { code: 200, result: { task_id: 'x', task_cost: 1 }, message: {} })).not.toEqual([]);
    for (const api of ['ai-hairstyle', 'ai-virtual-try-on']) expect(names(doc.paths[`/api/service/v1/${api}/create-job`].post)).toEqual(['Idempotency-Key']);
  });

  it('leaves /metrics out when the app serves none', () => {
    const bare = buildOpenApiDocument({ publicBaseUrl: 'http://x', pipelines: PIPELINE_SPECS, metrics: false }) as Record<string, any>;
    expect(bare.paths['/metrics']).toBeUndefined();
    expect(doc.paths['/metrics'].get.responses['200'].content['text/plain']).toBeDefined();
  });
});

describe('the answers the API builds conform to it', () => {
  const record: TaskRecord = {
    taskId: '0123456789abcdef0123456789abcdef',
    userId: 7,
    version: VERSION as TaskRecord['version'],
    pipeline: 'face-detection',
    jobId: null,
    input: {},
    webhookUrl: null,
    status: 'succeeded',
    error: null,
    logs: 'inference: 3.0 ms',
    outputKeys: ['tasks/0123456789abcdef0123456789abcdef/outputs/faces.json'],
    predictTimeS: 0.01,
    totalTimeS: 0.02,
    createdMs: 1_700_000_000_000,
    completedMs: 1_700_000_000_020,
    cost: 1,
    attempts: 1,
    purgedMs: null,
  };
  const view = toTaskView(record, (k) => `https://api.example.test/files/${k}`);

  it('task API successes', () => {
    expect(check.problems('POST', '/api/tasks/v1/create', 200, ok({ task_id: record.taskId, task_cost: 1 }, 'task created'))).toEqual([]);
    expect(check.problems('POST', '/api/tasks/v1/create', 200, ok(view, 'task succeeded'))).toEqual([]);
    expect(check.problems('GET', '/api/tasks/v1/get/{task_id}', 200, ok(view))).toEqual([]);
    const running = toTaskView({ ...record, status: 'processing', outputKeys: null, logs: null, predictTimeS: null, totalTimeS: null, completedMs: null }, (k) => k);
    expect(check.problems('GET', '/api/tasks/v1/get/{task_id}', 200, ok(running))).toEqual([]);
    expect(check.problems('GET', '/api/tasks/v1/list', 200, ok({ tasks: [view], next_cursor: null }))).toEqual([]);
    expect(check.problems('POST', '/api/tasks/v1/cancel/{task_id}', 200, ok({ ...view, status: 'canceled' }, 'task canceled'))).toEqual([]);
  });

  it('task API errors, each at its catalog status', () => {
    const cases: Array<[string, string, AppError]> = [
      ['POST', '/api/tasks/v1/create', new AppError('INSUFFICIENT_CREDITS', 'this costs 1 credits; the balance is 0', { balance: 0, cost: 1 })],
      ['POST', '/api/tasks/v1/create', new AppError('INPUT_INVALID', 'invalid input: input.image: must be an http(s) URL')],
      ['POST', '/api/tasks/v1/create', new AppError('STORE_UNAVAILABLE')],
      ['POST', '/api/tasks/v1/create', new AppError('IDEMPOTENCY_KEY_REUSED')],
      ['POST', '/api/tasks/v1/create', new AppError('CANCEL_AFTER_INVALID')],
      ['GET', '/api/tasks/v1/get/{task_id}', new AppError('AUTH_MISSING')],
      ['POST', '/api/tasks/v1/cancel/{task_id}', new AppError('TASK_ALREADY_ENDED', 'task x has already ended (succeeded)', { status: 'succeeded' })],
      ['GET', '/files/tasks/{task_id}/{name}', new AppError('FILE_EXPIRED')],
    ];
    for (const [method, path, e] of cases) expect(check.problems(method, path, e.status, errorEnvelope(e)), `${path} ${e.code}`).toEqual([]);
  });

  it('job API answers', () => {
    const en = (e: AppError) => ({ code: toJobError(e).code, result: {}, message: { en: toJobError(e).en } });
    const HS = '/api/service/v1/ai-hairstyle';
    expect(check.problems('POST', `${HS}/create-job`, 200, { code: 100000, result: { job_id: record.taskId }, message: { en: 'Request success' } })).toEqual([]);
    expect(check.problems('POST', `${HS}/create-job`, 200, en(new AppError('JOB_PARAMS_INVALID', 'hair_color: required')))).toEqual([]);
    expect(check.problems('POST', `${HS}/create-job`, 503, en(new AppError('STORE_UNAVAILABLE')))).toEqual([]);
    const fetched = { output_image_url: [], input_image_url: ['https://x/1.jpg'], job_id: record.taskId, message: '' };
    expect(check.problems('GET', `${HS}/get-job/{job_id}`, 200, { code: JobCode.GENERATED, result: fetched, message: { en: 'Image generated successfully' } })).toEqual([]);
    expect(check.problems('GET', `${HS}/get-job/{job_id}`, 200, en(new AppError('JOB_NOT_FOUND')))).toEqual([]);
  });

  it('and the check has teeth: a wrong code, a missing field or an undocumented status fails', () => {
    expect(check.problems('GET', '/api/tasks/v1/get/{task_id}', 200, ok({ ...view, status: 'done' }))).not.toEqual([]);
    const { logs: _logs, ...noLogs } = view;
    expect(check.problems('GET', '/api/tasks/v1/get/{task_id}', 200, ok(noLogs))).not.toEqual([]);
    expect(check.problems('GET', '/api/tasks/v1/get/{task_id}', 404, errorEnvelope(new AppError('FILE_NOT_FOUND')))).not.toEqual([]);
    expect(check.problems('GET', '/api/tasks/v1/get/{task_id}', 402, errorEnvelope(new AppError('INSUFFICIENT_CREDITS')))).not.toEqual([]);
    // 300103 is the hairstyle API's "done"; try-on answers 100000.
    const fetched = { output_image_url: [], input_image_url: [], job_id: 'x', message: '' };
    expect(check.problems('GET', '/api/service/v1/ai-virtual-try-on/get-job/{job_id}', 200, { code: JobCode.GENERATED, result: fetched, message: { en: '' } })).not.toEqual([]);
  });
});

describe('served by the app', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    // Nothing here reaches Redis: building the app and the document needs none of the stores.
    const deps = {
      registry: { versions },
      publicBaseUrl: 'https://api.example.test',
      bodyMaxBytes: 65_536,
      maxPixels: 1_000_000,
      jobs: { fileMaxBytes: 1_000_000, uploadInflightMaxBytes: 10_000_000, retentionMs: 86_400_000, versions: { hairstyle: undefined, tryon: undefined } },
      readyRequiresWorker: false,
      logLevel: 'silent',
      metrics: { contentType: 'text/plain', scrape: async () => '' },
    } as unknown as AppDeps;
    app = await buildApp(deps);
  });
  afterAll(() => app?.close());

  it('at GET /openapi.json, without auth, the same document each time', async () => {
    const r = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.json()).toEqual(doc);
    expect((await app.inject({ method: 'GET', url: '/openapi.json' })).body).toBe(r.body);
  });

  it('documents exactly the routes the app registers', () => {
    const routes = new Set<string>();
    for (const m of app.printRoutes({ commonPrefix: false }).matchAll(/(\/\S*) \(([^)]+)\)/g)) {
      for (const method of m[2]!.split(', ')) if (method !== 'HEAD') routes.add(`${method} ${m[1]!.replace(/:(\w+)/g, '{$1}')}`);
    }
    const documented = new Set(Object.entries(doc.paths as Record<string, object>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)));
    expect([...routes].sort()).toEqual([...documented].sort());
  });
});
