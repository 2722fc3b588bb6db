// npm run bench -- pictures [provider]
// Throughput of a worker node on the picture jobs: 1 MP hairstyle (hairstyle-bisenet, Long Wave, one
// output) and 1 MP try-on (upper_body) tasks through a real inference-thread pool in this process,
// as a worker runs them (no Redis or HTTP), at each WORKER_CONCURRENCY in BENCH_POOL_THREADS (default
// 1, 2, 4, 8 and the cores less one, capped at the cores), every thread with (cores - 1) /
// threads intra-op threads and one task at a time; as many tasks in flight as threads. Pictures/s
// and p50 latency per point. The provider is the first argument or EXECUTION_PROVIDER (cpu by
// default; cuda on a GPU host: every thread opens its own CUDA sessions).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadRegistry } from '../src/models/registry.ts';
import type { ExecutionProvider } from '../src/models/onnx.ts';
import { PipelinePool } from '../src/queue/pipeline-pool.ts';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { tshirt } from '../test/helpers/garments.ts';
import { benchPhotos, runInFlight, stats } from './bench-setup.ts';

const provider = (process.argv[3] ?? process.env.EXECUTION_PROVIDER ?? 'cpu') as ExecutionProvider;
const registry = loadRegistry(path.resolve('models'));
await fetchAll(registry);
const cores = os.availableParallelism();
const most = Math.max(1, cores - 1);
const threadCounts = [...new Set((process.env.BENCH_POOL_THREADS ?? `1 2 4 8 ${most}`).split(/[ ,]+/).map(Number).map((t) => Math.min(t, cores)))];
const TASKS_PER_THREAD = Number(process.env.BENCH_TASKS_PER_THREAD ?? 6);
const hair = registry.byName('hairstyle-bisenet')!;
const tryon = registry.byName('tryon-classic')!;
const { hair: hairBytes, tryon: person } = await benchPhotos();
const garment = await tshirt();
const jobs = {
  'hairstyle 1.06 MP': { version: hair.id, input: { image_files: ['http://bench/a.png'], hair_color: 'blonde', hairstyle: 'Long Wave', num_outputs: 1 }, files: () => ({ image_files: [Uint8Array.from(hairBytes)] }) },
  'try-on 1 MP upper_body': { version: tryon.id, input: { clothes_image: 'http://bench/g', custom_model: 'http://bench/p', clothes_type: 'upper_body' }, files: () => ({ clothes_image: [Uint8Array.from(garment)], custom_model: [Uint8Array.from(person)] }) },
};
console.log(`bench pictures: ${os.cpus()[0]?.model ?? 'cpu'} x${cores}, provider ${provider}, load average ${os.loadavg()[0]!.toFixed(1)}; ${TASKS_PER_THREAD} tasks per thread per point after a warm-up task per thread`);
for (const threads of threadCounts) {
  const intraOp = Math.max(1, Math.floor(most / threads));
  const pool = new PipelinePool(
    { modelsDir: path.resolve('models'), provider, intraOpThreads: intraOp, allowSpinning: false, maxPixels: 4e7, warm: [hair.id, tryon.id] },
    threads,
    (m) => {
      throw new Error(`bench: ${m}`);
    },
  );
  await pool.ready();
  for (const [what, job] of Object.entries(jobs)) {
    const run = () => pool.run(job.version, job.input, job.files());
    await Promise.all(Array.from({ length: threads }, run)); // warm-up: every thread once
    const tasks = TASKS_PER_THREAD * threads;
    const { latencies, seconds } = await runInFlight(tasks, threads, run);
    console.log(`${what}: ${threads} thread(s) x ${intraOp} intra-op: ${(tasks / seconds).toFixed(2)} pictures/s, p50 ${stats.median(latencies).toFixed(0)} ms, p90 ${stats.pct(latencies, 90).toFixed(0)} ms (${tasks} tasks)`);
  }
  await pool.close();
}
process.exit(0);
