// The OpenAPI 3.1 document of the HTTP API, generated from the zod schemas the routes validate
// requests with (routes/tasks.ts, the pipelines' spec.ts, the job APIs' form fields) and the
// response schemas of schemas.ts, with zod's own z.toJSONSchema (JSON Schema 2020-12, the dialect
// OpenAPI 3.1 uses). No route declares a fastify schema: fastify would then validate and serialize
// with its own compilers, changing answers and costing the create path; the document is built once
// when it is first asked for (routes/openapi.ts).
import { z } from 'zod';
import { ErrorCatalog, JobCode, retryAfterS, type ErrorCode } from '../errors/codes.ts';
import { IDEMPOTENCY_TTL_MS } from '../domain/idempotency.ts';
import { PROMPT_MAX_LENGTH } from '../domain/job.ts';
import { TaskViewSchema } from '../domain/task.ts';
import { VersionIdSchema } from '../domain/version-id.ts';
import type { PipelineSpec } from '../pipelines/spec.ts';
import { CreateBody, ListQuery } from './routes/tasks.ts';
import { JOB_APIS, type JobSpec } from './routes/jobs.ts';
import { MAX_WAIT_S } from './request-headers.ts';
import {
  CreateTaskResponseSchema,
  CreateTaskResultSchema,
  ErrorResponseSchema,
  JobAcceptedResponseSchema,
  JobFetchResultSchema,
  LiveResponseSchema,
  ReadyResponseSchema,
  TaskListResponseSchema,
  TaskResponseSchema,
  errorName,
  jobErrorResponseSchema,
  jobFetchResponseSchema,
} from './schemas.ts';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** The `servers` entry: where clients reach this API (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  /** Pipeline name -> spec: the task input schemas (pipelines/specs.ts). */
  pipelines: Readonly<Record<string, PipelineSpec>>;
  /** Installed versions, named under the input schema of their pipeline (which input a version takes). */
  versions?: Iterable<{ id: string; manifest: { name: string; pipeline: string } }>;
  /** Whether GET /metrics is served. */
  metrics: boolean;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json) => ({ 'application/json': { schema } });
const pascal = (s: string) => s.replace(/(^|[-_])(\w)/g, (_m, _sep, c: string) => c.toUpperCase());

/**
 * z.toJSONSchema options for every conversion here. zod writes an integer's implicit safe-integer
 * bounds (+-2^53-1) as minimum/maximum; they say nothing to a reader, so they are left out.
 */
const JSON_SCHEMA = {
  target: 'draft-2020-12',
  override: ({ jsonSchema: s }: { jsonSchema: { minimum?: number; maximum?: number } }) => {
    if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
    if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
  },
} as const;

/** Errors every authenticated operation can answer besides its own. */
const COMMON: ErrorCode[] = ['AUTH_MISSING', 'AUTH_INVALID', 'STORE_UNAVAILABLE', 'INTERNAL'];

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } },
};

/**
 * The task API's error answers for `codes`, one response per HTTP status (from the catalog), each
 * narrowing the envelope to that status and those codes.
 */
function errorResponses(codes: ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ErrorCatalog[c].status, [...(byStatus.get(ErrorCatalog[c].status) ?? []), c]);
  const out: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const names = list.map(errorName);
    out[String(status)] = {
      description: list.map((c) => `\`${errorName(c)}\`: ${ErrorCatalog[c].message}`).join('; '),
      ...(list.some((c) => retryAfterS(c) !== undefined) ? { headers: RETRY_AFTER } : {}),
      content: json({
        allOf: [ref('ErrorResponse'), { type: 'object', properties: { code: { const: status }, result: { type: 'object', properties: { error: { enum: names } } } } }],
      }),
    };
  }
  return out;
}

/** A path parameter; `pattern` where the id format is ours (anything else answers not-found). */
const pathParam = (name: string, description: string, schema: Json = { type: 'string' }) => ({ name, in: 'path', required: true, description, schema });
const taskIdParam = pathParam('task_id', 'The task id returned by create.', { type: 'string', pattern: '^[0-9a-f]{32}$' });

