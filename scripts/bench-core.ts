// npm run bench [-- core]: the service core.
//
// Prints, as medians over repeated runs in this one process:
//   1. raw onnxruntime BlazeFace latency (session.run on a prepared tensor)
//   2. face-detection pipeline latency (decode -> preprocess -> run -> postprocess -> render), in-process
//   3. end-to-end task latency: HTTP create -> Redis/BullMQ -> worker (inference thread) -> HTTP poll
//      sees "succeeded"; and its overhead above the pipeline (difference and ratio)
//   4. the API's event-loop lag while the worker is saturated, against a baseline that runs the
//      same pipeline on the event loop (what inference threads avoid)
//   5. the create path, variants side by side: each service variant is the real API entry in a
//      process of its own (and a worker process for the end-to-end rounds); create-task requests/s
//      at 64 in flight with no worker taking tasks, CPU per create of the API and of Redis, and
//      end-to-end time of one task at a time with Prefer: wait; for the create path as it was
//      ("before": no auto-pipelining, no auth cache) and as it is, with metrics on and off, with
//      and without an Idempotency-Key (on one API process), and a second process of one
//      configuration as an A/A yardstick; beside two floors measured in the same rounds, a do-nothing
//      fastify route (a process of its own) and raw BullMQ Queue.add. Many short rounds, rotated
//      order, warm-up, and paired per-round ratios with their spread (see compareCreatePaths).
//      BENCH_ROUNDS (30), BENCH_WARMUP (3), BENCH_CREATES (500), BENCH_E2E_ROUNDS (15), BENCH_E2E (5);
//      BENCH_ONLY_CREATE=1 skips sections 3 and 4.
// Uses REDIS_URL, or a private redis-server it starts and stops. Set BENCH_PROVIDER=webgpu|cuda to
// try a GPU provider (falls back to cpu with a warning).
import fs from 'node:fs';
import http from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { parseConfig } from '../src/config/env.ts';
import { createServices } from '../src/main/services.ts';
import { TaskQueue } from '../src/queue/task-queue.ts';
import { deleteKeysWithPrefix, keyspace } from '../src/store/redis.ts';
import { freePort } from '../src/main/embedded-redis.ts';
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
const onlyCreate = process.env.BENCH_ONLY_CREATE === '1';
if (!onlyCreate) await serviceSections();
/** Sections 3 and 4 (a worker in this process). */
async function serviceSections() {
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
}
await closeApp(app, 500);
await client.close();

await compareCreatePaths();

files.close();
await sessions.releaseAll();
await teardown();

