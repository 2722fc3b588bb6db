// The ONLY importer of onnxruntime-node. Everything else sees ModelSession and plain typed arrays,
// so swapping the runtime or a provider touches this file alone.
//
// Note: onnxruntime-node executes `session.run` on the calling JS thread (the promise resolves
// after the native run). Callers must therefore run sessions inside worker threads, never on the
// event loop of a process that serves HTTP or renews Redis locks (see queue/pipeline-pool.ts); and
// a pipeline thread that wants to do its own JavaScript work while a model runs opens its sessions
// in a ModelThread (below).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { RUN_MS } from '../domain/stage-timer.ts';

export type ExecutionProvider = 'cpu' | 'cuda' | 'webgpu';

export interface FloatTensor {
  data: Float32Array;
  dims: readonly number[];
}

/** A tensor of any of the element types the imported graphs use (by its array type). */
export interface AnyTensor {
  data: Float32Array | Int32Array | BigInt64Array | Uint8Array;
  dims: readonly number[];
}

export interface ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** The provider actually in use (after any fallback). */
  readonly provider: ExecutionProvider;
  run(feeds: Record<string, FloatTensor>): Promise<Record<string, FloatTensor>>;
  /** Like run, for graphs with int32/int64/bool inputs or outputs. */
  runAny(feeds: Record<string, AnyTensor>): Promise<Record<string, AnyTensor>>;
  release(): Promise<void>;
}

export interface SessionOptions {
  provider: ExecutionProvider;
  intraOpThreads: number;
  /** Let intra-op threads spin between runs (lower latency alone, more contention in a busy process). */
  allowSpinning: boolean;
  /** Told when the requested provider is unavailable and cpu is used instead. */
  onFallback?: (message: string) => void;
  /** Fall back to cpu when the requested provider cannot start; false: throw instead. @defaultValue true */
  fallback?: boolean;
}

/** onnxruntime's own name of each provider, as its profiler reports it per node. */
export const ORT_PROVIDER_NAMES: Readonly<Record<ExecutionProvider, string>> = {
  cpu: 'CPUExecutionProvider',
  cuda: 'CUDAExecutionProvider',
  webgpu: 'WebGpuExecutionProvider',
};

// Quiet onnxruntime's own warnings (e.g. unused initializers in converted graphs); errors still throw.
ort.env.logLevel = 'error';

type OpenOptions = Omit<SessionOptions, 'allowSpinning'> & {
  allowSpinning?: boolean;
  /** Open the session in this thread (its runs leave the calling thread free), not on the caller's. */
  thread?: ModelThread;
};

/** onnxruntime's session options for one provider (plain data: a ModelThread's open message carries them). */
function ortOptions(provider: ExecutionProvider, opts: OpenOptions): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: [provider],
    intraOpNumThreads: opts.intraOpThreads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    // Spinning intra-op threads keep cores busy between runs, starving the worker's own event
    // loop (Redis, HTTP downloads) and sharp on small machines; measured in scripts/bench.ts.
    extra: { session: { intra_op: { allow_spinning: opts.allowSpinning ? '1' : '0' } } },
  };
}

async function open(graphPath: string, provider: ExecutionProvider, opts: OpenOptions, more: ort.InferenceSession.SessionOptions = {}) {
  return ort.InferenceSession.create(graphPath, { ...more, ...ortOptions(provider, opts) });
}

/** Opens a graph on the requested provider, falling back to cpu (with onFallback) when that fails. */
export async function createSession(graphPath: string, opts: OpenOptions): Promise<ModelSession> {
  let provider = opts.provider;
  const { thread } = opts;
  const openOn = async (p: ExecutionProvider) => (thread ? thread.open(graphPath, p, ortOptions(p, opts)) : wrap(await open(graphPath, p, opts), p));
  let session: ModelSession;
  try {
    session = await openOn(provider);
  } catch (e) {
    if (provider === 'cpu') throw e;
    // CUDA's provider library is not in the npm package ("bundled: false" even once installed):
    // it comes from `ONNXRUNTIME_NODE_INSTALL=cuda12 npm ci`. WebGPU needs a real GPU (Vulkan).
    const hint = provider === 'cuda' ? ' (install with ONNXRUNTIME_NODE_INSTALL=cuda12; needs CUDA 12 + cuDNN 9)' : '';
    if (opts.fallback === false) throw new Error(`execution provider ${provider} unavailable${hint}: ${(e as Error).message}`, { cause: e });
    opts.onFallback?.(`execution provider ${provider} unavailable${hint}: ${(e as Error).message.split('\n')[0]}; using cpu`);
    provider = 'cpu';
    session = await openOn(provider);
  }
  return session;
}

/** Where one run's nodes executed: onnxruntime's provider name -> nodes, and the op types run on cpu. */
export interface NodePlacement {
  nodes: Record<string, number>;
  /** Op type -> nodes of that type that ran on CPUExecutionProvider (e.g. { Transpose: 1 }). */
  cpuOps: Record<string, number>;
}