/** The job APIs' answers beside HTTP 200: a server fault (300101), 503 with Retry-After when Redis or the upload budget is out. */
const JOB_FAULTS = {
  '500': { description: '300101 System error: a server fault.', content: json(ref('JobSystemErrorResponse')) },
  '503': {
    description: '300101 System error: the data store (Redis) is unreachable, or too many uploads are being received at once. Nothing was charged; try again after Retry-After.',
    headers: RETRY_AFTER,
    content: json(ref('JobSystemErrorResponse')),
  },
};

const JOB_SECURITY = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

// The create operations' request headers (request-headers.ts reads them).
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    `Makes the create safe to retry: the same key with the same request from the same user within ${IDEMPOTENCY_TTL_MS / 3_600_000} h (on create-task, as long as the task's record is kept) ` +
    'answers the first request\'s id and charges once (the answer then carries `Idempotent-Replayed: true`); the same key with a ' +
    'different request is refused. 1 to 255 visible ASCII characters (a UUID, say).',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};
const CANCEL_AFTER = {
  name: 'Cancel-After',
  in: 'header',
  required: false,
  description:
    'A deadline: a task not ended this long after its creation ends `canceled` (refunded if it never started; a running one ' +
    'stops at its next step). Whole numbers with units h, m, s, ms, largest first: `30s`, `2m`, `1h30m`; 1 s to 24 h.',
  schema: { type: 'string', examples: ['30s', '2m', '1h30m'] },
};
const PREFER = {
  name: 'Prefer',
  in: 'header',
  required: false,
  description:
    `\`wait=N\` (RFC 7240, N <= ${MAX_WAIT_S} s; more is applied as ${MAX_WAIT_S}): when the task ends within N seconds the answer's ` +
    'result is the task record instead of `{task_id, task_cost}` (and the answer carries `Preference-Applied`). ' +
    'A preference that cannot be read is ignored.',
  schema: { type: 'string', examples: ['wait=30'] },
};
const REPLAYED = { 'Idempotent-Replayed': { description: '`true` when an Idempotency-Key repeat was answered with the first request\'s id.', schema: { type: 'string', const: 'true' } } };

/** A job API's multipart body: its file parts (spec.fileFields) and its text fields (the pipeline's zod rules). */
function jobForm(spec: JobSpec): Json {
  const fields = z.toJSONSchema(spec.fields, { ...JSON_SCHEMA, io: 'input' }) as Json & { properties: Json; required?: string[] };
  const binary = { type: 'string', contentMediaType: 'application/octet-stream', description: 'A JPEG, PNG or WebP image (checked by its bytes).' };
  const files: Json = {};
  for (const [field, { min, max }] of Object.entries(spec.fileFields)) {
    files[field] = max > 1 ? { type: 'array', minItems: min, maxItems: max, items: binary, description: `${min} to ${max} files, each its own part named ${field}.` } : binary;
  }
  return {
    type: 'object',
    description:
      'Text fields are plain form values: integers as digits, booleans as true/false, 1/0, yes/no or on/off; ' +
      'an empty value counts as absent. Unknown fields are refused (400301), naming the field.',
    properties: { ...files, ...fields.properties },
    required: [...Object.entries(spec.fileFields).filter(([, v]) => v.min > 0).map(([k]) => k), ...(fields.required ?? [])],
    additionalProperties: false,
  };
}

/** Codes a job's get-job answers with, by its state: in progress, done (per API), failed. */
const jobStateCodes = (spec: JobSpec) => [JobCode.IN_PROGRESS, spec.doneCode, JobCode.GENERATION_FAILED] as [number, ...number[]];

