// npm run bench [-- core]: the service core.
//
// Prints, as medians over repeated runs in this one process:
//   1. raw onnxruntime BlazeFace latency (session.run on a prepared tensor)
//   2. face-detection pipeline latency (decode -> preprocess -> run -> postprocess -> render), in-process
//   3. end-to-end task latency: HTTP create -> Redis/BullMQ -> worker (inference thread) -> HTTP poll
//      sees "succeeded"; and its overhead above the pipeline (difference and ratio)
//   4. the API's event-loop lag while the worker is saturated, against a baseline that runs the
//      same pipeline on the event loop (what inference threads avoid)
//   5. the create path, variants side by side (interleaved rounds, medians, ratios): create-task
//      requests/s on loopback (no worker running) and end-to-end overhead above the pipeline, for
//      the create path as it was ("before": no auto-pipelining, no auth cache) and as it is, with
//      metrics on and off, with and without an Idempotency-Key; beside two floors measured in the
//      same rounds, a do-nothing fastify route and raw BullMQ Queue.add, both at the same 64 in flight
// Uses REDIS_URL, or a private redis-server it starts and stops. Set BENCH_PROVIDER=webgpu|cuda to
// try a GPU provider (falls back to cpu with a warning).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { parseConfig } from '../src/config/env.ts';
import { createServices } from '../src/main/services.ts';
import { TaskQueue } from '../src/queue/task-queue.ts';
import { deleteKeysWithPrefix } from '../src/store/redis.ts';
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
const { config, services, teardown, env: benchEnv } = await benchSetup({
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

await compareCreatePaths();

files.close();
await sessions.releaseAll();
await teardown();

// --- 5: the create path, variants interleaved ------------------------------------------------
async function compareCreatePaths(): Promise<void> {
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
  const CREATES = Number(process.env.BENCH_CREATES ?? 2000);
  const E2E = Number(process.env.BENCH_E2E ?? 20);
  const IN_FLIGHT = 64;
  interface Variant {
    name: string;
    /** Requests/s of one round. */
    throughput(): Promise<number>;
    /** End-to-end ms of E2E tasks, one at a time (service variants only). */
    e2e?(): Promise<number[]>;
    close(): Promise<void>;
  }
  const loop = async (n: number, one: (i: number) => Promise<unknown>) => {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < n) await one(next++);
    }));
    return n / ((performance.now() - t0) / 1000);
  };

  // Floor 1: a fastify route that parses the same JSON body and answers a constant.
  const bare = Fastify();
  bare.post('/create', async () => ({ code: 200, result: { task_id: 'x' } }));
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const bareClient = new Pool(`http://127.0.0.1:${(bare.server.address() as AddressInfo).port}`, { connections: IN_FLIGHT, pipelining: 1 });
  const floorRoute: Variant = {
    name: 'floor: do-nothing fastify route',
    throughput: () => loop(CREATES, async () => {
      const r = await bareClient.request({ path: '/create', method: 'POST', headers: { 'content-type': 'application/json' }, body: createBody });
      await r.body.json();
    }),
    close: async () => {
      await bareClient.close();
      await bare.close();
    },
  };
  // Floor 2: BullMQ Queue.add with the task's job options, on a producer connection of its own.
  const rawQueue = new TaskQueue({ redisUrl: config.redisUrl!, prefix: `{${config.redisPrefix}-raw}`, attempts: 3 });
  const floorQueue: Variant = {
    name: 'floor: raw BullMQ Queue.add',
    throughput: async () => {
      const rate = await loop(CREATES, () => rawQueue.enqueue(randomUUID().replace(/-/g, ''), 1));
      await rawQueue.queue.obliterate({ force: true });
      return rate;
    },
    close: () => rawQueue.close(),
  };

  async function serviceVariant(name: string, env: Record<string, string>, extraHeaders?: () => Record<string, string>): Promise<Variant> {
    const vConfig = parseConfig({ ...benchEnv, REDIS_PREFIX: `${config.redisPrefix}-${serviceVariants.length}`, ...env });
    const s = createServices(vConfig, vConfig.redisUrl!, silentLogger);
    const vApp = await createApi(vConfig, s);
    await vApp.listen({ port: 0, host: '127.0.0.1' });
    const vClient = new Pool(`http://127.0.0.1:${(vApp.server.address() as AddressInfo).port}`, { connections: IN_FLIGHT, pipelining: 1 });
    const key = await s.accounts.createKey();
    await s.accounts.addCredits(key.userId, 1e9, 'bench');
    const h = { authorization: `Bearer ${key.apiKey}`, 'content-type': 'application/json' };
    const vCreate = async () => {
      const r = await vClient.request({ path: '/api/tasks/v1/create', method: 'POST', headers: extraHeaders ? { ...h, ...extraHeaders() } : h, body: createBody });
      const j = (await r.body.json()) as { code: number; result: { task_id: string } };
      if (j.code !== 200) throw new Error(`${name}: create failed: ${JSON.stringify(j)}`);
      return j.result.task_id;
    };
    const vDone = async (id: string) => {
      for (;;) {
        const r = await vClient.request({ path: `/api/tasks/v1/get/${id}`, method: 'GET', headers: h });
        const t = ((await r.body.json()) as { result: TaskResult }).result;
        if (t.status === 'succeeded' || t.status === 'failed') return t;
        await new Promise((res) => setTimeout(res, 2));
      }
    };
    const v: Variant = {
      name,
      throughput: async () => {
        const rate = await loop(CREATES, vCreate);
        await s.queue.queue.obliterate({ force: true });
        return rate;
      },
      async e2e() {
        const w = createWorker(vConfig, s, vConfig.redisUrl!, silentLogger);
        await w.start();
        try {
          for (let i = 0; i < 3; i++) await vDone(await vCreate());
          const ms: number[] = [];
          for (let i = 0; i < E2E; i++) {
            const t0 = performance.now();
            await vDone(await vCreate());
            ms.push(performance.now() - t0);
          }
          return ms;
        } finally {
          await w.close();
        }
      },
      async close() {
        await closeApp(vApp, 500);
        await vClient.close();
        await deleteKeysWithPrefix(s.redis, vConfig.redisKeyPrefix);
        await s.close();
      },
    };
    serviceVariants.push(v);
    return v;
  }
  const serviceVariants: Variant[] = [];
  const before = await serviceVariant('before: no auto-pipelining, no auth cache', { REDIS_AUTO_PIPELINE: 'false', AUTH_CACHE_MS: '0' });
  const after = await serviceVariant('after: metrics on', {});
  const noMetrics = await serviceVariant('after: metrics off', { METRICS_ENABLED: 'false' });
  const idem = await serviceVariant('after: metrics on, Idempotency-Key', {}, () => ({ 'idempotency-key': randomUUID() }));
  const variants = [floorRoute, floorQueue, before, after, noMetrics, idem];

  const rates = new Map<Variant, number[]>(variants.map((v) => [v, []]));
  const e2e = new Map<Variant, number[]>(serviceVariants.map((v) => [v, []]));
  for (const v of variants) await v.throughput(); // warm-up: JIT, scripts loaded, connections open
  for (let r = 0; r < ROUNDS; r++) {
    // Rotated order each round, so drift in the machine's load spreads over every variant.
    const order = variants.map((_, i) => variants[(i + r) % variants.length]!);
    for (const v of order) rates.get(v)!.push(await v.throughput());
    if (E2E > 0) for (const v of order) if (v.e2e) e2e.get(v)!.push(median(await v.e2e()));
  }
  const rate = (v: Variant) => median(rates.get(v)!);
  const over = (v: Variant) => median(e2e.get(v)!) - median(pipe);
  console.log(`5. create path: ${ROUNDS} interleaved rounds of ${CREATES} creates at ${IN_FLIGHT} in flight, and of ${E2E} end-to-end tasks one at a time (medians of the rounds' medians)`);
  console.log(`   | variant | creates/s | vs after | end to end, and overhead above the pipeline (${fmt(median(pipe))}) | vs after |`);
  console.log('   |---|---|---|---|---|');
  for (const v of variants) {
    const row = [`${rate(v).toFixed(0)}`, `${(rate(v) / rate(after)).toFixed(2)}x`];
    const measured = E2E > 0 && e2e.has(v);
    row.push(measured ? `${fmt(median(e2e.get(v)!))} e2e, ${fmt(over(v))} over` : '', measured ? `${(over(v) / over(after)).toFixed(2)}x` : '');
    console.log(`   | ${v.name} | ${row.join(' | ')} |`);
  }
  console.log(`   per round, creates/s: ${variants.map((v) => `${v.name.split(':')[0] === 'floor' ? v.name.slice(7) : v.name} [${rates.get(v)!.map((x) => x.toFixed(0)).join(' ')}]`).join('; ')}`);
  for (const v of variants) await v.close();
}
