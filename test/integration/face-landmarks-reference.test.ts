// The ONNX face-landmarks pipeline against @tensorflow-models/face-landmarks-detection (tfjs runtime
// on the wasm backend) using the same weights, loaded from the same verified npm sources through
// in-memory IO handlers: mean landmark distance under 1 px at the original resolution.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import * as fld from '@tensorflow-models/face-landmarks-detection';
import { tfjsSourceDir } from '../../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { faceLandmarks } from '../../src/pipelines/face-landmarks/pipeline.ts';
import { memoryHandler, tf, tfjsReady } from '../../scripts/lib/tfjs-oracle.ts';

const registry = loadRegistry(path.resolve('models'));
const version = registry.byName('face-landmarks-facemesh')!;
const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 1, allowSpinning: false, warn: () => {} });
afterAll(() => sessions.releaseAll());

async function modelPath(graph: string): Promise<string> {
  const spec = version.manifest.graphs[graph]!;
  if (spec.source.type !== 'npm-tfjs') throw new Error('not a TF.js source');
  const { dir } = await tfjsSourceDir(registry.modelsDir, spec.source);
  return path.join(dir, path.basename(spec.source.model));
}

describe('face landmarks vs face-landmarks-detection', () => {
  it.each([
    ['test/fixtures/astronaut.png', 1],
    ['test/fixtures/group-four.jpg', 4],
  ])('%s: same faces, mean landmark distance under 1 px', async (file, expectedFaces) => {
    await tfjsReady();
    const detector = await fld.createDetector(fld.SupportedModels.MediaPipeFaceMesh, {
      runtime: 'tfjs',
      maxFaces: 8,
      refineLandmarks: false,
      detectorModelUrl: memoryHandler(await modelPath('detector')) as never,
      landmarkModelUrl: memoryHandler(await modelPath('landmarks')) as never,
    });
    const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const image = tf.tensor3d(Int32Array.from(data), [info.height, info.width, 3], 'int32');
    const reference = await detector.estimateFaces(image as never, { staticImageMode: true });
    image.dispose();
    detector.dispose();

    const ours = await faceLandmarks.run(
      { params: version.manifest.params, session: (g) => sessions.get(version.id, g), maxPixels: 4e7 },
      { image: 'http://fixture/x' },
      { image: [fs.readFileSync(file)] },
    );
    const faces = JSON.parse(Buffer.from(ours.files[0]!.data).toString()).faces as Array<{ landmarks: Array<[number, number, number]> }>;
    expect(faces).toHaveLength(expectedFaces);
    expect(reference).toHaveLength(expectedFaces);

    const centre = (pts: Array<{ x: number; y: number }>) => ({ x: pts.reduce((a, p) => a + p.x, 0) / pts.length, y: pts.reduce((a, p) => a + p.y, 0) / pts.length });
    const distances: number[] = [];
    for (const f of faces) {
      const mine = f.landmarks.map(([x, y]) => ({ x, y }));
      const c = centre(mine);
      // The reference face nearest to ours (the two lists need not be in the same order).
      const ref = [...reference].sort((a, b) => {
        const ca = centre(a.keypoints);
        const cb = centre(b.keypoints);
        return Math.hypot(ca.x - c.x, ca.y - c.y) - Math.hypot(cb.x - c.x, cb.y - c.y);
      })[0]!;
      expect(ref.keypoints).toHaveLength(468);
      const d = mine.map((p, i) => Math.hypot(p.x - ref.keypoints[i]!.x, p.y - ref.keypoints[i]!.y));
      distances.push(d.reduce((a, b) => a + b, 0) / d.length);
    }
    for (const mean of distances) expect(mean).toBeLessThan(1);
    console.log(`${path.basename(file)}: mean landmark distance per face (px): ${distances.map((d) => d.toFixed(3)).join(', ')}`);
  }, 120_000);
});
