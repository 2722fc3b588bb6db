// The ONLY importer of onnxruntime-node. Everything else sees ModelSession and plain typed arrays,
// so swapping the runtime or a provider touches this file alone.
//
// Note: onnxruntime-node executes `session.run` on the calling JS thread (the promise resolves
// after the native run). Callers must therefore run sessions inside worker threads, never on the
// event loop of a process that serves HTTP or renews Redis locks (see queue/pipeline-pool.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';

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

type OpenOptions = Omit<SessionOptions, 'allowSpinning'> & { allowSpinning?: boolean };

async function open(graphPath: string, provider: ExecutionProvider, opts: OpenOptions, more: ort.InferenceSession.SessionOptions = {}) {
  return ort.InferenceSession.create(graphPath, {
    ...more,
    executionProviders: [provider],
    intraOpNumThreads: opts.intraOpThreads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    // Spinning intra-op threads keep cores busy between runs, starving the worker's own event
    // loop (Redis, HTTP downloads) and sharp on small machines; measured in scripts/bench.ts.
    extra: { session: { intra_op: { allow_spinning: opts.allowSpinning ? '1' : '0' } } },
  });
}

/** Opens a graph on the requested provider, falling back to cpu (with onFallback) when that fails. */
export async function createSession(graphPath: string, opts: OpenOptions): Promise<ModelSession> {
  let provider = opts.provider;
  let session: ort.InferenceSession;
  try {
    session = await open(graphPath, provider, opts);
  } catch (e) {
    if (provider === 'cpu') throw e;
    // CUDA's provider library is not in the npm package ("bundled: false" even once installed):
    // it comes from `ONNXRUNTIME_NODE_INSTALL=cuda12 npm ci`. WebGPU needs a real GPU (Vulkan).
    const hint = provider === 'cuda' ? ' (install with ONNXRUNTIME_NODE_INSTALL=cuda12; needs CUDA 12 + cuDNN 9)' : '';
    if (opts.fallback === false) throw new Error(`execution provider ${provider} unavailable${hint}: ${(e as Error).message}`, { cause: e });
    opts.onFallback?.(`execution provider ${provider} unavailable${hint}: ${(e as Error).message.split('\n')[0]}; using cpu`);
    provider = 'cpu';
    session = await open(graphPath, provider, opts);
  }
  return wrap(session, provider);
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

function wrap(session: ort.InferenceSession, provider: ExecutionProvider): ModelSession {
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    provider,
    async run(feeds) {
      const ortFeeds: Record<string, ort.Tensor> = {};
      for (const [name, t] of Object.entries(feeds)) ortFeeds[name] = new ort.Tensor('float32', t.data, t.dims);
      const results = await session.run(ortFeeds);
      const out: Record<string, FloatTensor> = {};
      for (const [name, t] of Object.entries(results)) {
        if (t.type !== 'float32') throw new Error(`output ${name}: expected float32, got ${t.type}`);
        out[name] = { data: t.data as Float32Array, dims: t.dims };
      }
      return out;
    },
    async runAny(feeds) {
      const ortFeeds: Record<string, ort.Tensor> = {};
      for (const [name, t] of Object.entries(feeds)) ortFeeds[name] = new ort.Tensor(tensorType(t.data), t.data, t.dims);
      const results = await session.run(ortFeeds);
      const out: Record<string, AnyTensor> = {};
      for (const [name, t] of Object.entries(results)) out[name] = { data: t.data as AnyTensor['data'], dims: t.dims };
      return out;
    },
    release: () => session.release(),
  };
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
