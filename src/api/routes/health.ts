// Liveness (the process answers) and readiness (Redis answers and, unless disabled, at least one
// worker is alive with its models loaded).
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../app.ts';

export function registerHealthRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get('/health/live', async () => ({ status: 'live' }));

  app.get('/health/ready', async (_req, reply) => {
    let redis = false;
    let workers = 0;
    try {
      redis = await deps.workers.ping();
      workers = await deps.workers.live();
    } catch {
      redis = false;
    }
    const ready = redis && (!deps.readyRequiresWorker || workers > 0);
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', redis: redis ? 'ok' : 'down', workers });
  });
}
