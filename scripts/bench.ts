// npm run bench [-- core | webhooks]
//   core      (default) onnxruntime, pipeline, end-to-end task latency, event-loop lag, create rate
//   webhooks  delivery latency after completion, and the retry timings against a failing receiver
const benches: Record<string, () => Promise<unknown>> = {
  core: () => import('./bench-core.ts'),
  webhooks: () => import('./bench-webhooks.ts'),
};
const mode = process.argv[2] ?? 'core';
const run = benches[mode];
if (!run) {
  console.error(`unknown bench "${mode}" (available: ${Object.keys(benches).join(', ')})`);
  process.exit(2);
}
await run();