/**
 * Opens a graph on `provider` with no fallback, runs `feeds` once with onnxruntime's profiler on and
 * counts, per execution provider, the nodes that ran on it. A provider that starts but leaves
 * nodes to cpu (unsupported ops, shape work) shows here; createSession's `provider` cannot tell.
 */
export async function profileNodePlacement(graphPath: string, opts: Omit<OpenOptions, 'fallback' | 'onFallback'>, feeds: Record<string, AnyTensor>): Promise<NodePlacement> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-placement-'));
  try {
    let session: ort.InferenceSession;
    try {
      session = await open(graphPath, opts.provider, opts, { enableProfiling: true, profileFilePrefix: path.join(dir, 'profile') });
    } catch (e) {
      throw new Error(`execution provider ${opts.provider} unavailable: ${(e as Error).message}`, { cause: e });
    }
    const ortFeeds: Record<string, ort.Tensor> = {};
    for (const [name, t] of Object.entries(feeds)) ortFeeds[name] = new ort.Tensor(tensorType(t.data), t.data, t.dims);
    await session.run(ortFeeds);
    session.endProfiling(); // writes <prefix>_<date>.json
    await session.release();
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
    if (!file) throw new Error(`onnxruntime wrote no profile into ${dir}`);
    const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Array<{ cat?: string; args?: { provider?: string; op_name?: string } }>;
    const placement: NodePlacement = { nodes: {}, cpuOps: {} };
    for (const ev of events) {
      const ep = ev.args?.provider;
      if (ev.cat !== 'Node' || !ep) continue;
      placement.nodes[ep] = (placement.nodes[ep] ?? 0) + 1;
      if (ep === ORT_PROVIDER_NAMES.cpu) placement.cpuOps[ev.args!.op_name ?? '?'] = (placement.cpuOps[ev.args!.op_name ?? '?'] ?? 0) + 1;
    }
    return placement;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A tensor in onnxruntime's terms: its element type named, as the model thread's messages carry it. */
interface TypedTensor {
  type: string;
  data: AnyTensor['data'];
  dims: readonly number[];
}

/** One run: typed feeds in, typed outputs out, and the run's own time where the runner knows it. */
type TypedRun = (feeds: Record<string, TypedTensor>) => Promise<{ out: Record<string, TypedTensor>; ms?: number }>;

/**
 * A ModelSession over one way of running a graph (on this thread, or in a model thread): `run` and
 * `runAny` both go through `runTyped`; `run` insists on float32 outputs. A run's own time, where
 * given, rides on its result (RUN_MS, not an enumerable output: StageTimer.infer reads it).
 */
function sessionOf(names: { inputNames: readonly string[]; outputNames: readonly string[] }, provider: ExecutionProvider, runTyped: TypedRun, release: () => Promise<void>): ModelSession {
  const call = (feeds: Record<string, AnyTensor>) => {
    const typed: Record<string, TypedTensor> = {};
    for (const [name, t] of Object.entries(feeds)) typed[name] = { type: tensorType(t.data), data: t.data, dims: t.dims };
    return runTyped(typed);
  };
  const timed = <T extends object>(result: T, ms: number | undefined): T => (ms === undefined ? result : Object.defineProperty(result, RUN_MS, { value: ms, enumerable: false }));
  return {
    inputNames: names.inputNames,
    outputNames: names.outputNames,
    provider,
    async run(feeds) {
      const { out, ms } = await call(feeds);
      const res: Record<string, FloatTensor> = {};
      for (const [name, t] of Object.entries(out)) {
        if (t.type !== 'float32') throw new Error(`output ${name}: expected float32, got ${t.type}`);
        res[name] = { data: t.data as Float32Array, dims: t.dims };
      }
      return timed(res, ms);
    },
    async runAny(feeds) {
      const { out, ms } = await call(feeds);
      const res: Record<string, AnyTensor> = {};
      for (const [name, t] of Object.entries(out)) res[name] = { data: t.data, dims: t.dims };
      return timed(res, ms);
    },
    release,
  };
}

/** A session on this thread. */
function wrap(session: ort.InferenceSession, provider: ExecutionProvider): ModelSession {
  return sessionOf(
    session,
    provider,
    async (feeds) => {
      const ortFeeds: Record<string, ort.Tensor> = {};
      for (const [name, t] of Object.entries(feeds)) ortFeeds[name] = new ort.Tensor(t.type as ReturnType<typeof tensorType>, t.data, t.dims);
      const results = await session.run(ortFeeds);
      const out: Record<string, TypedTensor> = {};
      for (const [name, t] of Object.entries(results)) out[name] = { type: t.type, data: t.data as AnyTensor['data'], dims: t.dims };
      return { out };
    },
    () => session.release(),
  );
}

function tensorType(d: AnyTensor['data']): 'float32' | 'int32' | 'int64' | 'bool' {
  if (d instanceof Float32Array) return 'float32';
  if (d instanceof Int32Array) return 'int32';
  if (d instanceof BigInt64Array) return 'int64';
  return 'bool';
}

/** Input names, dims and types for an error message (never the data). */
export function describeFeeds(feeds: Record<string, FloatTensor>): string {
  return Object.entries(feeds)
    .map(([n, t]) => `${n}: float32[${t.dims.join(',')}]`)
    .join(', ');
}

/**
 * The model thread's code (a worker evaluated from this string: it needs nothing of this project but
 * onnxruntime, found at `workerData.ort`). Messages: open (a graph, onnxruntime's options), run (a
 * session's feeds), release; each answered with the same id, `ok` or `error`. The feeds travel by
 * structured clone (copied: the caller keeps its arrays); the outputs are moved (transferred).
 */
const MODEL_THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ready = import(workerData.ort).then((m) => { m.env.logLevel = 'error'; return m; });
const sessions = new Map();
parentPort.on('message', async (m) => {
  try {
    const ort = await ready;
    if (m.op === 'open') {
      const s = await ort.InferenceSession.create(m.path, m.options);
      sessions.set(m.sid, s);
      parentPort.postMessage({ id: m.id, ok: { inputNames: s.inputNames, outputNames: s.outputNames } });
    } else if (m.op === 'run') {
      const feeds = {};
      for (const [name, t] of Object.entries(m.feeds)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
      const t0 = performance.now();
      const results = await sessions.get(m.sid).run(feeds);
      const ms = performance.now() - t0;
      const out = {};
      const moved = new Set();
      for (const [name, t] of Object.entries(results)) {
        out[name] = { type: t.type, data: t.data, dims: t.dims };
        moved.add(t.data.buffer);
      }
      // The outputs are moved, not copied: they are this run's own arrays (copied after all where
      // one cannot be moved: memory onnxruntime lends rather than gives).
      try {
        parentPort.postMessage({ id: m.id, ok: { out, ms } }, [...moved]);
      } catch {
        parentPort.postMessage({ id: m.id, ok: { out, ms } });
      }
    } else if (m.op === 'release') {
      const s = sessions.get(m.sid);
      sessions.delete(m.sid);
      if (s) await s.release();
      parentPort.postMessage({ id: m.id, ok: true });
    }
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: (e && e.message) || String(e) });
  }
});
`;

interface ThreadAnswer {
  id: number;
  ok?: unknown;
  error?: string;
}

/**
 * A thread of its own for onnxruntime: the sessions opened in it run there, so the thread that
 * called `run` goes on with its own JavaScript meanwhile (the hairstyle draws its new hair while
 * BiSeNet parses the photo). Runs of its sessions take turns in it, as they would on the caller's
 * thread. The thread holds the process open only while a call is in flight. If it dies (a native
 * crash, out of memory), every call in flight and every later call of its sessions fails, and
 * `alive` turns false: its owner (models/sessions.ts) opens a new thread and loads again.
 */
export class ModelThread {
  private worker: Worker | null = null;
  private readonly calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private dead: Error | null = null;

  get alive(): boolean {
    return this.dead === null;
  }

  /** Opens a graph in the thread (the options as createSession builds them for `provider`). */
  async open(graphPath: string, provider: ExecutionProvider, options: ort.InferenceSession.SessionOptions): Promise<ModelSession> {
    const sid = this.nextId++;
    const names = (await this.call({ op: 'open', sid, path: graphPath, options })) as { inputNames: string[]; outputNames: string[] };
    return sessionOf(
      names,
      provider,
      async (feeds) => (await this.call({ op: 'run', sid, feeds })) as { out: Record<string, TypedTensor>; ms: number },
      async () => {
        if (this.dead) return;
        await this.call({ op: 'release', sid });
      },
    );
  }

  /** Ends the thread, its sessions with it: their later calls fail. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.dead ??= new Error('closed');
    for (const c of this.calls.values()) c.reject(new Error('model thread closed'));
    this.calls.clear();
    if (w) await w.terminate();
  }

  private call(msg: Record<string, unknown>): Promise<unknown> {
    if (this.dead) return Promise.reject(new Error(`model thread gone: ${this.dead.message}`));
    const w = this.thread();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      if (this.calls.size === 1) w.ref();
      w.postMessage({ ...msg, id });
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(MODEL_THREAD_SOURCE, { eval: true, workerData: { ort: import.meta.resolve('onnxruntime-node') } });
    w.unref();
    w.on('message', (a: ThreadAnswer) => {
      const c = this.calls.get(a.id);
      if (!c) return;
      this.calls.delete(a.id);
      if (this.calls.size === 0) w.unref();
      if (a.error !== undefined) c.reject(new Error(a.error));
      else c.resolve(a.ok);
    });
    const fail = (e: Error) => {
      if (this.worker !== w) return;
      this.dead = e;
      this.worker = null;
      for (const c of this.calls.values()) c.reject(new Error(`model thread gone: ${e.message}`));
      this.calls.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the model thread exited (code ${code})`)));
    this.worker = w;
    return w;
  }
}
