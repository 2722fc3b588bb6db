// GPU execution providers on a real GPU: each requested provider must run the pinned graphs itself
// (no fallback to cpu, neither of the whole session nor of its compute nodes) and agree with cpu.
//
// Opt-in: runs only where GPU_TEST_PROVIDERS names the providers to check, comma-separated
// (`cuda`, `webgpu`), e.g. `GPU_TEST_PROVIDERS=cuda,webgpu npx vitest run test/gpu`. Elsewhere the
// suite is skipped and prints why. Not detected from /dev/nvidia*: a GPU host without the CUDA
// provider libraries or a Vulkan loader is exactly where these checks must fail, so asking for them
// is explicit. How it was run on the lent H100: docs/gpu-run.md.
//
// Graphs (NHWC float32, the real photo test/fixtures/astronaut.png letterboxed to the input size):
//   face-detection-blazeface/detector  "input:0"      [1, 256, 256, 3] in [-1, 1]
//   face-landmarks-facemesh/landmarks  "input_1"      [1, 192, 192, 3] in [0, 1]
//   face-parsing-bisenet/parser        "input_tensor" [1, 512, 512, 3] in [-1, 1] -> int64 labels [512, 512]
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeImage, letterboxToTensor } from '../../src/imaging/image.ts';
import { ORT_PROVIDER_NAMES, profileNodePlacement, type ExecutionProvider } from '../../src/models/onnx.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { outputAgreement } from '../../scripts/lib/output-agreement.ts';

const GPU_PROVIDERS = ['cuda', 'webgpu'] as const;
type GpuProvider = (typeof GPU_PROVIDERS)[number];

/** Largest |gpu - cpu| allowed, relative to max(1, max |cpu|) of that output (TF32 convolutions on CUDA). */
const TOLERANCE = 1e-2;
/** Share of class labels (int outputs) allowed to differ from cpu: ties of near-equal logits at edges. */
const LABEL_TOLERANCE = 5e-3;
/** Node types that must never run on cpu under a GPU provider: where the time goes. */
const COMPUTE_OPS = new Set(['Conv', 'ConvTranspose', 'FusedConv', 'NhwcConv', 'MatMul', 'FusedMatMul', 'Gemm']);

const GRAPHS = [
  { version: 'face-detection-blazeface', graph: 'detector', size: 256, range: [-1, 1] },
  { version: 'face-landmarks-facemesh', graph: 'landmarks', size: 192, range: [0, 1] },
  { version: 'face-parsing-bisenet', graph: 'parser', size: 512, range: [-1, 1] },
] as const;

function requestedProviders(): GpuProvider[] {
  const raw = process.env.GPU_TEST_PROVIDERS?.trim();
  if (!raw) return [];
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (!(GPU_PROVIDERS as readonly string[]).includes(n)) throw new Error(`GPU_TEST_PROVIDERS: unknown provider "${n}" (known: ${GPU_PROVIDERS.join(', ')})`);
  }
  return names as GpuProvider[];
}

const providers = requestedProviders();

if (providers.length === 0) {
  const gpus = fs.existsSync('/dev') ? fs.readdirSync('/dev').filter((f) => /^nvidia\d+$/.test(f)) : [];
  const reason = `GPU_TEST_PROVIDERS is not set${gpus.length ? ` (/dev/${gpus[0]} is present: set GPU_TEST_PROVIDERS=cuda,webgpu to check it)` : ' (no GPU checks requested)'}`;
  console.log(`test/gpu/providers.gpu.test.ts skipped: ${reason}`);
  describe.skip(`GPU execution providers: skipped, ${reason}`, () => {
    it('runs each requested provider without cpu fallback and matches cpu', () => {});
  });
} else {
  describe.each(providers)('GPU execution provider %s', (provider) => {
    const registry = loadRegistry(path.resolve('models'));
    const warnings: Record<ExecutionProvider, string[]> = { cpu: [], cuda: [], webgpu: [] };
    const cache = (p: ExecutionProvider) => new SessionCache(registry, { provider: p, intraOpThreads: 4, allowSpinning: false, warn: (m) => warnings[p].push(m) });
    const gpu = cache(provider);
    const cpu = cache('cpu');
    const inputs = new Map<number, Float32Array>();

    beforeAll(async () => {
      const img = await decodeImage(fs.readFileSync('test/fixtures/astronaut.png'), { maxPixels: 50e6 });
      for (const g of GRAPHS) inputs.set(g.size, (await letterboxToTensor(img, g.size, g.range)).tensor);
    });
    afterAll(async () => {
      await Promise.all([gpu.releaseAll(), cpu.releaseAll()]);
    });

    it.each(GRAPHS)(`runs $version/$graph on ${provider} itself and matches cpu`, async (g) => {
      const version = registry.byName(g.version);
      if (!version) throw new Error(`version ${g.version} is not in the registry`);
      const before = warnings[provider].length;
      const session = await gpu.get(version.id, g.graph);
      // 1. The session itself: SessionCache falls back to cpu with a warning when the provider cannot start.
      expect(warnings[provider].slice(before), `${provider} fell back to cpu`).toEqual([]);
      expect(session.provider).toBe(provider);

      const feeds = { [session.inputNames[0]!]: { data: inputs.get(g.size)!, dims: [1, g.size, g.size, 3] } };
      // 2. Its nodes: onnxruntime leaves nodes the provider does not support to cpu, silently.
      const placement = await profileNodePlacement(registry.graphPath(version.manifest.graphs[g.graph]!.sha256), { provider, intraOpThreads: 4 }, feeds);
      console.log(`${provider} ${g.version}/${g.graph}: nodes per provider ${JSON.stringify(placement.nodes)}; on cpu ${JSON.stringify(placement.cpuOps)}`);
      expect(placement.nodes[ORT_PROVIDER_NAMES[provider]] ?? 0, `no node ran on ${ORT_PROVIDER_NAMES[provider]}`).toBeGreaterThan(0);
      expect(Object.keys(placement.cpuOps).filter((op) => COMPUTE_OPS.has(op)), 'compute nodes left to cpu').toEqual([]);

      // 3. Its outputs, against cpu on the same input: float outputs within TOLERANCE, class labels
      // (BiSeNet's int64 argmax) differing on at most LABEL_TOLERANCE of the pixels.
      const want = await (await cpu.get(version.id, g.graph)).runAny(feeds);
      const got = await session.runAny(feeds);
      for (const name of Object.keys(want)) expect(got[name]!.dims).toEqual(want[name]!.dims);
      for (const o of outputAgreement(got, want)) {
        if (o.kind === 'float') {
          console.log(`${provider} ${g.version}/${g.graph} ${o.name}: max|gpu-cpu| ${o.diff.toExponential(2)}, relative ${o.relative.toExponential(2)}`);
          expect(o.relative, `${o.name}: max|${provider} - cpu| / max(1, max|cpu|)`).toBeLessThanOrEqual(TOLERANCE);
        } else {
          console.log(`${provider} ${g.version}/${g.graph} ${o.name}: ${o.diff} of ${o.count} labels differ from cpu`);
          expect(o.relative, `${o.name}: share of labels differing from cpu`).toBeLessThanOrEqual(LABEL_TOLERANCE);
        }
      }
    }, 180_000);
  });
}
