// npm run bench -- models
// Per imported graph, in this one process and on the same real photo: tfjs-wasm latency and
// onnxruntime latency (median of 20 after warm-up), their ratio, and the parity (max |onnx - tfjs|).
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fetchAll, tfjsSourceDir } from '../src/tooling/fetch-graphs.ts';
import { createSession } from '../src/models/onnx.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { loadTfjsGraph, runTfjs, tf } from './lib/tfjs-oracle.ts';
import { stats } from './bench-setup.ts';

const { median } = stats;
const RUNS = 20;
const registry = loadRegistry(path.resolve('models'));
await fetchAll(registry);
// One thread each: tfjs-wasm runs single-threaded in Node, so the ratio compares like with like.
const threads = Number(process.env.ORT_INTRA_OP_THREADS ?? 1);
console.log(`bench models: ${os.cpus()[0]?.model ?? 'cpu'} x${os.availableParallelism()}, onnxruntime cpu (${threads} intra-op threads) vs tfjs-wasm ${tf.version_core} (SIMD, 1 thread); median of ${RUNS}`);
console.log('graph'.padEnd(44), 'tfjs-wasm'.padStart(10), 'onnxrt'.padStart(10), 'speed-up'.padStart(9), '  max|diff|');

const seen = new Set<string>();
const ranges: Record<string, [number, number] | 'int'> = { 'face-landmarks-facemesh/landmarks': [0, 1], 'person-segmentation-selfie/segmenter': [0, 1], 'person-segmentation-meet/segmenter': [0, 1] };
const photo = 'test/fixtures/astronaut.png';
for (const v of registry.versions.values()) {
  for (const [g, spec] of Object.entries(v.manifest.graphs)) {
    if (spec.source.type !== 'npm-tfjs' || seen.has(spec.sha256)) continue;
    seen.add(spec.sha256);
    const name = `${v.manifest.name}/${g}`;
    const range = v.manifest.pipeline === 'pose' ? 'int' : (ranges[name] ?? [-1, 1]);
    const [inputName, shape] = Object.entries(spec.source.input_shapes)[0]!;
    const { data } = await sharp(photo).removeAlpha().resize(shape[2], shape[1], { fit: 'cover' }).raw().toBuffer({ resolveWithObject: true });
    const input = range === 'int' ? Int32Array.from(data) : Float32Array.from(data, (x) => range[0] + (x / 255) * (range[1] - range[0]));

    const { dir } = await tfjsSourceDir(registry.modelsDir, spec.source);
    const model = await loadTfjsGraph(path.join(dir, path.basename(spec.source.model)));
    const session = await createSession(registry.graphPath(spec.sha256), { provider: 'cpu', intraOpThreads: threads, allowSpinning: false });
    const outputs = [...session.outputNames];
    const time = async (fn: () => Promise<unknown>) => {
      for (let i = 0; i < 3; i++) await fn();
      const t: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        await fn();
        t.push(performance.now() - t0);
      }
      return median(t);
    };
    const feeds = { [inputName]: { data: input, dims: shape } };
    const tTf = await time(() => runTfjs(model, input, shape, outputs));
    const tOrt = await time(() => session.runAny(feeds));
    const a = await session.runAny(feeds);
    const b = await runTfjs(model, input, shape, outputs);
    let maxDiff = 0;
    outputs.forEach((o, i) => {
      const x = a[o]!.data;
      for (let j = 0; j < x.length; j++) maxDiff = Math.max(maxDiff, Math.abs(Number(x[j]) - Number(b[i]![j])));
    });
    console.log(name.padEnd(44), `${tTf.toFixed(1)} ms`.padStart(10), `${tOrt.toFixed(1)} ms`.padStart(10), `${(tTf / tOrt).toFixed(1)}x`.padStart(9), `  ${maxDiff.toExponential(1)}`);
    model.dispose();
    await session.release();
  }
}
