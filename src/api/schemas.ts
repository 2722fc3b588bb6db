// The shapes of every JSON answer the API gives, as zod schemas, in one place. The routes build
// their answers by hand (envelope.ts, routes/jobs.ts) and send them as they are: these schemas are
// not run per request (that would cost the create path and could change a byte). They exist so the
// OpenAPI document (openapi.ts) is generated from types the routes compile against, and so the e2e
// tests can check real answers against that document.
import { z } from 'zod';
import { TaskViewSchema } from '../domain/task.ts';
import { ErrorCatalog, JobCode, type ErrorCode } from '../errors/codes.ts';

const hex32 = (what: string) => z.string().regex(/^[0-9a-f]{32}$/).meta({ description: `${what} (32 lowercase hex).` });

/** `message` of every envelope: language key -> text. */
export const MessageSchema = z
  .record(z.string(), z.string())
  .meta({ description: 'Language key -> text; `en` holds the English text. An empty object in task reads.' });

/** The task API's success envelope: code 200, the operation's result. */
const taskEnvelope = <T extends z.ZodType>(result: T) => z.strictObject({ code: z.literal(200), result, message: MessageSchema });

export const CreateTaskResultSchema = z.strictObject({
  task_id: hex32('Identifier of the new task'),
  task_cost: z.number().meta({ description: 'Credits charged (refunded if the task fails or is canceled before it runs).' }),
});
export type CreateTaskResult = z.infer<typeof CreateTaskResultSchema>;

export const TaskListResultSchema = z.strictObject({
  tasks: z.array(TaskViewSchema).meta({ description: "The caller's tasks, newest first." }),
  next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
});

export const CreateTaskResponseSchema = taskEnvelope(CreateTaskResultSchema);
export const TaskResponseSchema = taskEnvelope(TaskViewSchema);
export const TaskListResponseSchema = taskEnvelope(TaskListResultSchema);

/** The catalog's codes as the task API writes them in `result.error`. */
export const errorName = (code: ErrorCode): string => code.toLowerCase();

/**
 * The task API's error envelope (envelope.ts errorEnvelope): `code` is the HTTP status, `result`
 * names the catalog entry and carries its details (INSUFFICIENT_CREDITS: balance and cost;
 * TASK_ALREADY_ENDED: status).
 */
export const ErrorResponseSchema = z.strictObject({
  code: z.number().int().meta({ description: 'The HTTP status of the answer.' }),
  result: z.looseObject({
    error: z.enum(Object.keys(ErrorCatalog).map((c) => errorName(c as ErrorCode)) as [string, ...string[]]),
    balance: z.number().optional().meta({ description: 'insufficient_credits: the balance.' }),
    cost: z.number().optional().meta({ description: 'insufficient_credits: what the request costs.' }),
    status: z.string().optional().meta({ description: 'task_already_ended: the status the task ended with.' }),
  }),
  message: z.strictObject({ en: z.string() }),
});

// --- the job APIs: every answer {code, result, message: {en}}, the outcome in `code` ---

const jobEnvelope = <C extends z.ZodType, R extends z.ZodType>(code: C, result: R) =>
  z.strictObject({ code, result, message: z.strictObject({ en: z.string() }) });

export const JobCreateResultSchema = z.strictObject({ job_id: hex32('Identifier of the job, for get-job') });

export const JobFetchResultSchema = z.strictObject({
  output_image_url: z.array(z.string()).meta({ description: 'URLs of the generated images (empty until the job succeeds, and after retention).' }),
  input_image_url: z.array(z.string()).meta({ description: 'URLs of the stored inputs (try-on: the garment, then the model). The URL is the credential.' }),
  job_id: z.string(),
  message: z.string().meta({ description: 'Empty on success; why the job failed, or that its files were deleted.' }),
});
export type JobFetchResult = z.infer<typeof JobFetchResultSchema>;

export const JobAcceptedResponseSchema = jobEnvelope(z.literal(JobCode.SUCCESS), JobCreateResultSchema);

/** A get-job answer for a job that exists; which code means "done" differs per API (see openapi.ts). */
export const jobFetchResponseSchema = (codes: readonly [number, ...number[]]) => jobEnvelope(z.literal(codes), JobFetchResultSchema);

/** A refused job request: the spec's error code, an empty result, "<text>: <why>" in `en`. */
export const jobErrorResponseSchema = (codes: readonly [number, ...number[]]) => jobEnvelope(z.literal(codes), z.strictObject({}));

// --- operations outside the envelope ---

export const LiveResponseSchema = z.strictObject({ status: z.literal('live') });

export const ReadyResponseSchema = z.strictObject({
  status: z.enum(['ready', 'not_ready']),
  redis: z.enum(['ok', 'down']),
  workers: z.number().int().min(0).meta({ description: 'Workers alive with their models loaded.' }),
});
