import { defineConfig } from 'vitest/config';

// Four projects (and gpu); a test's folder says what it needs (`npx vitest --project unit` runs one):
// - unit: nothing: no Redis, no fetched model graphs, no network, no listening server. Seconds.
// - integration: a real Redis and real onnxruntime sessions over the fetched graphs.
// - e2e: a real listening server, real HTTP clients and receivers, worker processes.
// - cluster: e2e on a real Redis Cluster (three redis-server processes its own setup starts).
// Only integration and e2e run the global setup (a private redis-server, fetching the graphs);
// cluster runs its own (the cluster, fetching the graphs).

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here: two test files at a time, each with its own Redis prefix and data folder.
    maxWorkers: 2,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // Fails a test file that wrote into test/fixtures/.
    setupFiles: ['test/helpers/fixtures-guard.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
      // The service on a real three-node Redis Cluster its global setup starts (skipped, saying
      // why, only where redis-server cannot run in cluster mode).
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          globalSetup: ['test/helpers/cluster-setup.ts'],
        },
      },
      // Skipped (and saying why) unless GPU_TEST_PROVIDERS is set; uses graphs already fetched.
      { extends: true, test: { name: 'gpu', include: ['test/gpu/**/*.test.ts'] } },
    ],
  },
});
