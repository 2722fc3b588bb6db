// Task API: create, get, cancel.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors/codes.ts';
import { toTaskView, type TaskRecord } from '../../domain/task.ts';
import { VersionIdSchema } from '../../domain/version-id.ts';
import { PIPELINE_INPUTS } from '../../pipelines/inputs.ts';
import { authenticate } from '../auth.ts';
import { ok } from '../envelope.ts';
import type { AppDeps } from '../app.ts';

const CreateBody = z.strictObject({
  version: z.string({ error: 'required, a 64-character version ID' }),
  input: z.record(z.string(), z.unknown(), { error: 'required, a JSON object' }),
  webhook_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
});

const TASK_ID = /^[0-9a-f]{32}$/;

/** "input.image: must be an http(s) URL; input.min_score: ..." */
export function describeIssues(issues: z.core.$ZodIssue[], prefix?: string): string {
  return issues
    .map((i) => {
      const at = [prefix, ...i.path.map(String)].filter(Boolean).join('.');
      return `${at || '(body)'}: ${i.message}`;
    })
    .join('; ');
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

  app.post('/api/tasks/v1/create', async (req) => {
    const userId = await authenticate(req, accounts);
    const body = CreateBody.safeParse(req.body ?? undefined);
    if (!body.success) throw new AppError('BODY_INVALID', `invalid request body: ${describeIssues(body.error.issues)}`);
    const { version: versionText, input, webhook_url } = body.data;
    const vid = VersionIdSchema.safeParse(versionText);
    if (!vid.success) throw new AppError('VERSION_INVALID', `version must be a 64-character lowercase hex ID (got ${versionText.length} characters)`);
    const version = registry.get(vid.data);
    if (!version) throw new AppError('VERSION_NOT_FOUND', `model version ${vid.data} not found`);
    const spec = PIPELINE_INPUTS[version.manifest.pipeline];
    if (!spec) throw new AppError('VERSION_NOT_FOUND', `model version ${vid.data} has no runnable pipeline`);
    const parsed = spec.schema.safeParse(input);
    if (!parsed.success) throw new AppError('INPUT_INVALID', `invalid input: ${describeIssues(parsed.error.issues, 'input')}`);

    const taskId = randomUUID().replace(/-/g, '');
    const cost = version.manifest.cost;
    await tasks.create({ taskId, userId, version: version.id, input: parsed.data, webhookUrl: webhook_url ?? null, cost });
    try {
      await queue.enqueue(taskId, userId);
    } catch (e) {
      // Never leave a charged task that no worker will see.
      await tasks.claim(taskId, userId);
      await tasks.fail(taskId, 'INTERNAL: the task could not be queued', undefined, userId);
      throw new AppError('INTERNAL', 'the task could not be queued; nothing was charged', undefined, { cause: e });
    }
    return ok({ task_id: taskId, task_cost: cost }, 'task created');
  });

  app.get<{ Params: { task_id: string } }>('/api/tasks/v1/get/:task_id', async (req) => {
    const userId = await authenticate(req, accounts);
    return ok(view(await ownTask(req.params.task_id, userId)));
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
    await queue.removeIfQueued(record.taskId);
    return ok(view(r.record), r.previous === 'starting' ? 'task canceled' : 'task canceled; its run stops at the next step');
  });
}
