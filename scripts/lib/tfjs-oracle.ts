// tfjs-wasm as the parity oracle (tests and `npm run bench -- models`): loads TF.js graph models
// from the verified sources in models/cache/src through an in-memory IO handler (no hub
// downloads) and runs them on the wasm backend.
import fs from 'node:fs';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { loadGraphModel, type GraphModel } from '@tensorflow/tfjs-converter';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

let ready: Promise<void> | undefined;

export function tfjsReady(): Promise<void> {
  ready ??= (async () => {
    setWasmPaths(`${path.resolve('node_modules/@tensorflow/tfjs-backend-wasm/dist')}/`);
    await tf.setBackend('wasm');
    await tf.ready();
  })();
  return ready;
}

/** An in-memory IO handler for a model.json and its shards (also what face-landmarks-detection takes). */
export function memoryHandler(modelJsonPath: string): tf.io.IOHandler {
  const dir = path.dirname(modelJsonPath);
  const mj = JSON.parse(fs.readFileSync(modelJsonPath, 'utf8')) as {
    modelTopology: object;
    weightsManifest: Array<{ paths: string[]; weights: tf.io.WeightsManifestEntry[] }>;
    signature?: object;
  };
  const data = Buffer.concat(mj.weightsManifest.flatMap((g) => g.paths.map((p) => fs.readFileSync(path.join(dir, p)))));
  return tf.io.fromMemory({
    modelTopology: mj.modelTopology,
    weightSpecs: mj.weightsManifest.flatMap((g) => g.weights),
    weightData: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength),
    // Output names by signature key ("output_mesh" ...), as the model's users address them.
    signature: mj.signature,
  });
}

export async function loadTfjsGraph(modelJsonPath: string): Promise<GraphModel> {
  await tfjsReady();
  return loadGraphModel(memoryHandler(modelJsonPath));
}

/**
 * Runs a graph on one input; returns the named outputs as flat arrays. `scalars` feeds further
 * placeholders a scalar each (RVM's downsample ratio and zero recurrent states); such graphs have
 * control flow, so they run with executeAsync, the main input named `inputName`.
 */
export async function runTfjs(
  model: GraphModel,
  input: Float32Array | Int32Array,
  shape: number[],
  outputs: string[],
  { inputName, scalars }: { inputName?: string; scalars?: Record<string, number> } = {},
): Promise<Array<Float32Array | Int32Array>> {
  const x = input instanceof Int32Array ? tf.tensor(input, shape, 'int32') : tf.tensor(input, shape, 'float32');
  const extra = Object.entries(scalars ?? {}).map(([n, v]) => [n, tf.scalar(v)] as const);
  const y = extra.length ? await model.executeAsync({ [inputName ?? model.inputs[0]!.name]: x, ...Object.fromEntries(extra) }, outputs) : model.execute(x, outputs);
  const ys = Array.isArray(y) ? y : [y];
  const out = await Promise.all(ys.map((t) => t.data() as Promise<Float32Array | Int32Array>));
  tf.dispose([x, ...extra.map(([, t]) => t), ...ys]);
  return out;
}

export { tf };
