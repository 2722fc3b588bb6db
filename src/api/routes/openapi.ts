// GET /openapi.json: the OpenAPI 3.1 document (api/openapi.ts), built on the first request and
// kept as text, so neither start-up nor any other route pays for it. No auth, like /health.
import type { FastifyInstance } from 'fastify';
import { PIPELINE_SPECS } from '../../pipelines/specs.ts';
import { buildOpenApiDocument } from '../openapi.ts';
import type { AppDeps } from '../app.ts';

export function registerOpenApiRoute(app: FastifyInstance, deps: AppDeps): void {
  let text: string | undefined;
  app.get('/openapi.json', { logLevel: 'warn' }, async (_req, reply) => {
    text ??= JSON.stringify(
      buildOpenApiDocument({ publicBaseUrl: deps.publicBaseUrl, pipelines: PIPELINE_SPECS, versions: deps.registry.versions.values(), metrics: deps.metrics !== undefined }),
    );
    return reply.type('application/json; charset=utf-8').send(text);
  });
}
