// The API process's own part of the composition: the HTTP app over the shared services. Loads no
// pipeline, model, onnxruntime or importer code (test/e2e/api-process-modules.test.ts checks what
// the API entry actually loads).
import type { Config } from '../config/env.ts';
import { buildApp } from '../api/app.ts';
import type { Services } from './services.ts';

export function createApi(config: Config, s: Services) {
  // Queue depth by state, read from Redis on each scrape of the API's /metrics.
  s.metrics.watchQueue(s.queue);
  return buildApp({
    tasks: s.tasks,
    accounts: s.accounts,
    blobs: s.blobs,
    queue: s.queue,
    submitter: s.submitter,
    taskEnds: s.taskEnds,
    registry: s.registry,
    workers: s.workers,
    http: s.http,
    publicBaseUrl: config.publicBaseUrl,
    bodyMaxBytes: config.bodyMaxBytes,
    maxPixels: config.input.maxPixels,
    jobs: {
      store: s.jobs,
      fileMaxBytes: config.jobs.fileMaxBytes,
      uploadInflightMaxBytes: config.jobs.uploadInflightMaxBytes,
      retentionMs: config.retention.jobMs,
      versions: s.jobVersions,
    },
    readyRequiresWorker: config.readyRequiresWorker,
    metrics: s.metrics.enabled ? s.metrics : undefined,
    logLevel: config.logLevel,
  });
}

