// Output files, served only to the owner of the task they belong to. Anyone else gets 404, the
// same as a file that does not exist, so ids are never confirmed to strangers.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors/codes.ts';
import { authenticate } from '../auth.ts';
import type { AppDeps } from '../app.ts';

export function registerFileRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { task_id: string; name: string } }>('/files/tasks/:task_id/:name', async (req, reply) => {
    const userId = await authenticate(req, deps.accounts);
    const { task_id, name } = req.params;
    const key = `tasks/${task_id}/${name}`;
    const notFound = new AppError('FILE_NOT_FOUND', `file ${name} of task ${task_id} not found`);
    const record = /^[0-9a-f]{32}$/.test(task_id) ? await deps.tasks.get(task_id) : null;
    if (!record || record.userId !== userId) throw notFound;
    if (record.purgedMs !== null) {
      throw new AppError('FILE_EXPIRED', `outputs of task ${task_id} were deleted after the retention period`);
    }
    if (!record.outputKeys?.includes(key)) throw notFound;
    const blob = await deps.blobs.open(key);
    if (!blob) throw notFound;
    return reply
      .header('content-type', blob.contentType)
      .header('content-length', blob.size)
      .header('cache-control', 'private, no-store')
      .send(blob.stream());
  });
}
