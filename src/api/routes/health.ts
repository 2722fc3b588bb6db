// Liveness (the process answers) and readiness (Redis answers, on the store's and the queue's
// connections, and, unless disabled, at least one worker is alive with its models loaded); and
// the Prometheus scrape, /metrics.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app.ts';

/**
 * Bound on the readiness check's Redis round trips. A load balancer's probe has a timeout of its
 * own (often 1-5 s): past it the answer is useless, so an unreachable Redis answers 503 within this
 * bound, whatever state the connection is in (refused at once, or open and answering nothing).
 */
const READY_CHECK_MS = 1_000;

export function registerHealthRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get('/health/live', async () => ({ status: 'live' }));

  const metrics = deps.metrics;
  if (metrics) {
    // Prometheus text: this process's registry (in the all-in-one process, the worker's too).
    app.get('/metrics', { logLevel: 'warn' }, async (_req, reply) => reply.type(metrics.contentType).send(await metrics.scrape()));
  }

  app.get('/health/ready', async (_req, reply) => {
    let redis = false;
    let workers = 0;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('redis did not answer in time')), READY_CHECK_MS);
    });
    try {
      [redis, workers] = await Promise.race([Promise.all([deps.workers.ping(), deps.workers.live()]), late]);
    } catch {
      redis = false;
    } finally {
      clearTimeout(timer);
    }
    // Redis counts as answering once the queue's producer connection is back too: it reconnects
    // apart from the store's, and a create in between is queued only by the outbox sweep, seconds
    // later, with a warning.
    redis &&= deps.queue.connected;
    const ready = redis && (!deps.readyRequiresWorker || workers > 0);
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', redis: redis ? 'ok' : 'down', workers });
  });
}
