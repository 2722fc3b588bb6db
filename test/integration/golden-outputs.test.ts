// Golden outputs: every version's outputs on the fixture photos match their pinned perceptual
// digests (models/golden/). A change in outputs must come with a bump of the manifest's
// algorithm_version (which changes the version id) and a re-pin (`npm run models -- golden`); a
// pure refactor changes neither.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRegistry } from '../../src/models/registry.ts';
import { compareGolden, computeGolden, goldenPath, readGolden } from '../../scripts/lib/golden.ts';

const registry = loadRegistry(path.resolve('models'));

describe('golden outputs', () => {
  it.each([...registry.versions.values()].map((v) => [v.manifest.name, v] as const))('%s', async (_name, v) => {
    const pinned = readGolden(goldenPath(registry.modelsDir, v));
    expect(pinned, `no golden outputs for ${v.manifest.name}: run npm run models -- golden ${v.manifest.name}`).not.toBeNull();
    const algorithm = v.manifest.algorithm_version ?? 1;
    const fresh = await computeGolden(registry, v);
    const diff = compareGolden(pinned!, fresh);
    if (pinned!.algorithm_version === algorithm) {
      expect(diff, `${v.manifest.name}: outputs changed while algorithm_version stayed ${algorithm}; bump it and re-pin (npm run models -- golden ${v.manifest.name})`).toEqual([]);
    } else {
      expect.fail(`${v.manifest.name}: golden outputs are pinned for algorithm_version ${pinned!.algorithm_version}, the manifest says ${algorithm}; re-pin (npm run models -- golden ${v.manifest.name})`);
    }
  }, 60_000);
});