/** Component schemas from zod: request schemas as they are read (input), answers as they are written (output). */
function componentSchemas(o: OpenApiOptions): Record<string, Json> {
  const byPipeline = new Map<string, string[]>();
  for (const v of o.versions ?? []) byPipeline.set(v.manifest.pipeline, [...(byPipeline.get(v.manifest.pipeline) ?? []), `\`${v.manifest.name}\` (${v.id})`]);

  const inputs = z.registry<{ id: string }>();
  // A copy per pipeline (meta() copies): pipelines may share one schema object, and each gets its own component.
  const pipelineInputs = Object.entries(o.pipelines)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, spec]) => {
      const versions = byPipeline.get(name);
      const input = spec.input.meta({ description: `\`input\` of a version of the ${name} pipeline.${versions ? ` Installed: ${versions.join(', ')}.` : ''}` });
      inputs.add(input, { id: `TaskInput.${name}` });
      return input;
    });
  // The body as the route reads it; `version` and `input` as the route goes on to check them.
  const createBody = CreateBody.extend({
    version: VersionIdSchema.meta({ description: 'The 64-character lowercase hex model version ID.' }),
    input: z.union(pipelineInputs as [z.ZodType, ...z.ZodType[]]).meta({
      description: "The model's input; its schema is the one of the version's pipeline (TaskInput.<pipeline>). Files are http(s) URLs.",
    }),
    webhook_url: CreateBody.shape.webhook_url.meta({ description: 'Receives a POST with the task record when the task ends.' }),
  });
  inputs.add(createBody, { id: 'CreateTaskRequest' });

  const outputs = z.registry<{ id: string }>();
  const add = (schema: z.ZodType, id: string) => outputs.add(schema, { id });
  add(TaskViewSchema, 'Task');
  add(CreateTaskResultSchema, 'CreateTaskResult');
  add(CreateTaskResponseSchema, 'CreateTaskResponse');
  add(TaskResponseSchema, 'TaskResponse');
  add(TaskListResponseSchema, 'TaskListResponse');
  add(ErrorResponseSchema, 'ErrorResponse');
  add(JobAcceptedResponseSchema, 'JobAcceptedResponse');
  add(JobFetchResultSchema, 'JobFetchResult');
  add(jobErrorResponseSchema([JobCode.INSUFFICIENT_CREDITS, JobCode.PARAMS_ERROR, JobCode.TOKEN_NULL, JobCode.TOKEN_ERROR]), 'JobCreateErrorResponse');
  add(jobErrorResponseSchema([JobCode.TOKEN_NULL, JobCode.TOKEN_ERROR, JobCode.TASK_NOT_FOUND]), 'JobFetchErrorResponse');
  add(jobErrorResponseSchema([JobCode.SYSTEM_ERROR]), 'JobSystemErrorResponse');
  for (const spec of JOB_APIS) add(jobFetchResponseSchema(jobStateCodes(spec)), `${pascal(spec.kind)}JobResponse`);
  add(LiveResponseSchema, 'LiveResponse');
  add(ReadyResponseSchema, 'ReadyResponse');

  const uri = (id: string) => `#/components/schemas/${id}`;
  const all: Record<string, Json> = {};
  for (const [reg, io] of [[inputs, 'input'], [outputs, 'output']] as const) {
    const { schemas } = z.toJSONSchema(reg, { ...JSON_SCHEMA, io, uri, unrepresentable: 'throw' }) as { schemas: Record<string, Json> };
    for (const [id, schema] of Object.entries(schemas)) {
      if (all[id]) throw new Error(`OpenAPI: component schema ${id} is defined twice`);
      // Components live in the document: a "#/..." $id would be a second base URI, and $schema is the document's.
      const { $id: _id, $schema: _schema, ...rest } = schema;
      all[id] = rest;
    }
  }
  for (const spec of JOB_APIS) all[`${pascal(spec.kind)}JobForm`] = jobForm(spec);
  return all;
}

