// npm run bench [-- core]: the service core.
//
// Prints, as medians over repeated runs in this one process:
//   1. raw onnxruntime BlazeFace latency (session.run on a prepared tensor)
//   2. face-detection pipeline latency (decode -> preprocess -> run -> postprocess -> render), in-process
//   3. end-to-end task latency: HTTP create -> Redis/BullMQ -> worker (inference thread) -> HTTP poll
//      sees "succeeded"; and its overhead above the pipeline (difference and ratio)
//   4. the API's event-loop lag while the worker is saturated, against a baseline that runs the
//      same pipeline on the event loop (what inference threads avoid)
//   5. create-task requests per second on loopback (worker stopped, so the API alone is measured)
// Uses REDIS_URL, or a private redis-server it starts and stops. Set BENCH_PROVIDER=webgpu|cuda to
// try a GPU provider (falls back to cpu with a warning).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool } from 'undici';
import { silentLogger } from '../src/domain/logger.ts';
import { closeApp } from '../src/api/app.ts';
import { createApi } from '../src/main/api-root.ts';
import { createWorker } from '../src/main/worker-root.ts';
import { SessionCache } from '../src/models/sessions.ts';
import { faceDetection } from '../src/pipelines/face-detection/pipeline.ts';
import { letterboxToTensor, decodeImage } from '../src/imaging/image.ts';
import { benchSetup, stats } from './bench-setup.ts';

const { median, pct, fmt } = stats;
const provider = (process.env.BENCH_PROVIDER ?? 'cpu') as 'cpu' | 'cuda' | 'webgpu';
const { config, services, teardown } = await benchSetup({
  EXECUTION_PROVIDER: provider,
  WORKER_CONCURRENCY: process.env.WORKER_CONCURRENCY ?? '1',
});
const version = services.registry.byName('face-detection-blazeface')!;
const photo = fs.readFileSync('test/fixtures/astronaut.png');
const cores = os.availableParallelism();
console.log(`bench core: ${os.cpus()[0]?.model ?? 'cpu'} x${cores}, node ${process.version}, provider ${provider}, worker concurrency ${config.workerConcurrency}, intra-op threads ${config.ortIntraOpThreads}, spinning ${config.ortAllowSpinning}`);

// --- 1 + 2: in-process, on this thread -------------------------------------------------------
const sessions = new SessionCache(services.registry, {
  provider,
  intraOpThreads: config.ortIntraOpThreads,
  allowSpinning: config.ortAllowSpinning,
  warn: (m) => console.warn(m),
});
const session = await sessions.get(version.id, 'detector');
const { tensor } = await letterboxToTensor(await decodeImage(photo, { maxPixels: 4e7 }), 256, [-1, 1]);
const feeds = { [session.inputNames[0]!]: { data: tensor, dims: [1, 256, 256, 3] } };
for (let i = 0; i < 20; i++) await session.run(feeds);
const raw: number[] = [];
for (let i = 0; i < 200; i++) {
  const t0 = performance.now();
  await session.run(feeds);
  raw.push(performance.now() - t0);
}
const ctx = { params: version.manifest.params, session: (g: string) => sessions.get(version.id, g), maxPixels: 4e7 };
const runPipeline = () => faceDetection.run(ctx, { image: 'http://bench/x' }, { image: [photo] });
for (let i = 0; i < 5; i++) await runPipeline();
const pipe: number[] = [];
for (let i = 0; i < 50; i++) {
  const t0 = performance.now();
  await runPipeline();
  pipe.push(performance.now() - t0);
}
console.log(`1. raw onnxruntime BlazeFace run      median ${fmt(median(raw))}  p90 ${fmt(pct(raw, 90))}  (n=200, ${session.provider})`);
console.log(`2. face-detection pipeline            median ${fmt(median(pipe))}  p90 ${fmt(pct(pipe, 90))}  (n=50, 512x512 PNG)`);

