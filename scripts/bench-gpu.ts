// npm run bench -- gpu [cuda,webgpu]
// GPU execution providers against cpu, in one process, on the same real photo, batch 1: BlazeFace
// face detection, FaceMesh landmarks and BiSeNet face parsing. Per graph and provider: median and
// p90 ms per run, runs/s (sequential), speed-up of the median over cpu, the nodes onnxruntime's
// profiler saw on the provider, and max |provider - cpu| relative to max(1, max |cpu|) (for BiSeNet's
// int64 class labels: the share of pixels whose label differs).
// Exits 1 when a requested provider fell back to cpu, whole (session) or in part (compute nodes), or
// when its outputs disagree with cpu beyond the tolerances of test/gpu/providers.gpu.test.ts.
//   providers  argument or GPU_BENCH_PROVIDERS (default cuda,webgpu)
//   BENCH_RUNS timed runs per graph and provider (default 200, after 20 warm-up runs)
//   ORT_INTRA_OP_THREADS intra-op threads of every session (default: all cores)
//   BENCH_JSON write the results there as JSON too
// How it was run on a lent H100: docs/gpu-run.md.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeImage, letterboxToTensor } from '../src/imaging/image.ts';
import { createSession, ORT_PROVIDER_NAMES, profileNodePlacement, type ExecutionProvider, type AnyTensor, type FloatTensor, type ModelSession } from '../src/models/onnx.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { outputAgreement } from './lib/output-agreement.ts';

const GRAPHS = [
  { version: 'face-detection-blazeface', graph: 'detector', size: 256, range: [-1, 1] },
  { version: 'face-landmarks-facemesh', graph: 'landmarks', size: 192, range: [0, 1] },
  { version: 'face-parsing-bisenet', graph: 'parser', size: 512, range: [-1, 1] },
] as const;
/** As in test/gpu/providers.gpu.test.ts: float outputs relative to max(1, max |cpu|); share of labels. */
const TOLERANCE = 1e-2;
const LABEL_TOLERANCE = 5e-3;
const COMPUTE_OPS = new Set(['Conv', 'ConvTranspose', 'FusedConv', 'NhwcConv', 'MatMul', 'FusedMatMul', 'Gemm']);

const arg = process.argv[3] ?? process.env.GPU_BENCH_PROVIDERS ?? 'cuda,webgpu';
const providers = arg.split(',').map((s) => s.trim()).filter(Boolean) as ExecutionProvider[];
for (const p of providers) {
  if (p === 'cpu' || !(p in ORT_PROVIDER_NAMES)) {
    console.error(`bench gpu: unknown GPU provider "${p}" (known: cuda, webgpu)`);
    process.exit(2);
  }
}
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const WARMUP = 20;
const cpuThreads = Number(process.env.ORT_INTRA_OP_THREADS ?? os.availableParallelism());

