// buildApp(): the HTTP surface. Routes for the task API, owner-only output files and health.
// Every error leaves through one handler that turns catalog errors into the response envelope.
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../errors/codes.ts';
import type { ModelVersion, Registry } from '../models/registry.ts';
import type { JobKind } from '../domain/job.ts';
import type { Accounts } from '../store/accounts.ts';
import type { BlobStore } from '../store/blob-store.ts';
import type { TaskStore } from '../store/task-store.ts';
import type { WorkerRegistry } from '../store/workers.ts';
import type { JobStore } from '../store/job-store.ts';
import type { TaskQueue } from '../queue/task-queue.ts';
import type { OutboundHttp } from '../queue/outbound-http.ts';
import type { TaskSubmitter } from '../queue/task-submitter.ts';
import { errorEnvelope } from './envelope.ts';
import { registerTaskRoutes } from './routes/tasks.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerJobRoutes } from './routes/jobs.ts';

export interface AppDeps {
  tasks: TaskStore;
  accounts: Accounts;
  blobs: BlobStore;
  queue: TaskQueue;
  submitter: Pick<TaskSubmitter, 'submit'>;
  registry: Registry;
  workers: WorkerRegistry;
  /** Checks user-given URLs against the outbound policy at create time. */
  http: Pick<OutboundHttp, 'check'>;
  publicBaseUrl: string;
  bodyMaxBytes: number;
  /** Pixel cap of input images (decompression-bomb guard). */
  maxPixels: number;
  jobs: {
    store: JobStore;
    fileMaxBytes: number;
    retentionMs: number;
    /** The version each job API runs (resolved at start-up; undefined: none installed). */
    versions: Readonly<Record<JobKind, ModelVersion | undefined>>;
  };
  readyRequiresWorker: boolean;
  logLevel: string;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: deps.logLevel },
    bodyLimit: deps.bodyMaxBytes,
    // Task ids are ours; long or odd path params are simply not found.
    routerOptions: { maxParamLength: 200 },
    // One line per request at 1,000+ req/s is noise; errors are still logged by the handler.
    logController: new LogController({ disableRequestLogging: true }),
  });

  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const e = toHttpError(err);
    if (e.status >= 500) req.log.error({ err }, 'request failed');
    return reply.status(e.status).send(errorEnvelope(e));
  });
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send(errorEnvelope(new AppError('ROUTE_NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`))),
  );

  registerTaskRoutes(app, deps);
  registerJobRoutes(app, deps);
  registerFileRoutes(app, deps);
  registerHealthRoutes(app, deps);
  await app.ready();
  return app;
}

/** Fastify's own errors (bad JSON, body too large, wrong content type) mapped onto the catalog. */
function toHttpError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('BODY_TOO_LARGE', `request body is larger than the limit`);
  if (e.code?.startsWith('FST_ERR_CTP') || e.statusCode === 400 || e.statusCode === 415) {
    return new AppError('BODY_INVALID', `invalid request body: ${e.message ?? 'unreadable'}`);
  }
  return new AppError('INTERNAL', 'internal error');
}

/**
 * Stops the server: no new connections, in-flight requests finish; connections still open after
 * `graceMs` (a client's keep-alive socket, say) are cut so shutdown never hangs on them.
 */
export async function closeApp(app: FastifyInstance, graceMs = 5_000): Promise<void> {
  const closing = app.close();
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await closing;
  } finally {
    clearTimeout(timer);
  }
}
