// npm run bench [-- core | webhooks]
//   core      (default) onnxruntime, pipeline, end-to-end task latency, event-loop lag, create rate
//   webhooks  delivery latency after completion, and the retry timings against a failing receiver
//   models    per imported graph: tfjs-wasm vs onnxruntime latency, ratio, parity
//   hairstyle per-stage medians and latency per picture of the hairstyle pipeline
//   tryon     per-stage medians and latency per picture of the try-on pipeline
//   gpu       GPU execution providers (cuda, webgpu) against cpu; fails when one falls back
//   parity    the hairstyle and try-on pictures drawn on a GPU provider (arg) against cpu
//   pictures  a worker node's pictures/s on 1 MP hairstyle and try-on jobs, per thread count (provider arg)
//   batching  dynamic batching of face detection: tasks/s, p50/p99 at 1-64 in flight, batched vs not
//   uploads   the API process's RSS under 30 concurrent 4 x 9.5 MB create-jobs (refused for credits, then accepted)
const benches: Record<string, () => Promise<unknown>> = {
  core: () => import('./bench-core.ts'),
  webhooks: () => import('./bench-webhooks.ts'),
  models: () => import('./bench-models.ts'),
  hairstyle: () => import('./bench-hairstyle.ts'),
  tryon: () => import('./bench-tryon.ts'),
  gpu: () => import('./bench-gpu.ts'),
  parity: () => import('./bench-parity.ts'),
  batching: () => import('./bench-batching.ts'),
  pictures: () => import('./bench-pictures.ts'),
  uploads: () => import('./bench-uploads.ts'),
};
const mode = process.argv[2] ?? 'core';
const run = benches[mode];
if (!run) {
  console.error(`unknown bench "${mode}" (available: ${Object.keys(benches).join(', ')})`);
  process.exit(2);
}
await run();