function gpuName(): string {
  try {
    return execFileSync('nvidia-smi', ['--query-gpu=name,driver_version', '--format=csv,noheader'], { encoding: 'utf8' }).trim().split('\n')[0]!;
  } catch {
    return 'no nvidia-smi';
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function time(session: ModelSession, feeds: Record<string, FloatTensor>) {
  for (let i = 0; i < WARMUP; i++) await session.runAny(feeds);
  const t: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < RUNS; i++) {
    const t1 = performance.now();
    await session.runAny(feeds);
    t.push(performance.now() - t1);
  }
  const total = performance.now() - t0;
  t.sort((a, b) => a - b);
  return { medianMs: pct(t, 50), p90Ms: pct(t, 90), runsPerS: (RUNS * 1000) / total };
}

/** The worst float and label disagreement over a graph's outputs. */
function compare(got: Record<string, AnyTensor>, want: Record<string, AnyTensor>): { maxRelDiff: number; labelsDiffer: number } {
  const all = outputAgreement(got, want);
  return {
    maxRelDiff: Math.max(0, ...all.filter((o) => o.kind === 'float').map((o) => o.relative)),
    labelsDiffer: Math.max(0, ...all.filter((o) => o.kind === 'labels').map((o) => o.relative)),
  };
}

interface Row {
  graph: string;
  provider: ExecutionProvider;
  medianMs?: number;
  p90Ms?: number;
  runsPerS?: number;
  speedup?: number;
  nodesOnProvider?: string;
  cpuOps?: Record<string, number>;
  maxRelDiff?: number;
  labelsDiffer?: number;
  fellBack?: string;
  mismatch?: string;
}

const registry = loadRegistry(path.resolve('models'));
const img = await decodeImage(fs.readFileSync('test/fixtures/astronaut.png'), { maxPixels: 50e6 });
console.log(`bench gpu: ${gpuName()}; ${os.cpus()[0]?.model ?? 'cpu'} x${os.availableParallelism()}; cpu provider ${cpuThreads} intra-op threads; batch 1, median of ${RUNS} after ${WARMUP} warm-up runs`);
console.log('graph'.padEnd(36), 'provider'.padEnd(8), 'median'.padStart(10), 'p90'.padStart(10), 'runs/s'.padStart(8), 'vs cpu'.padStart(8), 'nodes on EP'.padStart(12), ' max rel diff');

const rows: Row[] = [];
for (const g of GRAPHS) {
  const version = registry.byName(g.version);
  if (!version) throw new Error(`version ${g.version} is not in the registry`);
  const file = registry.graphPath(version.manifest.graphs[g.graph]!.sha256);
  const name = `${g.version}/${g.graph}`;
  const { tensor } = await letterboxToTensor(img, g.size, g.range);
  let cpuRow: Row | undefined;
  let cpuOut: Record<string, AnyTensor> | undefined;
  for (const provider of ['cpu', ...providers] as ExecutionProvider[]) {
    const warnings: string[] = [];
    const session = await createSession(file, { provider, intraOpThreads: cpuThreads, allowSpinning: false, onFallback: (m) => warnings.push(m) });
    const feeds = { [session.inputNames[0]!]: { data: tensor, dims: [1, g.size, g.size, 3] } };
    const row: Row = { graph: name, provider };
    if (session.provider !== provider) {
      row.fellBack = warnings.join('; ') || `session runs on ${session.provider}`;
    } else {
      const out = await session.runAny(feeds);
      Object.assign(row, await time(session, feeds));
      if (provider === 'cpu') {
        cpuRow = row;
        cpuOut = out;
      } else {
        const placement = await profileNodePlacement(file, { provider, intraOpThreads: cpuThreads }, feeds);
        const total = Object.values(placement.nodes).reduce((a, b) => a + b, 0);
        row.nodesOnProvider = `${placement.nodes[ORT_PROVIDER_NAMES[provider]] ?? 0}/${total}`;
        row.cpuOps = placement.cpuOps;
        row.speedup = cpuRow?.medianMs !== undefined ? cpuRow.medianMs / row.medianMs! : undefined;
        if (cpuOut) Object.assign(row, compare(out, cpuOut));
        const cpuCompute = Object.keys(placement.cpuOps).filter((op) => COMPUTE_OPS.has(op));
        if (cpuCompute.length) row.fellBack = `compute nodes on cpu: ${cpuCompute.join(', ')}`;
        if ((row.maxRelDiff ?? 0) > TOLERANCE || (row.labelsDiffer ?? 0) > LABEL_TOLERANCE) row.mismatch = 'outputs differ from cpu beyond tolerance';
      }
    }
    await session.release();
    rows.push(row);
    const f = (x: number | undefined, d: number, unit = '') => (x === undefined ? '-' : `${x.toFixed(d)}${unit}`);
    console.log(
      name.padEnd(36),
      provider.padEnd(8),
      f(row.medianMs, 2, ' ms').padStart(10),
      f(row.p90Ms, 2, ' ms').padStart(10),
      f(row.runsPerS, 0).padStart(8),
      f(row.speedup, 1, 'x').padStart(8),
      (row.nodesOnProvider ?? '-').padStart(12),
      ` ${row.maxRelDiff === undefined ? '-' : row.maxRelDiff.toExponential(1)}${row.labelsDiffer ? ` (labels differ: ${(row.labelsDiffer * 100).toFixed(2)}%)` : ''}`,
      row.mismatch ? `  MISMATCH: ${row.mismatch}` : '',
      row.fellBack ? `  FELL BACK: ${row.fellBack}` : row.cpuOps && Object.keys(row.cpuOps).length ? `  on cpu: ${JSON.stringify(row.cpuOps)}` : '',
    );
  }
}

if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify({ gpu: gpuName(), cpuThreads, runs: RUNS, rows }, null, 2));
const fellBack = rows.filter((r) => r.fellBack);
if (fellBack.length) console.error(`bench gpu: ${fellBack.length} run(s) fell back to cpu: ${fellBack.map((r) => `${r.graph} on ${r.provider}`).join(', ')}`);
const mismatched = rows.filter((r) => r.mismatch);
if (mismatched.length) console.error(`bench gpu: ${mismatched.length} run(s) disagree with cpu: ${mismatched.map((r) => `${r.graph} on ${r.provider}`).join(', ')}`);
if (fellBack.length || mismatched.length) process.exitCode = 1;
