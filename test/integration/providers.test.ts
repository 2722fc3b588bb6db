// Execution-provider fallback: a provider that cannot start here (no GPU, no CUDA libraries) is
// replaced by cpu with a warning; where it can start, no warning is given. Real sessions.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../src/models/onnx.ts';
import { loadRegistry } from '../../src/models/registry.ts';

const registry = loadRegistry(path.resolve('models'));
const graph = registry.graphPath(registry.byName('face-detection-blazeface')!.manifest.graphs.detector!.sha256);

describe('execution providers', () => {
  it.each(['webgpu', 'cuda'] as const)('%s runs where available, else falls back to cpu with a warning', async (provider) => {
    const warnings: string[] = [];
    const s = await createSession(graph, { provider, intraOpThreads: 1, allowSpinning: false, onFallback: (m) => warnings.push(m) });
    if (s.provider === 'cpu') {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(new RegExp(`^execution provider ${provider} unavailable.*; using cpu$`));
    } else {
      expect(s.provider).toBe(provider);
      expect(warnings).toEqual([]);
    }
    const out = await s.run({ [s.inputNames[0]!]: { data: new Float32Array(256 * 256 * 3), dims: [1, 256, 256, 3] } });
    expect(Object.values(out).map((t) => t.dims.join('x')).sort()).toEqual(['1x384x1', '1x384x16', '1x512x1', '1x512x16']);
    await s.release();
  });
});
