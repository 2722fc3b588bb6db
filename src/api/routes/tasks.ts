// Task API: create, get, cancel.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors/codes.ts';
import { toTaskView, type TaskRecord } from '../../domain/task.ts';
import { VersionIdSchema } from '../../domain/version-id.ts';
import { PIPELINE_SPECS } from '../../pipelines/specs.ts';
import { authenticate } from '../auth.ts';
import { ok } from '../envelope.ts';
import { cancelAfterMsOf, idempotencyKeyOf, preferredWaitSOf } from '../request-headers.ts';
import { idempotentTaskId, taskFingerprint } from '../../domain/idempotency.ts';
import type { AppDeps } from '../app.ts';

/** The create-task body (the OpenAPI document is generated from it too: api/openapi.ts). */
export const CreateBody = z.strictObject({
  version: z.string({ error: (i) => (i.input === undefined ? 'required, a 64-character version ID' : `must be a string, a 64-character version ID (got ${jsonKind(i.input)})`) }),
  input: z.record(z.string(), z.unknown(), { error: (i) => (i.input === undefined ? 'required, a JSON object' : `must be a JSON object (got ${jsonKind(i.input)})`) }),
  webhook_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
});

const TASK_ID = /^[0-9a-f]{32}$/;

export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional(),
});

/** Opaque cursor: base64url of "<created_ms>.<task_id>" of the last task on the page. */
const encodeCursor = (c: { createdMs: number; taskId: string }) => Buffer.from(`${c.createdMs}.${c.taskId}`).toString('base64url');
function decodeCursor(s: string): { createdMs: number; taskId: string } {
  const m = /^(\d{1,16})\.([0-9a-f]{32})$/.exec(Buffer.from(s, 'base64url').toString());
  if (!m) throw new AppError('BODY_INVALID', 'cursor: not a cursor returned by this API');
  return { createdMs: Number(m[1]), taskId: m[2]! };
}

/** "input.image: must be an http(s) URL; input.min_score: ..." */
export function describeIssues(issues: z.core.$ZodIssue[], prefix?: string): string {
  return issues
    .map((i) => {
      const at = [prefix, ...i.path.map(String)].filter(Boolean).join('.');
      return `${at || '(body)'}: ${i.message}`;
    })
    .join('; ');
}

