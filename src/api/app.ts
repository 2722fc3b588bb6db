// buildApp(): the HTTP surface. Routes for the task API, the job APIs, owner-only output files,
// health, metrics and the OpenAPI document.
// Every error leaves through one handler that turns catalog errors into the response envelope.
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../errors/codes.ts';
import { asStoreUnavailable } from '../store/redis.ts';
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
import type { TaskEndWaiter } from '../store/task-events.ts';
import type { Metrics } from '../domain/metrics.ts';
import { errorEnvelope, setRetryAfter } from './envelope.ts';
import { authenticate } from './auth.ts';
import { registerTaskRoutes } from './routes/tasks.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerJobRoutes, sendJobError } from './routes/jobs.ts';

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
    /** Upload bytes taken in at once over all create-jobs (UPLOAD_INFLIGHT_MAX_BYTES). */
    uploadInflightMaxBytes: number;
    retentionMs: number;
    /** The version each job API runs (resolved at start-up; undefined: none installed). */
    versions: Readonly<Record<JobKind, ModelVersion | undefined>>;
  };
  readyRequiresWorker: boolean;
  logLevel: string;
  /** Prefer: wait on create-task (absent: the preference is not applied). */
  taskEnds?: Pick<TaskEndWaiter, 'wait'>;
  /** Served at GET /metrics (no auth, like /health: keep it off the public ingress); absent: no route. */
  metrics?: Metrics;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: deps.logLevel },
    bodyLimit: deps.bodyMaxBytes,
    // Task ids are ours; long or odd path params are simply not found. The router refuses them
    // before any route sees them, and fastify would answer 414/400 in its own JSON: answerUnroutable
    // gives the answer their route gives an unknown id instead.
    routerOptions: { maxParamLength: 200 },
    frameworkErrors: (_err, request, response) => {
      const [req, reply] = [request as FastifyRequest, response as FastifyReply];
      answerUnroutable(req, reply, deps).catch((err: unknown) => {
        req.log.error({ err }, 'request failed');
        if (!reply.sent) reply.status(500).send(errorEnvelope(new AppError('INTERNAL')));
      });
    },
    // One line per request at 1,000+ req/s is noise; errors are still logged by the handler.
    logController: new LogController({ disableRequestLogging: true }),
  });

  // Fastify's JSON parser answers every failure "Body is not valid JSON", a __proto__ key (refused
  // against prototype pollution) included; this one says which. Set before the routes register,
  // as each route scope copies the parsers it finds.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (e) {
      done(e as AppError, undefined);
    }
  });

  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const e = toHttpError(err);
    // An outage is logged once per state change by the connection (store/redis.ts), not per request.
    if (e.status >= 500 && e.code !== 'STORE_UNAVAILABLE') req.log.error({ err }, 'request failed');
    return sendError(reply, e);
  });
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send(errorEnvelope(new AppError('ROUTE_NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`))),
  );

  registerTaskRoutes(app, deps);
  registerJobRoutes(app, deps);
  registerFileRoutes(app, deps);
  registerHealthRoutes(app, deps);
  registerOpenApiRoute(app, deps);
  await app.ready();
  return app;
}

/**
 * A JSON request body. A "__proto__" key is refused (as fastify's parser does, against prototype
 * pollution of objects merged from it later), but by name; the reviver that finds it runs only on
 * text that could hold one, written plainly or with \u escapes.
 */
export function parseJsonBody(text: string): unknown {
  const invalid = (why: string) => new AppError('BODY_INVALID', `invalid request body: ${why}`);
  if (text.trim() === '') throw invalid('the body is empty (expected a JSON object)');
  const reviver = /__proto__|\\u/.test(text)
    ? (key: string, value: unknown) => {
        if (key === '__proto__') throw invalid('__proto__ is not allowed as a key');
        return value;
      }
    : undefined;
  try {
    return JSON.parse(text, reviver);
  } catch (e) {
    if (isAppError(e)) throw e;
    throw invalid(`not valid JSON (${(e as Error).message})`);
  }
}

/**
 * A request the router refused before any route saw it: a path parameter over maxParamLength, or
 * one that is not valid percent-encoding. Such an id names nothing, so the answer is what its route
 * answers for an unknown id, in that API's envelope and after the same authentication: get-job
 * 400501 (HTTP 200), the task API 404 task_not_found, files 404 file_not_found, else route_not_found.
 */
async function answerUnroutable(req: FastifyRequest, reply: FastifyReply, deps: AppDeps): Promise<void> {
  const path = req.url.split('?')[0] ?? '';
  const get = req.method === 'GET';
  const jobApi = get && /^\/api\/service\/v1\/(ai-hairstyle|ai-virtual-try-on)\/get-job\//.test(path);
  const taskApi = (get && path.startsWith('/api/tasks/v1/get/')) || (req.method === 'POST' && path.startsWith('/api/tasks/v1/cancel/'));
  const taskFile = get && path.startsWith('/files/tasks/');
  const jobFile = get && path.startsWith('/files/jobs/');
  let e: AppError;
  try {
    if (jobApi || taskApi || taskFile) await authenticate(req, deps.accounts);
    if (jobApi) e = new AppError('JOB_NOT_FOUND');
    else if (taskApi) e = new AppError('TASK_NOT_FOUND', 'task not found');
    else if (taskFile || jobFile) e = new AppError('FILE_NOT_FOUND', 'file not found');
    else e = new AppError('ROUTE_NOT_FOUND', `no route ${req.method} ${path.slice(0, 200)}${path.length > 200 ? '...' : ''}`);
  } catch (err) {
    e = toHttpError(err);
  }
  void (jobApi ? sendJobError(reply, e) : sendError(reply, e));
}

/** An error answer in the task API's envelope, with Retry-After where its code carries one. */
function sendError(reply: FastifyReply, e: AppError): FastifyReply {
  setRetryAfter(reply, e);
  return reply.status(e.status).send(errorEnvelope(e));
}

/** Fastify's own errors (bad JSON, body too large, wrong content type) mapped onto the catalog. */
function toHttpError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const unavailable = asStoreUnavailable(err);
  if (unavailable) return unavailable;
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