// --- the service: API + worker in this process, input served over loopback HTTP --------------
const files = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(photo));
await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
const imageUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/astronaut.png`;
const app = await createApi(config, services);
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const { apiKey, userId } = await services.accounts.createKey();
await services.accounts.addCredits(userId, 1e9, 'bench');
const client = new Pool(base, { connections: 64, pipelining: 1 });
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
const createBody = JSON.stringify({ version: version.id, input: { image: imageUrl } });

async function create(): Promise<string> {
  const r = await client.request({ path: '/api/tasks/v1/create', method: 'POST', headers, body: createBody });
  const j = (await r.body.json()) as { code: number; result: { task_id: string } };
  if (j.code !== 200) throw new Error(`create failed: ${JSON.stringify(j)}`);
  return j.result.task_id;
}
interface TaskResult {
  status: string;
  total_time: number;
  predict_time: number;
  logs: string | null;
}
async function status(id: string): Promise<TaskResult> {
  const r = await client.request({ path: `/api/tasks/v1/get/${id}`, method: 'GET', headers });
  return ((await r.body.json()) as { result: TaskResult }).result;
}
async function untilDone(id: string) {
  for (;;) {
    const s = await status(id);
    if (s.status === 'succeeded' || s.status === 'failed') return s;
    // A client polling every 2 ms: fine-grained, without spinning a core the worker needs.
    await new Promise((r) => setTimeout(r, 2));
  }
}

// --- 5 first, while no worker runs: the API alone ---------------------------------------------
{
  const n = 4000;
  const concurrency = 64;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) await create();
    }),
  );
  const s = (performance.now() - t0) / 1000;
  await services.queue.queue.obliterate({ force: true });
  console.log(`5. create-task throughput             ${(n / s).toFixed(0)} req/s  (${n} creates, ${concurrency} connections, loopback, API + Redis on this machine)`);
}

// --- 3: end-to-end latency, one task at a time ---------------------------------------------
const worker = createWorker(config, services, config.redisUrl!, silentLogger);
await worker.start();
for (let i = 0; i < 5; i++) await untilDone(await create());
const e2e: number[] = [];
const serverTotal: number[] = [];
const stageMs = new Map<string, number[]>();
for (let i = 0; i < 50; i++) {
  const t0 = performance.now();
  const s = await untilDone(await create());
  e2e.push(performance.now() - t0);
  serverTotal.push(s.total_time * 1000);
  for (const m of (s.logs ?? '').matchAll(/^(\w+): ([\d.]+) ms$/gm)) {
    stageMs.set(m[1]!, [...(stageMs.get(m[1]!) ?? []), Number(m[2])]);
  }
}
const overhead = median(e2e) - median(pipe);
console.log(`3. end-to-end task (HTTP+Redis+worker) median ${fmt(median(e2e))}  p90 ${fmt(pct(e2e, 90))}  (n=50; server total_time median ${fmt(median(serverTotal))})`);
console.log(`   overhead above the pipeline        ${fmt(overhead)} median  (ratio ${(median(e2e) / median(pipe)).toFixed(2)}x; includes the loopback download and 2 ms polling)`);
console.log(`   worker stages (medians): ${[...stageMs].map(([k, v]) => `${k} ${median(v).toFixed(1)}`).join(', ')} ms`);

// --- 4: event-loop lag while the worker is saturated ------------------------------------------
// The histogram holds the intervals between ticks of a timer repeating every `resolution` ms; the
// lag is what exceeds that interval.
async function lagDuring(work: () => Promise<unknown>): Promise<{ p50: number; p99: number; max: number }> {
  const resolution = 2;
  const h = monitorEventLoopDelay({ resolution });
  h.enable();
  await work();
  h.disable();
  const lag = (ns: number) => Math.max(0, ns / 1e6 - resolution);
  return { p50: lag(h.percentile(50)), p99: lag(h.percentile(99)), max: lag(h.max) };
}
const burst = 60;
const threaded = await lagDuring(async () => {
  const ids = await Promise.all(Array.from({ length: burst }, () => create()));
  for (const id of ids) await untilDone(id);
});
// Baseline: the same number of pipeline runs executed on this event loop (no inference threads).
const inline = await lagDuring(async () => {
  for (let i = 0; i < burst; i++) await runPipeline();
});
console.log(`4. API event-loop lag, worker saturated (${burst} queued tasks, inference threads): p50 ${fmt(threaded.p50)}  p99 ${fmt(threaded.p99)}  max ${fmt(threaded.max)}`);
console.log(`   baseline, same pipeline on the event loop:                       p50 ${fmt(inline.p50)}  p99 ${fmt(inline.p99)}  max ${fmt(inline.max)}  (p99 ratio ${(inline.p99 / threaded.p99).toFixed(1)}x)`);

await worker.close();
await closeApp(app, 500);
await client.close();
files.close();
await sessions.releaseAll();
await teardown();