/** What a body that is not a JSON object is, for the message. */
function jsonKind(v: unknown): string {
  if (v === undefined) return 'no body';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

/** Why a version text is not a version id, in the VERSION_INVALID message. */
function versionProblem(v: string): string {
  if (v.length !== 64) return `version must be a 64-character lowercase hex ID (got ${v.length} characters)`;
  if (/^[0-9a-fA-F]+$/.test(v)) return 'version must be lowercase hex (it has uppercase letters)';
  const i = v.search(/[^0-9a-f]/);
  return `version must be hex: character ${i + 1} is ${JSON.stringify(v[i])} (a version is a 64-character lowercase hex ID)`;
}

export function registerTaskRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { tasks, accounts, registry, queue } = deps;
  const view = (r: TaskRecord) => toTaskView(r, (key) => `${deps.publicBaseUrl}/files/${key}`);

  /** The caller's task, or TASK_NOT_FOUND (also for someone else's: existence is never leaked). */
  async function ownTask(taskId: string, userId: number): Promise<TaskRecord> {
    const record = TASK_ID.test(taskId) ? await tasks.get(taskId) : null;
    if (!record || record.userId !== userId) throw new AppError('TASK_NOT_FOUND', `task ${taskId} not found`);
    return record;
  }

  app.post('/api/tasks/v1/create', async (req, reply) => {
    const userId = await authenticate(req, accounts);
    const idempotencyKey = idempotencyKeyOf(req);
    const cancelAfterMs = cancelAfterMsOf(req);
    const waitS = preferredWaitSOf(req);
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
      throw new AppError('BODY_INVALID', `invalid request body: the body must be a JSON object (got ${jsonKind(req.body)})`);
    }
    const body = CreateBody.safeParse(req.body);
    if (!body.success) throw new AppError('BODY_INVALID', `invalid request body: ${describeIssues(body.error.issues)}`);
    const { version: versionText, input, webhook_url } = body.data;
    const vid = VersionIdSchema.safeParse(versionText);
    if (!vid.success) throw new AppError('VERSION_INVALID', versionProblem(versionText));
    const version = registry.get(vid.data);
    if (!version) throw new AppError('VERSION_NOT_FOUND', `model version ${vid.data} not found`);
    const spec = PIPELINE_SPECS[version.manifest.pipeline];
    if (!spec) throw new AppError('VERSION_NOT_FOUND', `model version ${vid.data} has no runnable pipeline`);
    const parsed = spec.input.safeParse(input);
    if (!parsed.success) throw new AppError('INPUT_INVALID', `invalid input: ${describeIssues(parsed.error.issues, 'input')}`);
    // Outbound policy (SSRF): refuse private targets now rather than fail the task later.
    const fileRefs = spec.fileFields.flatMap((f) => {
      const v = parsed.data[f];
      return Array.isArray(v) ? v.map((u, i) => [String(u), `input.${f}[${i}]`] as const) : [[String(v), `input.${f}`] as const];
    });
    await Promise.all([
      // Only http(s) here: stored-file references ("blob:") are for the job APIs' own tasks.
      ...fileRefs.map(([u, what]) => deps.http.check(u, what)),
      ...(webhook_url ? [deps.http.check(webhook_url, 'webhook_url')] : []),
    ]);

    const inTaskRecord = idempotencyKey !== undefined && tasks.keysInTaskRecords;
    const taskId = inTaskRecord ? idempotentTaskId(userId, idempotencyKey) : randomUUID().replace(/-/g, '');
    const cost = version.manifest.cost;
    const created = await deps.submitter.submit({
      taskId,
      userId,
      version: version.id,
      pipeline: version.manifest.pipeline,
      input: parsed.data,
      webhookUrl: webhook_url ?? null,
      cost,
      cancelAfterMs,
      idempotency: idempotencyKey ? { keyHash: idempotencyKey, fingerprint: taskFingerprint(version.id, parsed.data, webhook_url ?? null, cancelAfterMs ?? null), inTaskRecord } : undefined,
    });
    const result = created.created ? { task_id: taskId, task_cost: cost } : { task_id: created.taskId, task_cost: created.cost };
    if (!created.created) reply.header('idempotent-replayed', 'true');
    if (waitS !== undefined && deps.taskEnds) {
      // Applied whether or not the task ends in time: the answer's shape tells which (a record has `status`).
      reply.header('preference-applied', `wait=${waitS}`);
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const ended = await deps.taskEnds.wait(result.task_id, waitS * 1000, gone.signal).catch((e: Error) => {
        req.log.warn({ taskId: result.task_id, err: e.message }, 'Prefer: wait could not watch the task; answering without its record');
        return null;
      });
      if (ended && ended.userId === userId) return ok(view(ended), `task ${ended.status}`);
    }
    return ok(result, created.created ? 'task created' : 'task already created with this Idempotency-Key');
  });

  app.get<{ Params: { task_id: string } }>('/api/tasks/v1/get/:task_id', async (req) => {
    const userId = await authenticate(req, accounts);
    return ok(view(await ownTask(req.params.task_id, userId)));
  });

  // Extension: the caller's tasks, newest first, for those who missed a webhook.
  app.get('/api/tasks/v1/list', async (req) => {
    const userId = await authenticate(req, accounts);
    const q = ListQuery.safeParse(req.query ?? {});
    if (!q.success) throw new AppError('BODY_INVALID', `invalid query: ${describeIssues(q.error.issues)}`);
    const after = q.data.cursor ? decodeCursor(q.data.cursor) : undefined;
    const ids = await tasks.listIds(userId, q.data.limit + 1, after);
    const page = ids.slice(0, q.data.limit);
    const records = await tasks.getMany(userId, page.map((p) => p.taskId));
    const last = page[page.length - 1];
    return ok({ tasks: records.map(view), next_cursor: ids.length > q.data.limit && last ? encodeCursor(last) : null });
  });

  app.post<{ Params: { task_id: string } }>('/api/tasks/v1/cancel/:task_id', async (req) => {
    const userId = await authenticate(req, accounts);
    const record = await ownTask(req.params.task_id, userId);
    const r = await tasks.cancel(record.taskId, userId);
    if (r.result === 'conflict') {
      throw new AppError('TASK_ALREADY_ENDED', `task ${record.taskId} has already ended (${r.current})`, { status: r.current });
    }
    if (r.result === 'missing') throw new AppError('TASK_NOT_FOUND', `task ${record.taskId} not found`);
    // Queued: drop it now. Running: its worker sees the status and stops at its next step.
    // The record is canceled already: if Redis fails the removal, the job stays queued and the
    // worker that takes it finds it canceled and skips it, so the cancel still answers success.
    await queue.removeIfQueued(record.taskId).catch((e: Error) => req.log.warn({ taskId: record.taskId, err: e.message }, 'could not remove the canceled task from the queue; its worker will skip it'));
    return ok(view(r.record), r.previous === 'starting' ? 'task canceled' : 'task canceled; its run stops at the next step');
  });
}
