// Every imported graph against its TF.js original on the same inputs (real photos), with the same
// dequantized weights: onnxruntime (the ONNX the importer wrote) vs tfjs-wasm.
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256File, tfjsSourceDir } from '../../src/tooling/fetch-graphs.ts';
import { createSession, type ModelSession } from '../../src/models/onnx.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { loadTfjsGraph, runTfjs } from '../../scripts/lib/tfjs-oracle.ts';

const registry = loadRegistry(path.resolve('models'));
const PHOTOS = ['test/fixtures/astronaut.png', 'test/fixtures/group-four.jpg'];

interface Case {
  version: string;
  graph: string;
  range: [number, number] | 'int';
  /** Outputs compared as labels (argmax over the last axis, or the values themselves). */
  labels?: 'argmax' | 'values' | 'threshold';
  /** Largest |onnx - tfjs| allowed (default 1e-3); `relative`: divided by max(1, |tfjs|). */
  tolerance?: number;
  relative?: boolean;
}

const CASES: Case[] = [
  { version: 'face-detection-blazeface-tfjs', graph: 'detector', range: [-1, 1] },
  { version: 'face-landmarks-facemesh', graph: 'detector', range: [-1, 1] },
  { version: 'face-landmarks-facemesh', graph: 'landmarks', range: [0, 1] },
  { version: 'person-segmentation-selfie', graph: 'segmenter', range: [0, 1], labels: 'threshold' },
  { version: 'person-segmentation-meet', graph: 'segmenter', range: [0, 1], labels: 'argmax' },
  { version: 'pose-movenet-lightning', graph: 'pose', range: 'int' },
  { version: 'pose-movenet-thunder', graph: 'pose', range: 'int' },
  { version: 'face-parsing-bisenet', graph: 'parser', range: [-1, 1], labels: 'values' },
  // Score logits reach -5e5 on empty anchors: compared relative to magnitude (float32 rounding);
  // boxes and keypoints are in input pixels (up to ~1200), within 3e-3 px.
  { version: 'body-landmarks-blazepose-full', graph: 'detector', range: [-1, 1], relative: true, tolerance: 3e-3 },
  // Landmarks in crop pixels (up to ~250) relative; the mask (0..1) differs by up to 1.5e-3.
  { version: 'body-landmarks-blazepose-full', graph: 'landmarks', range: [0, 1], relative: true, tolerance: 3e-3 },
  // Recurrent states fed as zeros and the downsample ratio fixed, as the manifest's input_values; the
  // guided filter's division amplifies rounding in fgr to ~1.6e-3 (pha ~4e-4).
  { version: 'matting-rvm', graph: 'matting', range: [0, 1], tolerance: 5e-3 },
];

const sessions: ModelSession[] = [];
afterAll(async () => {
  for (const s of sessions) await s.release();
});

async function photoTensor(file: string, shape: number[], range: Case['range']): Promise<Float32Array | Int32Array> {
  const [, h, w] = shape as [number, number, number, number];
  const { data } = await sharp(file).removeAlpha().resize(w, h, { fit: 'cover' }).raw().toBuffer({ resolveWithObject: true });
  if (range === 'int') return Int32Array.from(data);
  const [lo, hi] = range;
  return Float32Array.from(data, (v) => lo + (v / 255) * (hi - lo));
}

describe('imported graphs equal their TF.js originals', () => {
  beforeAll(async () => {
    // Sources are extracted by the global set-up's fetch; this only resolves their folders.
    for (const c of CASES) {
      const spec = registry.byName(c.version)!.manifest.graphs[c.graph]!;
      if (spec.source.type !== 'npm-tfjs') throw new Error(`${c.version}/${c.graph} is not imported`);
    }
  });

  it.each(CASES.map((c) => [`${c.version}/${c.graph}`, c] as const))('%s', async (_name, c) => {
    const spec = registry.byName(c.version)!.manifest.graphs[c.graph]!;
    if (spec.source.type !== 'npm-tfjs') return;
    const { dir } = await tfjsSourceDir(registry.modelsDir, spec.source);
    const tfModel = await loadTfjsGraph(path.join(dir, path.basename(spec.source.model)));
    // What is compared is the pinned graph, byte for byte (not whatever file sits under its name).
    expect(sha256File(registry.graphPath(spec.sha256)), 'sha256 of the cached graph').toBe(spec.sha256);
    const session = await createSession(registry.graphPath(spec.sha256), { provider: 'cpu', intraOpThreads: 1, allowSpinning: false });
    sessions.push(session);
    const [inputName, shape] = Object.entries(spec.source.input_shapes)[0]!;
    for (const photo of PHOTOS) {
      const input = await photoTensor(photo, shape, c.range);
      const onnxOut = await session.runAny({ [inputName]: { data: input, dims: shape } });
      const names = session.outputNames;
      const scalars = spec.source.input_values;
      const tfOut = await runTfjs(tfModel, input, shape, [...names], scalars ? { inputName, scalars } : {});
      names.forEach((name, i) => {
        const a = onnxOut[name]!.data;
        const b = tfOut[i]!;
        expect(a.length).toBe(b.length);
        let maxDiff = 0;
        for (let j = 0; j < a.length; j++) maxDiff = Math.max(maxDiff, Math.abs(Number(a[j]) - Number(b[j])) / (c.relative ? Math.max(1, Math.abs(Number(b[j]))) : 1));
        if (c.labels === 'values') {
          let same = 0;
          for (let j = 0; j < a.length; j++) if (Number(a[j]) === Number(b[j])) same++;
          expect(same / a.length, `${name} label agreement on ${photo}`).toBeGreaterThanOrEqual(0.999);
          return;
        }
        expect(maxDiff, `${name} max |onnx - tfjs|${c.relative ? ' (relative)' : ''} on ${photo}`).toBeLessThanOrEqual(c.tolerance ?? 1e-3);
        if (process.env.PARITY_REPORT) console.log(`${c.version}/${c.graph} ${name} ${path.basename(photo)}: ${maxDiff.toExponential(2)}`);
        if (c.labels === 'argmax') {
          const k = onnxOut[name]!.dims.at(-1)!;
          let same = 0;
          for (let p = 0; p < a.length / k; p++) {
            const am = (arr: ArrayLike<number>) => {
              let best = 0;
              for (let q = 1; q < k; q++) if (Number(arr[p * k + q]) > Number(arr[p * k + best])) best = q;
              return best;
            };
            if (am(a as ArrayLike<number>) === am(b)) same++;
          }
          expect(same / (a.length / k)).toBeGreaterThanOrEqual(0.999);
        }
        if (c.labels === 'threshold') {
          let same = 0;
          for (let j = 0; j < a.length; j++) if (Number(a[j]) > 0.5 === Number(b[j]) > 0.5) same++;
          expect(same / a.length).toBeGreaterThanOrEqual(0.999);
        }
      });
    }
  }, 120_000);
});