function taskPaths(): Json {
  const listQuery = z.toJSONSchema(ListQuery, { ...JSON_SCHEMA, io: 'input' }) as { properties: Record<string, Json>; required?: string[] };
  return {
    '/api/tasks/v1/create': {
      post: {
        operationId: 'createTask',
        tags: ['tasks'],
        summary: 'Create a task: run a model version on an input',
        description: "Charges the version's cost at once (refunded if the task fails). Poll get, pass `webhook_url`, or ask to wait with `Prefer`.",
        parameters: [IDEMPOTENCY_KEY, CANCEL_AFTER, PREFER],
        requestBody: { required: true, content: json(ref('CreateTaskRequest')) },
        responses: {
          '200': {
            description: 'The task was created and queued (`{task_id, task_cost}`), or, with `Prefer: wait=N`, ended within N seconds (the task record).',
            headers: {
              ...REPLAYED,
              'Preference-Applied': { description: '`wait=N` when `Prefer: wait=N` was applied (whether or not the task ended in time).', schema: { type: 'string' } },
            },
            content: json({ oneOf: [ref('CreateTaskResponse'), ref('TaskResponse')] }),
          },
          ...errorResponses([
            'BODY_INVALID',
            'VERSION_INVALID',
            'IDEMPOTENCY_KEY_INVALID',
            'CANCEL_AFTER_INVALID',
            ...COMMON,
            'INSUFFICIENT_CREDITS',
            'VERSION_NOT_FOUND',
            'BODY_TOO_LARGE',
            'INPUT_INVALID',
            'URL_NOT_ALLOWED',
            'IDEMPOTENCY_KEY_REUSED',
          ]),
        },
      },
    },
    '/api/tasks/v1/get/{task_id}': {
      get: {
        operationId: 'getTask',
        tags: ['tasks'],
        summary: 'Read a task',
        parameters: [taskIdParam],
        responses: {
          '200': { description: 'The task record.', content: json(ref('TaskResponse')) },
          ...errorResponses([...COMMON, 'TASK_NOT_FOUND']),
        },
      },
    },
    '/api/tasks/v1/list': {
      get: {
        operationId: 'listTasks',
        tags: ['tasks'],
        summary: "The caller's tasks, newest first (an extension of the spec)",
        parameters: Object.entries(listQuery.properties).map(([name, schema]) => ({ name, in: 'query', required: listQuery.required?.includes(name) ?? false, schema })),
        responses: {
          '200': { description: 'A page of tasks.', content: json(ref('TaskListResponse')) },
          ...errorResponses(['BODY_INVALID', ...COMMON]),
        },
      },
    },
    '/api/tasks/v1/cancel/{task_id}': {
      post: {
        operationId: 'cancelTask',
        tags: ['tasks'],
        summary: 'Cancel a task (an extension of the spec)',
        description: 'A queued task is canceled and refunded; a running one stops at its next step.',
        parameters: [taskIdParam],
        responses: {
          '200': { description: 'The canceled task record.', content: json(ref('TaskResponse')) },
          ...errorResponses([...COMMON, 'TASK_NOT_FOUND', 'TASK_ALREADY_ENDED']),
        },
      },
    },
  };
}

function jobPaths(): Json {
  const out: Json = {};
  for (const spec of JOB_APIS) {
    const name = pascal(spec.kind);
    out[`/api/service/v1/${spec.path}/create-job`] = {
      post: {
        operationId: `create${name}Job`,
        tags: [spec.path],
        summary: `Create a ${spec.kind} job`,
        description: 'Every answer has HTTP status 200 and the outcome in `code`, except a server fault (500, or 503 with Retry-After).',
        security: JOB_SECURITY,
        parameters: [IDEMPOTENCY_KEY],
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: ref(`${name}JobForm`),
              encoding: Object.fromEntries(Object.keys(spec.fileFields).map((f) => [f, { contentType: 'image/jpeg, image/png, image/webp' }])),
            },
          },
        },
        responses: {
          '200': {
            description:
              '100000: accepted (charged), or an Idempotency-Key repeat answered with the first job. Else 400101 insufficient credits, ' +
              '400301 params error (the message says which; a malformed or reused Idempotency-Key too), 400302 token missing, ' +
              '400303 token invalid: nothing charged or stored.',
            headers: REPLAYED,
            content: json({ oneOf: [ref('JobAcceptedResponse'), ref('JobCreateErrorResponse')] }),
          },
          ...JOB_FAULTS,
        },
      },
    };
    const [inProgress, done, failed] = jobStateCodes(spec);
    out[`/api/service/v1/${spec.path}/get-job/{job_id}`] = {
      get: {
        operationId: `get${name}Job`,
        tags: [spec.path],
        summary: `Read a ${spec.kind} job`,
        security: JOB_SECURITY,
        parameters: [pathParam('job_id', 'The job id returned by create-job.', { type: 'string', pattern: '^[0-9a-f]{32}$' })],
        responses: {
          '200': {
            description: `${inProgress}: in progress; ${done}: done (output_image_url); ${failed}: failed (result.message says why). Else 400302/400303 token, 400501 no such job of the caller's.`,
            content: json({ oneOf: [ref(`${name}JobResponse`), ref('JobFetchErrorResponse')] }),
          },
          ...JOB_FAULTS,
        },
      },
    };
  }
  return out;
}

const FILE_CONTENT = {
  'image/jpeg': { schema: { type: 'string', contentMediaType: 'image/jpeg' } },
  'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
  'image/webp': { schema: { type: 'string', contentMediaType: 'image/webp' } },
  'application/json': { schema: {} },
};

