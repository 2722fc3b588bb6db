// Test entry: loads the pipeline runners (as an inference thread does) and idles until killed, so
// test/e2e/api-process-modules.redis.test.ts can show its load check sees inference code.
await import('../../src/pipelines/index.ts');
setInterval(() => {}, 1_000);