// --- 5: the create path, variants interleaved ------------------------------------------------
// Each service variant is the real API entry (src/main/api.ts) in a process of its own, with its
// own worker process (src/main/worker.ts) for the end-to-end rounds: METRICS_ENABLED=false then
// turns off everything metrics do in a process (the per-request counters, and prom-client's GC
// observer and event-loop monitor), and the load generator (this process) does not share the
// API's event loop. Built for a shared, noisy machine: many short rounds, each running every
// variant once in an order rotated per round, after warm-up rounds that are not counted; a variant
// is judged by its ratio to another *in the same round* (paired), and the median of those ratios
// is given with its spread (interquartile range and min-max), so load that drifts between rounds
// cancels out instead of deciding the result. Besides requests/s, each round reads the CPU time
// per create of the API process (/proc schedstat, all its threads) and of Redis (INFO cpu): a busy
// neighbour disturbs those far less than wall-clock throughput.
async function compareCreatePaths(): Promise<void> {
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
  const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
  const CREATES = Number(process.env.BENCH_CREATES ?? 500);
  const E2E_ROUNDS = Number(process.env.BENCH_E2E_ROUNDS ?? 15);
  const E2E = Number(process.env.BENCH_E2E ?? 5);
  const IN_FLIGHT = 64;
  interface Round {
    rate: number;
    /** CPU microseconds per request of the server process (NaN: not measured) and of Redis. */
    cpuUs: number;
    redisUs: number;
  }
  interface E2ERound {
    /** Medians of the round: end to end, server total_time, and the pipeline run in this process. */
    e2e: number;
    server: number;
    pipe: number;
  }
  interface Variant {
    name: string;
    throughput(): Promise<Round>;
    e2e?(n: number): Promise<{ e2e: number[]; server: number[] }>;
    close(): Promise<void>;
  }
  const children: ChildProcess[] = [];
  const spawnEntry = (args: string[], env: Record<string, string | undefined>, cwd = '.') => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
    children.push(child);
    return child;
  };
  const stop = async (child: ChildProcess) => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  /** CPU ns of every thread of a process (Linux; NaN elsewhere). */
  const cpuNs = (pid: number | undefined): number => {
    try {
      let sum = 0;
      for (const t of fs.readdirSync(`/proc/${pid}/task`)) sum += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
      return sum;
    } catch {
      return NaN;
    }
  };
  const redisCpuUs = async () => {
    const info = await services.redis.info('cpu');
    const f = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
    return (f('used_cpu_user') + f('used_cpu_sys')) * 1e6;
  };
  const until = async (url: string, ms: number) => {
    const t0 = Date.now();
    for (;;) {
      try {
        const r = await fetch(url);
        if (r.status < 500) return;
      } catch {
        // not listening yet
      }
      if (Date.now() - t0 > ms) throw new Error(`${url} did not answer within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const loop = async (n: number, pid: number | undefined, one: () => Promise<unknown>): Promise<Round> => {
    let next = 0;
    const [cpu0, redis0] = [cpuNs(pid), await redisCpuUs()];
    const t0 = performance.now();
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < n) await one();
    }));
    const wall = performance.now() - t0;
    const [cpu1, redis1] = [cpuNs(pid), await redisCpuUs()];
    return { rate: n / (wall / 1000), cpuUs: (cpu1 - cpu0) / 1000 / n, redisUs: (redis1 - redis0) / n };
  };

  // Floor 1: a fastify route in a process of its own that parses the same JSON body and answers a constant.
  const floorPort = await freePort();
  const floorChild = spawnEntry(['--input-type=module', '-e', `import Fastify from 'fastify'; const app = Fastify(); app.post('/create', async () => ({ code: 200, result: { task_id: 'x' } })); app.get('/health', async () => 'ok'); await app.listen({ port: ${floorPort}, host: '127.0.0.1' }); process.on('SIGTERM', () => app.close().then(() => process.exit(0)));`], {});
  await until(`http://127.0.0.1:${floorPort}/health`, 30_000);
  const floorClient = new Pool(`http://127.0.0.1:${floorPort}`, { connections: IN_FLIGHT, pipelining: 1 });
  const floorRoute: Variant = {
    name: 'floor: do-nothing fastify route',
    throughput: () => loop(CREATES, floorChild.pid, async () => {
      const r = await floorClient.request({ path: '/create', method: 'POST', headers: { 'content-type': 'application/json' }, body: createBody });
      await r.body.json();
    }),
    close: async () => {
      await floorClient.close();
      await stop(floorChild);
    },
  };
  // Floor 2: BullMQ Queue.add with the task's job options (auto-pipelined, as the API's producer),
  // from this process: what Redis does for the queue alone.
  const rawQueue = new TaskQueue({ redisUrl: config.redisUrl!, prefix: `{${config.redisPrefix}-raw}`, attempts: 3, autoPipeline: true });
  const floorQueue: Variant = {
    name: 'floor: raw BullMQ Queue.add (in the bench process)',
    throughput: async () => {
      const round = await loop(CREATES, undefined, () => rawQueue.enqueue(randomUUID().replace(/-/g, ''), 1));
      await rawQueue.queue.obliterate({ force: true });
      return round;
    },
    close: () => rawQueue.close(),
  };

  const serviceVariants: Variant[] = [];
  /**
   * `root`: the checkout whose API and worker entries run (BENCH_BASELINE_ROOT: an older one).
   * The answer's `withHeaders` is another variant on the same processes whose requests carry more
   * headers: two API processes with one configuration differ by up to 5-7% in creates/s and CPU
   * per create on this machine (measured as an A/A pair in one run), as much as the
   * Idempotency-Key's whole cost, so a header's cost is measured on one process, not across two.
   */
  async function serviceVariant(name: string, env: Record<string, string>, root = '.'): Promise<Variant & { withHeaders(name: string, extraHeaders: () => Record<string, string>): Variant }> {
    const port = await freePort();
    const vEnv = { ...benchEnv, REDIS_PREFIX: `${config.redisPrefix}-${serviceVariants.length}`, PORT: String(port), HOST: '127.0.0.1', READY_REQUIRES_WORKER: 'false', ...env };
    // The bench's own handle on the variant's keys (accounts, queue cleanup): records nothing.
    const vConfig = parseConfig({ ...vEnv, METRICS_ENABLED: 'false' });
    const s = createServices(vConfig, vConfig.redisUrl!, silentLogger);
    const keys = keyspace(vConfig.redisKeyPrefix);
    const api = spawnEntry(['src/main/api.ts'], vEnv, root);
    const worker = E2E_ROUNDS > 0 ? spawnEntry(['src/main/worker.ts'], vEnv, root) : undefined;
    await until(`http://127.0.0.1:${port}/health`, 60_000);
    const vClient = new Pool(`http://127.0.0.1:${port}`, { connections: IN_FLIGHT, pipelining: 1 });
    const key = await s.accounts.createKey();
    await s.accounts.addCredits(key.userId, 1e9, 'bench');
    const h = { authorization: `Bearer ${key.apiKey}`, 'content-type': 'application/json' };
    const sender = (name: string, extraHeaders?: () => Record<string, string>) => async (more?: Record<string, string>) => {
      const r = await vClient.request({ path: '/api/tasks/v1/create', method: 'POST', headers: { ...h, ...extraHeaders?.(), ...more }, body: createBody });
      const j = (await r.body.json()) as { code: number; result: { task_id: string } & Partial<TaskResult> };
      if (j.code !== 200) throw new Error(`${name}: create failed: ${JSON.stringify(j)}`);
      return j.result;
    };
    const variantOn = (name: string, send: ReturnType<typeof sender>): Variant => ({
      name,
      throughput: async () => {
        // The worker is paused: the rounds measure creating alone, and leave the queue as they found it.
        await s.queue.queue.pause();
        const round = await loop(CREATES, api.pid, () => send());
        await s.queue.queue.obliterate({ force: true });
        // As if a worker had taken them: the API's lost-task sweep would otherwise fail (and refund)
        // every created task 5 s later, in the middle of other variants' rounds.
        await s.redis.del(keys.activeTasks());
        await s.queue.queue.resume();
        return round;
      },
      async e2e(n) {
        const out = { e2e: [] as number[], server: [] as number[] };
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          const t = await send({ prefer: 'wait=60' });
          out.e2e.push(performance.now() - t0);
          if (t.status !== 'succeeded') throw new Error(`${name}: task ${t.task_id} did not succeed within the wait (${t.status ?? 'no record'})`);
          out.server.push(t.total_time! * 1000);
        }
        return out;
      },
      // The processes are closed by the variant that started them.
      close: async () => undefined,
    });
    const v = {
      ...variantOn(name, sender(name)),
      async close() {
        await vClient.close();
        await stop(api);
        if (worker) await stop(worker);
        await deleteKeysWithPrefix(s.redis, vConfig.redisKeyPrefix);
        await s.close();
      },
      withHeaders(more: string, extraHeaders: () => Record<string, string>) {
        const w = variantOn(`${name}, ${more}`, sender(`${name}, ${more}`, extraHeaders));
        serviceVariants.push(w);
        return w;
      },
    };
    serviceVariants.push(v);
    return v;
  }
  const before = await serviceVariant('before: no auto-pipelining, no auth cache', { REDIS_AUTO_PIPELINE: 'false', AUTH_CACHE_MS: '0' });
  const after = await serviceVariant('current: metrics on', {});
  const noMetrics = await serviceVariant('current: metrics off', { METRICS_ENABLED: 'false' });
  const idem = after.withHeaders('Idempotency-Key', () => ({ 'idempotency-key': randomUUID() }));
  // An A/A pair: the spread between two processes of one configuration, the yardstick for the
  // metrics comparison, which needs two processes.
  const twin = await serviceVariant('current: metrics on, a second process', {});
  // BENCH_BASELINE_ROOT: another checkout (e.g. `git archive <commit> | tar -x -C dir`, with a
  // node_modules link) run as two more variants, to compare a change with its parent in one run.
  const baseRoot = process.env.BENCH_BASELINE_ROOT;
  const baseOn = baseRoot ? await serviceVariant(`baseline (${path.basename(baseRoot)}): metrics on`, {}, baseRoot) : undefined;
  const baseline = baseOn ? [baseOn, baseOn.withHeaders('Idempotency-Key', () => ({ 'idempotency-key': randomUUID() }))] : [];
  const variants = [floorRoute, floorQueue, before, after, noMetrics, idem, twin, ...baseline];
  const rotated = <T>(list: T[], r: number) => list.map((_, i) => list[(i + r) % list.length]!);

  try {
    const rounds = new Map<Variant, Round[]>(variants.map((v) => [v, []]));
    for (let r = -WARMUP; r < ROUNDS; r++) {
      for (const v of rotated(variants, r + WARMUP)) {
        const round = await v.throughput();
        if (r >= 0) rounds.get(v)!.push(round);
      }
    }
    // End to end: one task at a time, created with Prefer: wait (the answer comes when the task
    // ends: no polling interval in the figure). Each round also runs the pipeline in this process,
    // so the overhead above it is a difference taken within one round, not across the run.
    const e2e = new Map<Variant, E2ERound[]>(serviceVariants.map((v) => [v, []]));
    if (E2E_ROUNDS > 0) {
      for (const v of serviceVariants) await v.e2e!(3); // warm-up, and waits for the workers to start
      for (let r = 0; r < E2E_ROUNDS; r++) {
        for (const v of rotated(serviceVariants, r)) {
          const { e2e: ms, server } = await v.e2e!(E2E);
          const p: number[] = [];
          for (let i = 0; i < E2E; i++) {
            const t0 = performance.now();
            await runPipeline();
            p.push(performance.now() - t0);
          }
          e2e.get(v)!.push({ e2e: median(ms), server: median(server), pipe: median(p) });
        }
      }
    }

    /** Median and spread of per-round ratios a[i] / b[i]. */
    const paired = (a: number[], b: number[]) => {
      const ratios = a.map((x, i) => x / b[i]!);
      return { median: median(ratios), p25: pct(ratios, 25), p75: pct(ratios, 75), min: Math.min(...ratios), max: Math.max(...ratios) };
    };
    const spread = (p: ReturnType<typeof paired>) =>
      Number.isFinite(p.median) ? `${p.median.toFixed(3)} (IQR ${p.p25.toFixed(3)}-${p.p75.toFixed(3)}, range ${p.min.toFixed(2)}-${p.max.toFixed(2)})` : '';
    const of = (v: Variant, k: keyof Round) => rounds.get(v)!.map((x) => x[k]);
    const ofE = (v: Variant, f: (x: E2ERound) => number) => e2e.get(v)!.map(f);
    const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');

    console.log(`5. create path: ${ROUNDS} interleaved rounds (+${WARMUP} warm-up) of ${CREATES} creates at ${IN_FLIGHT} in flight, the API in a process of its own, no worker taking tasks; then ${E2E_ROUNDS} rounds of ${E2E} tasks one at a time (Prefer: wait). Load average at the end ${load}.`);
    console.log('   Ratios: medians of per-round ratios to "current: metrics on" (paired), with their interquartile range and range.');
    console.log('   | variant | creates/s | creates/s vs current | server CPU µs/create | vs current | Redis CPU µs/create |');
    console.log('   |---|---|---|---|---|---|');
    for (const v of variants) {
      const cpu = median(of(v, 'cpuUs'));
      console.log(`   | ${v.name} | ${median(of(v, 'rate')).toFixed(0)} | ${spread(paired(of(v, 'rate'), of(after, 'rate')))} | ${Number.isFinite(cpu) ? cpu.toFixed(0) : ''} | ${spread(paired(of(v, 'cpuUs'), of(after, 'cpuUs')))} | ${median(of(v, 'redisUs')).toFixed(0)} |`);
    }
    if (E2E_ROUNDS > 0) {
      const overhead = (v: Variant) => ofE(v, (x) => x.e2e - x.pipe);
      const serverSide = (v: Variant) => ofE(v, (x) => x.server - x.pipe);
      console.log(`   | variant | end to end | pipeline (same rounds) | overhead above the pipeline | server-side (total_time - pipeline) | end to end vs current |`);
      console.log('   |---|---|---|---|---|---|');
      for (const v of serviceVariants) {
        console.log(`   | ${v.name} | ${fmt(median(ofE(v, (x) => x.e2e)))} | ${fmt(median(ofE(v, (x) => x.pipe)))} | ${fmt(median(overhead(v)))} | ${fmt(median(serverSide(v)))} | ${spread(paired(ofE(v, (x) => x.e2e), ofE(after, (x) => x.e2e)))} |`);
      }
    }
    // The two costs the issue bounds (<= 5% slower), as "with / without" per round (> 1: slower with).
    const cost = (what: string, withIt: Variant, without: Variant) => {
      let line = `   cost of ${what}: creates/s without/with ${spread(paired(of(without, 'rate'), of(withIt, 'rate')))}; server CPU per create with/without ${spread(paired(of(withIt, 'cpuUs'), of(without, 'cpuUs')))}`;
      if (E2E_ROUNDS > 0) {
        const d = ofE(withIt, (x) => x.e2e).map((x, i) => x - e2e.get(without)![i]!.e2e);
        line += `; end to end with/without ${spread(paired(ofE(withIt, (x) => x.e2e), ofE(without, (x) => x.e2e)))}, difference ${fmt(median(d))} median (IQR ${fmt(pct(d, 25))} to ${fmt(pct(d, 75))})`;
      }
      console.log(line);
    };
    cost('metrics', after, noMetrics);
    cost('Idempotency-Key (one API process, rounds with and without the header)', idem, after);
    cost('a second process of one configuration (A/A: no change, the spread between processes)', twin, after);
    if (baseline.length) {
      cost('the baseline over this change (metrics on)', baseline[0]!, after);
      cost('the baseline over this change (Idempotency-Key)', baseline[1]!, idem);
    }
  } finally {
    for (const v of variants) await v.close();
    for (const c of children) await stop(c);
  }
}