function filePaths(): Json {
  return {
    '/files/tasks/{task_id}/{name}': {
      get: {
        operationId: 'getTaskFile',
        tags: ['files'],
        summary: "A task's output file (the URLs in a task's `output`), for the task's owner only",
        parameters: [taskIdParam, pathParam('name', 'File name.')],
        responses: {
          '200': { description: 'The file.', headers: { 'Cache-Control': { schema: { type: 'string', const: 'private, no-store' } } }, content: FILE_CONTENT },
          ...errorResponses([...COMMON, 'FILE_NOT_FOUND', 'FILE_EXPIRED']),
        },
      },
    },
    '/files/jobs/{job_id}/{token}/{kind}/{name}': {
      get: {
        operationId: 'getJobFile',
        tags: ['files'],
        summary: "A job's input or output picture (the URLs get-job lists)",
        description: 'No Authorization: the random token in the URL is the credential, as job-API clients fetch images without one.',
        security: [],
        parameters: [
          pathParam('job_id', 'The job id.'),
          pathParam('token', "The job's file token (part of the URL get-job gives)."),
          pathParam('kind', 'Inputs or outputs.', { type: 'string', enum: ['inputs', 'outputs'] }),
          pathParam('name', 'File name.'),
        ],
        responses: {
          '200': { description: 'The picture.', headers: { 'Cache-Control': { schema: { type: 'string', const: 'private, no-store' } } }, content: FILE_CONTENT },
          ...errorResponses(['FILE_NOT_FOUND', 'FILE_EXPIRED', 'STORE_UNAVAILABLE', 'INTERNAL']),
        },
      },
    },
  };
}

function servicePaths(o: OpenApiOptions): Json {
  return {
    '/health/live': {
      get: { operationId: 'live', tags: ['operations'], summary: 'Liveness: the process answers', security: [], responses: { '200': { description: 'Alive.', content: json(ref('LiveResponse')) } } },
    },
    '/health/ready': {
      get: {
        operationId: 'ready',
        tags: ['operations'],
        summary: 'Readiness: Redis answers and (unless READY_REQUIRES_WORKER=false) a worker is alive with its models loaded',
        security: [],
        responses: {
          '200': { description: 'Ready.', content: json(ref('ReadyResponse')) },
          '503': { description: 'Not ready (the body says which part is missing).', content: json(ref('ReadyResponse')) },
        },
      },
    },
    ...(o.metrics
      ? {
          '/metrics': {
            get: {
              operationId: 'metrics',
              tags: ['operations'],
              summary: 'Prometheus metrics (text exposition format); keep it off the public ingress',
              security: [],
              responses: { '200': { description: 'The scrape.', content: { 'text/plain': { schema: { type: 'string' } } } } },
            },
          },
        }
      : {}),
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        tags: ['operations'],
        summary: 'This document',
        security: [],
        responses: { '200': { description: 'The OpenAPI 3.1 document.', content: json({ type: 'object' }) } },
      },
    },
  };
}

export function buildOpenApiDocument(o: OpenApiOptions): Json {
  return {
    openapi: '3.1.1',
    info: {
      title: 'Image inference worker API',
      version: 'v1',
      description:
        'The task API (run a versioned model on JSON input), the AI hairstyle and virtual try-on job APIs, output files, health and metrics. ' +
        `Task API answers are {code, result, message} with code 200 on success and the HTTP status on error; job API answers carry the spec's numeric codes (100000 success). ` +
        `Job prompts are at most ${PROMPT_MAX_LENGTH} characters.`,
    },
    servers: [{ url: o.publicBaseUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'tasks', description: 'The task API (Authorization: Bearer <API token>).' },
      ...JOB_APIS.map((s) => ({ name: s.path, description: `The ${s.kind} job API (Authorization: the API token, with or without "Bearer").` })),
      { name: 'files', description: 'Output and input files.' },
      { name: 'operations', description: 'Health, metrics and this document (no auth: keep them off the public ingress where it matters).' },
    ],
    paths: { ...taskPaths(), ...jobPaths(), ...filePaths(), ...servicePaths(o) },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API token: `Authorization: Bearer <API token>`.' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Job APIs: the API token alone, without a scheme word.' },
      },
      schemas: componentSchemas(o),
    },
  };
}
