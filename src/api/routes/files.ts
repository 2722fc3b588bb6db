// Output files, served only to the owner of the task they belong to. Anyone else gets 404, the
// same as a file that does not exist, so ids are never confirmed to strangers.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BlobStore } from '../../store/blob-store.ts';
import { AppError } from '../../errors/codes.ts';
import { isTaskId, taskInputKey, taskOutputKey } from '../../domain/blob-keys.ts';
import { authenticate } from '../auth.ts';
import type { AppDeps } from '../app.ts';

export function registerFileRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { task_id: string; name: string } }>('/files/tasks/:task_id/:name', async (req, reply) => {
    const userId = await authenticate(req, deps.accounts);
    const { task_id, name } = req.params;
    const key = taskOutputKey(task_id, name);
    const notFound = new AppError('FILE_NOT_FOUND', `file ${name} of task ${task_id} not found`);
    const record = isTaskId(task_id) ? await deps.tasks.get(task_id) : null;
    if (!record || record.userId !== userId) throw notFound;
    if (record.purgedMs !== null) {
      throw new AppError('FILE_EXPIRED', `outputs of task ${task_id} were deleted after the retention period`);
    }
    if (!record.outputKeys?.includes(key)) throw notFound;
    return sendBlob(reply, deps.blobs, key, notFound);
  });

  // Job files: the URL itself is the credential (a random token per job), as job-API clients
  // fetch images without an Authorization header. They live as long as the job's retention.
  app.get<{ Params: { job_id: string; token: string; kind: string; name: string } }>(
    '/files/jobs/:job_id/:token/:kind/:name',
    async (req, reply) => {
      const { job_id, token, kind, name } = req.params;
      const notFound = new AppError('FILE_NOT_FOUND', 'file not found');
      const job = /^[0-9a-f]{32}$/.test(job_id) ? await deps.jobs.store.get(job_id) : null;
      if (!job || !sameSecret(token, job.fileToken) || (kind !== 'inputs' && kind !== 'outputs')) throw notFound;
      const task = await deps.tasks.get(job.taskId);
      if (!task) throw notFound;
      if (task.purgedMs !== null) throw new AppError('FILE_EXPIRED', `the files of job ${job_id} were deleted after the retention period`);
      const key = kind === 'inputs' ? taskInputKey(task.taskId, name) : taskOutputKey(task.taskId, name);
      const listed = kind === 'inputs' ? job.inputs.includes(name) : (task.outputKeys ?? []).includes(key);
      if (!listed) throw notFound;
      return sendBlob(reply, deps.blobs, key, notFound);
    },
  );
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function sendBlob(reply: FastifyReply, blobs: BlobStore, key: string, notFound: AppError) {
  const blob = await blobs.open(key);
  if (!blob) throw notFound;
  return reply
    .header('content-type', blob.contentType)
    .header('content-length', blob.size)
    .header('cache-control', 'private, no-store')
    .send(blob.stream());
}
