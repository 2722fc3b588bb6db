// npm run bench -- batching [provider]
// Dynamic batching of face detection (version face-detection-blazeface-batched): tasks/s and p50 /
// p99 latency with 1, 8, 32 and 64 tasks in flight, batched (the pool's threads run up to 64 tasks
// at once and their detector calls are batched) against unbatched (one task per thread at a time,
// the default), in one run, through a real inference-thread pool in this process (decode,
// letterbox, model, NMS, preview per task; no Redis or HTTP, so the figures are the worker's).
// The average batch size is inferences / executions, counted by the batchers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadRegistry } from '../src/models/registry.ts';
import type { ExecutionProvider } from '../src/models/onnx.ts';
import { PipelinePool } from '../src/queue/pipeline-pool.ts';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { runInFlight, stats } from './bench-setup.ts';

const provider = (process.argv[3] ?? process.env.EXECUTION_PROVIDER ?? 'cpu') as ExecutionProvider;
const registry = loadRegistry(path.resolve('models'));
await fetchAll(registry);
const version = registry.byName('face-detection-blazeface-batched')!;
const cores = os.availableParallelism();
const threads = Number(process.env.WORKER_CONCURRENCY ?? (provider === 'cpu' ? 1 : Math.max(1, cores - 2)));
const intraOp = Number(process.env.ORT_INTRA_OP_THREADS ?? Math.max(1, Math.floor((cores - 1) / threads)));
const photo = fs.readFileSync('test/fixtures/astronaut.png');
const TASKS = Number(process.env.BENCH_TASKS ?? (provider === 'cpu' ? 192 : 2_000));
console.log(`bench batching: ${os.cpus()[0]?.model ?? 'cpu'} x${cores}, provider ${provider}, ${threads} inference thread(s) x ${intraOp} intra-op, ${TASKS} tasks per point, 512x512 PNG`);

async function point(batched: boolean, inFlight: number) {
  const pool = new PipelinePool(
    { modelsDir: path.resolve('models'), provider, intraOpThreads: intraOp, allowSpinning: false, maxPixels: 4e7, warm: [version.id], tasksPerThread: batched ? 64 : 1 },
    threads,
    (m) => console.error(m),
  );
  await pool.ready();
  const run = () => pool.run(version.id, { image: 'http://bench/a.png' }, { image: [Buffer.from(photo)] });
  for (let i = 0; i < 2 * threads; i++) await run(); // warm-up
  const before = pool.batchStats();
  const { latencies, seconds } = await runInFlight(TASKS, inFlight, run);
  const after = pool.batchStats();
  await pool.close();
  const exec = after.executions - before.executions;
  const avgBatch = exec ? (after.inferences - before.inferences) / exec : 1;
  return { tasksPerS: TASKS / seconds, p50: stats.median(latencies), p99: stats.pct(latencies, 99), avgBatch };
}

for (const inFlight of [1, 8, 32, 64]) {
  const u = await point(false, inFlight);
  const b = await point(true, inFlight);
  const f = (r: typeof u) => `${r.tasksPerS.toFixed(0).padStart(5)} tasks/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms`;
  console.log(`in flight ${String(inFlight).padStart(2)}: unbatched ${f(u)} | batched ${f(b)}  avg batch ${b.avgBatch.toFixed(1)}  (x${(b.tasksPerS / u.tasksPerS).toFixed(2)} tasks/s)`);
}
process.exit(0);
