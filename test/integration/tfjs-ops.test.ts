// One tiny synthetic TF graph per op mapping (with the padding, stride, dilation and resize
// variants): converted by the importer, run by onnxruntime, compared with tfjs-wasm running the
// very same graph.
import { afterAll, describe, expect, it } from 'vitest';
import * as ort from 'onnxruntime-node';
import { readTfjsGraph } from '../../src/tooling/tfjs/reader.ts';
import { UnsupportedOpError, convertTfjsGraph } from '../../src/tooling/tfjs/convert.ts';
import { describeModel } from '../../src/tooling/onnx-builder.ts';
import { tf, tfjsReady } from '../../scripts/lib/tfjs-oracle.ts';
import { loadGraphModel } from '@tensorflow/tfjs-converter';

// --- a tiny graph builder in TF.js model.json form --------------------------------------------
type Attr = Record<string, unknown>;
const A = {
  i: (n: number) => ({ i: String(n) }),
  f: (x: number) => ({ f: x }),
  b: (v: boolean) => ({ b: v }),
  s: (t: string) => ({ s: Buffer.from(t).toString('base64') }),
  t: (dt: 'DT_FLOAT' | 'DT_INT32' | 'DT_INT64') => ({ type: dt }),
  li: (xs: number[]) => ({ list: { i: xs.map(String) } }),
  ls: (xs: string[]) => ({ list: { s: xs.map((t) => Buffer.from(t).toString('base64')) } }),
};
const F = A.t('DT_FLOAT');

let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const randn = (n: number, scale = 1) => Float32Array.from({ length: n }, () => (rand() * 2 - 1) * scale);

interface G {
  nodes: Array<{ name: string; op: string; input?: string[]; attr?: Attr }>;
  weights: Array<{ name: string; shape: number[]; dtype: 'float32' | 'int32'; data: Float32Array | Int32Array }>;
}

function graph(): G & {
  input(name: string, shape: number[], dtype?: 'DT_FLOAT' | 'DT_INT32'): string;
  const(name: string, shape: number[], data: Float32Array | Int32Array | number[], dtype?: 'float32' | 'int32'): string;
  op(name: string, op: string, input: string[], attr?: Attr): string;
} {
  const g: G = { nodes: [], weights: [] };
  return Object.assign(g, {
    input(name: string, shape: number[], dtype: 'DT_FLOAT' | 'DT_INT32' = 'DT_FLOAT') {
      g.nodes.push({ name, op: 'Placeholder', attr: { dtype: { type: dtype }, shape: { shape: { dim: shape.map((d) => ({ size: String(d) })) } } } });
      return name;
    },
    const(name: string, shape: number[], data: Float32Array | Int32Array | number[], dtype: 'float32' | 'int32' = 'float32') {
      const arr = Array.isArray(data) ? (dtype === 'int32' ? Int32Array.from(data) : Float32Array.from(data)) : data;
      g.weights.push({ name, shape, dtype, data: arr });
      g.nodes.push({ name, op: 'Const', attr: { dtype: { type: dtype === 'int32' ? 'DT_INT32' : 'DT_FLOAT' }, value: { tensor: { dtype: dtype === 'int32' ? 'DT_INT32' : 'DT_FLOAT', tensorShape: { dim: shape.map((d) => ({ size: String(d) })) } } } } });
      return name;
    },
    op(name: string, op: string, input: string[], attr: Attr = {}) {
      g.nodes.push({ name, op, input, attr });
      return name;
    },
  });
}

const sessions: ort.InferenceSession[] = [];
afterAll(async () => {
  for (const s of sessions) await s.release();
});

/** Converts and runs the graph both ways on one input; returns the max abs difference and outputs. */
async function compare(g: G, inputs: Record<string, { shape: number[]; data: Float32Array | Int32Array }>, outputs: string[]) {
  const weightData = Buffer.concat(g.weights.map((w) => Buffer.from(w.data.buffer, w.data.byteOffset, w.data.byteLength)));
  const modelJson = JSON.stringify({
    format: 'graph-model',
    modelTopology: { node: g.nodes, versions: { producer: 1 } },
    weightsManifest: [{ paths: ['w.bin'], weights: g.weights.map((w) => ({ name: w.name, shape: w.shape, dtype: w.dtype })) }],
  });
  const conv = convertTfjsGraph(readTfjsGraph(modelJson, () => weightData), { graphName: 'op-test', outputs });
  const session = await ort.InferenceSession.create(Buffer.from(conv.bytes), { logSeverityLevel: 3 });
  sessions.push(session);
  const feeds = Object.fromEntries(
    Object.entries(inputs).map(([n, v]) => [n, new ort.Tensor(v.data instanceof Int32Array ? 'int32' : 'float32', v.data, v.shape)]),
  );
  const onnx = await session.run(feeds);

  await tfjsReady();
  const model = await loadGraphModel(
    tf.io.fromMemory({
      modelTopology: { node: g.nodes, versions: { producer: 1 } },
      weightSpecs: g.weights.map((w) => ({ name: w.name, shape: w.shape, dtype: w.dtype })),
      weightData: weightData.buffer.slice(weightData.byteOffset, weightData.byteOffset + weightData.byteLength),
    }),
  );
  const tfInputs = Object.fromEntries(
    Object.entries(inputs).map(([n, v]) => [n, v.data instanceof Int32Array ? tf.tensor(v.data, v.shape, 'int32') : tf.tensor(v.data, v.shape)]),
  );
  // Graphs with control flow (Switch/Merge) only run asynchronously.
  const res = g.nodes.some((n) => n.op === 'Switch') ? await model.executeAsync(tfInputs, outputs) : model.execute(tfInputs, outputs);
  const tfOuts = await Promise.all((Array.isArray(res) ? res : [res]).map((t) => t.data()));
  let maxDiff = 0;
  conv.outputs.forEach((o, i) => {
    const a = onnx[o.name]!;
    const b = tfOuts[i]!;
    expect([...a.dims], `${o.name} shape`).toEqual(o.shape);
    expect(a.data.length).toBe(b.length);
    for (let j = 0; j < b.length; j++) maxDiff = Math.max(maxDiff, Math.abs(Number(a.data[j]) - Number(b[j])));
  });
  return { maxDiff, onnx, conv };
}

const x4 = (shape: number[], scale = 1) => ({ x: { shape, data: randn(shape.reduce((a, b) => a * b, 1), scale) } });

describe('convolutions', () => {
  it.each([
    ['SAME stride 1', [1, 7, 9, 3], 'SAME', [1, 1, 1, 1], [1, 1, 1, 1]],
    ['SAME stride 2, odd size', [1, 7, 9, 3], 'SAME', [1, 2, 2, 1], [1, 1, 1, 1]],
    ['VALID stride 2', [1, 8, 8, 3], 'VALID', [1, 2, 2, 1], [1, 1, 1, 1]],
    ['SAME dilation 2', [1, 9, 9, 3], 'SAME', [1, 1, 1, 1], [1, 2, 2, 1]],
  ])('Conv2D %s', async (_n, shape, padding, strides, dilations) => {
    const g = graph();
    g.input('x', shape as number[]);
    g.const('w', [3, 3, 3, 4], randn(108));
    g.op('y', 'Conv2D', ['x', 'w'], { T: F, padding: A.s(padding as string), strides: A.li(strides as number[]), dilations: A.li(dilations as number[]), data_format: A.s('NHWC') });
    expect((await compare(g, x4(shape as number[]), ['y'])).maxDiff).toBeLessThan(1e-4);
  });

  it.each([['BiasAdd', 'Relu'], ['BiasAdd', 'Relu6'], ['BiasAdd', 'Prelu'], ['BiasAdd']])('_FusedConv2D %s %s', async (...fused) => {
    const g = graph();
    g.input('x', [1, 6, 6, 2]);
    g.const('w', [3, 3, 2, 5], randn(90));
    g.const('bias', [5], randn(5));
    const args = ['x', 'w', 'bias'];
    if (fused[1] === 'Prelu') args.push(g.const('alpha', [5], randn(5, 0.3)));
    g.op('y', '_FusedConv2D', args, { T: F, padding: A.s('SAME'), strides: A.li([1, 2, 2, 1]), dilations: A.li([1, 1, 1, 1]), data_format: A.s('NHWC'), fused_ops: A.ls(fused.filter(Boolean) as string[]), num_args: A.i(args.length - 2), epsilon: A.f(0) });
    expect((await compare(g, x4([1, 6, 6, 2], 3), ['y'])).maxDiff).toBeLessThan(1e-4);
  });

  it.each([
    ['multiplier 1, SAME stride 2', 1, 'SAME', 2],
    ['multiplier 2, VALID stride 1', 2, 'VALID', 1],
  ])('DepthwiseConv2dNative %s', async (_n, m, padding, s) => {
    const g = graph();
    g.input('x', [1, 7, 7, 3]);
    g.const('w', [3, 3, 3, m as number], randn(27 * (m as number)));
    g.op('y', 'DepthwiseConv2dNative', ['x', 'w'], { T: F, padding: A.s(padding as string), strides: A.li([1, s as number, s as number, 1]), dilations: A.li([1, 1, 1, 1]), data_format: A.s('NHWC') });
    expect((await compare(g, x4([1, 7, 7, 3]), ['y'])).maxDiff).toBeLessThan(1e-4);
  });

  it('FusedDepthwiseConv2dNative with BiasAdd + Relu6', async () => {
    const g = graph();
    g.input('x', [1, 5, 5, 4]);
    g.const('w', [3, 3, 4, 1], randn(36));
    g.const('bias', [4], randn(4));
    g.op('y', 'FusedDepthwiseConv2dNative', ['x', 'w', 'bias'], { T: F, padding: A.s('SAME'), strides: A.li([1, 1, 1, 1]), dilations: A.li([1, 1, 1, 1]), data_format: A.s('NHWC'), fused_ops: A.ls(['BiasAdd', 'Relu6']), num_args: A.i(1) });
    expect((await compare(g, x4([1, 5, 5, 4], 4), ['y'])).maxDiff).toBeLessThan(1e-4);
  });

  it.each([
    ['SAME stride 2 (to even size)', [1, 4, 4, 3], [1, 8, 8, 2], 'SAME'],
    ['SAME stride 2 (to odd size)', [1, 4, 4, 3], [1, 7, 7, 2], 'SAME'],
    ['VALID stride 2', [1, 4, 4, 3], [1, 9, 9, 2], 'VALID'],
  ])('Conv2DBackpropInput %s', async (_n, inShape, outShape, padding) => {
    const g = graph();
    g.const('sizes', [4], outShape as number[], 'int32');
    g.const('w', [3, 3, 2, 3], randn(54));
    g.input('x', inShape as number[]);
    g.op('y', 'Conv2DBackpropInput', ['sizes', 'w', 'x'], { T: F, padding: A.s(padding as string), strides: A.li([1, 2, 2, 1]), dilations: A.li([1, 1, 1, 1]), data_format: A.s('NHWC') });
    expect((await compare(g, x4(inShape as number[]), ['y'])).maxDiff).toBeLessThan(1e-4);
  });
});

describe('pooling, reduction, resize, layout', () => {
  it.each([
    ['MaxPool', 'SAME', 2],
    ['MaxPool', 'VALID', 2],
    ['AvgPool', 'SAME', 2], // SAME average excludes the padding from the count
    ['AvgPool', 'VALID', 1],
  ])('%s %s stride %i', async (op, padding, s) => {
    const g = graph();
    g.input('x', [1, 7, 7, 3]);
    g.op('y', op as string, ['x'], { T: F, padding: A.s(padding as string), ksize: A.li([1, 3, 3, 1]), strides: A.li([1, s as number, s as number, 1]), data_format: A.s('NHWC') });
    expect((await compare(g, x4([1, 7, 7, 3]), ['y'])).maxDiff).toBeLessThan(1e-5);
  });

  it.each([[true], [false]])('Mean over H, W (keep_dims %s)', async (keep) => {
    const g = graph();
    g.input('x', [1, 5, 6, 3]);
    g.const('axes', [2], [1, 2], 'int32');
    g.op('y', 'Mean', ['x', 'axes'], { T: F, keep_dims: A.b(keep as boolean) });
    expect((await compare(g, x4([1, 5, 6, 3]), ['y'])).maxDiff).toBeLessThan(1e-5);
  });

  it.each([
    ['align_corners, up', true, false, [11, 13]],
    ['half_pixel_centers, up', false, true, [11, 13]],
    ['half_pixel_centers, down', false, true, [3, 4]],
    ['asymmetric, up', false, false, [10, 14]],
    ['asymmetric, down', false, false, [3, 3]],
  ])('ResizeBilinear %s', async (_n, align, half, size) => {
    const g = graph();
    g.input('x', [1, 6, 7, 2]);
    g.const('size', [2], size as number[], 'int32');
    g.op('y', 'ResizeBilinear', ['x', 'size'], { T: F, align_corners: A.b(align as boolean), half_pixel_centers: A.b(half as boolean) });
    expect((await compare(g, x4([1, 6, 7, 2]), ['y'])).maxDiff).toBeLessThan(1e-5);
  });

  it('DepthToSpace (block 2)', async () => {
    const g = graph();
    g.input('x', [1, 3, 4, 8]);
    g.op('y', 'DepthToSpace', ['x'], { T: F, block_size: A.i(2), data_format: A.s('NHWC') });
    expect((await compare(g, x4([1, 3, 4, 8]), ['y'])).maxDiff).toBe(0);
  });

  it('Pad and PadV2', async () => {
    const g = graph();
    g.input('x', [1, 3, 4, 2]);
    g.const('p', [4, 2], [0, 0, 1, 2, 2, 0, 0, 1], 'int32');
    g.const('v', [], [0.5]);
    g.op('a', 'Pad', ['x', 'p'], { T: F });
    g.op('b', 'PadV2', ['x', 'p', 'v'], { T: F });
    expect((await compare(g, x4([1, 3, 4, 2]), ['a', 'b'])).maxDiff).toBe(0);
  });

  it('ConcatV2, Reshape, Squeeze, ExpandDims, Pack, Unpack', async () => {
    const g = graph();
    g.input('x', [1, 2, 3, 4]);
    g.const('ax', [], [-1], 'int32');
    g.op('c', 'ConcatV2', ['x', 'x', 'ax'], { T: F, N: A.i(2) });
    g.const('shape', [2], [-1, 6], 'int32');
    g.op('r', 'Reshape', ['c', 'shape'], { T: F });
    g.op('sq', 'Squeeze', ['x'], { T: F, squeeze_dims: A.li([0]) });
    g.const('e', [], [1], 'int32');
    g.op('ex', 'ExpandDims', ['sq', 'e'], { T: F });
    g.op('pk', 'Pack', ['sq', 'sq', 'sq'], { T: F, N: A.i(3), axis: A.i(1) });
    g.op('up', 'Unpack', ['sq'], { T: F, num: A.i(2), axis: A.i(0) });
    const r = await compare(g, x4([1, 2, 3, 4]), ['r', 'ex', 'pk', 'up:1']);
    expect(r.maxDiff).toBe(0);
  });

  it('MatMul with transpose_b, BiasAdd, Softmax', async () => {
    const g = graph();
    g.input('x', [3, 5]);
    g.const('w', [4, 5], randn(20));
    g.const('bias', [4], randn(4));
    g.op('m', 'MatMul', ['x', 'w'], { T: F, transpose_a: A.b(false), transpose_b: A.b(true) });
    g.op('b', 'BiasAdd', ['m', 'bias'], { T: F, data_format: A.s('NHWC') });
    g.op('y', 'Softmax', ['b'], { T: F });
    expect((await compare(g, x4([3, 5]), ['y'])).maxDiff).toBeLessThan(1e-6);
  });
});

describe('element-wise and integer ops', () => {
  it('Add, AddV2, Sub, Mul, RealDiv, SquaredDifference, Sqrt, AddN, Relu, Relu6, Sigmoid, Prelu with broadcasting', async () => {
    const g = graph();
    g.input('x', [1, 2, 3, 4]);
    g.const('k', [4], randn(4));
    g.const('two', [], [2]);
    g.op('a', 'Add', ['x', 'k'], { T: F });
    g.op('b', 'AddV2', ['a', 'two'], { T: F });
    g.op('c', 'Sub', ['b', 'x'], { T: F });
    g.op('d', 'Mul', ['c', 'x'], { T: F });
    g.op('e', 'RealDiv', ['d', 'two'], { T: F });
    g.op('f', 'SquaredDifference', ['e', 'k'], { T: F });
    g.op('h', 'Sqrt', ['f'], { T: F });
    g.op('n', 'AddN', ['h', 'x', 'e'], { T: F, N: A.i(3) });
    g.op('r', 'Relu', ['n'], { T: F });
    g.op('r6', 'Relu6', ['n'], { T: F });
    g.op('s', 'Sigmoid', ['n'], { T: F });
    g.op('p', 'Prelu', ['x', 'k'], { T: F });
    expect((await compare(g, x4([1, 2, 3, 4], 5), ['r', 'r6', 's', 'p'])).maxDiff).toBeLessThan(1e-5);
  });

  it('FloorDiv on negative integers, Cast, ArgMax (int32), GatherNd', async () => {
    const g = graph();
    g.input('x', [6], 'DT_INT32');
    g.const('d', [], [4], 'int32');
    g.op('fd', 'FloorDiv', ['x', 'd'], { T: A.t('DT_INT32') });
    g.op('cf', 'Cast', ['fd'], { SrcT: A.t('DT_INT32'), DstT: F, Truncate: A.b(false) });
    g.const('m', [3, 4], randn(12));
    g.const('dim', [], [1], 'int32');
    g.op('am', 'ArgMax', ['m', 'dim'], { T: F, Tidx: A.t('DT_INT32'), output_type: A.t('DT_INT32') });
    g.const('idx', [2, 2], [2, 1, 0, 3], 'int32');
    g.op('gn', 'GatherNd', ['m', 'idx'], { Tparams: F, Tindices: A.t('DT_INT32') });
    const r = await compare(g, { x: { shape: [6], data: Int32Array.from([-9, -8, -1, 0, 7, 9]) } }, ['fd', 'cf', 'am', 'gn']);
    expect(r.maxDiff).toBe(0);
    const fd = r.onnx[r.conv.outputs[0]!.name]!.data;
    expect([...fd].map(Number)).toEqual([-3, -2, -1, 0, 1, 2]);
  });

  it('Shape -> StridedSlice -> Pack -> Reshape folds to constants', async () => {
    const g = graph();
    g.input('x', [1, 4, 6, 2]);
    g.op('sh', 'Shape', ['x'], { T: F, out_type: A.t('DT_INT32') });
    g.const('b', [1], [1], 'int32');
    g.const('e', [1], [2], 'int32');
    g.const('s', [1], [1], 'int32');
    g.op('h', 'StridedSlice', ['sh', 'b', 'e', 's'], { T: A.t('DT_INT32'), Index: A.t('DT_INT32'), shrink_axis_mask: A.i(1), begin_mask: A.i(0), end_mask: A.i(0), ellipsis_mask: A.i(0), new_axis_mask: A.i(0) });
    g.const('minus1', [], [-1], 'int32');
    g.op('pk', 'Pack', ['h', 'minus1'], { T: A.t('DT_INT32'), N: A.i(2), axis: A.i(0) });
    g.op('y', 'Reshape', ['x', 'pk'], { T: F });
    const r = await compare(g, x4([1, 4, 6, 2]), ['y']);
    expect(r.maxDiff).toBe(0);
    expect(r.conv.outputs[0]!.shape).toEqual([4, 12]);
    // The TF graph had a Shape op (r.conv.ops counts the TF input's ops); the ONNX graph must have
    // none of that plumbing left: only the Reshape, its shape an initializer, and the output Identity.
    const onnxGraph = describeModel(r.conv.bytes);
    expect(onnxGraph.ops).toEqual({ Reshape: 1, Identity: 1 });
    const reshape = onnxGraph.nodes.find((n) => n.op === 'Reshape')!;
    expect(onnxGraph.initializerDims[reshape.inputs[1]!]).toEqual([2]);
  });

  it.each([
    ['begin/end masks with stride 2', [1, 0, 0, 0], [0, 5, 0, 0], [1, 2, 1, 1], 0b1101, 0b1101, 0],
    ['negative stride reverses', [0, -1, 0, 0], [0, 0, 0, 0], [1, -1, 1, 1], 0b1101, 0b1111, 0],
    ['shrink the batch axis, negative begin', [0, -2, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1], 0, 0b1110, 0b0001],
  ])('StridedSlice: %s', async (_n, begin, end, strides, bm, em, sm) => {
    const g = graph();
    g.input('x', [2, 6, 3, 2]);
    g.const('b', [4], begin as number[], 'int32');
    g.const('e', [4], end as number[], 'int32');
    g.const('s', [4], strides as number[], 'int32');
    g.op('y', 'StridedSlice', ['x', 'b', 'e', 's'], { T: F, Index: A.t('DT_INT32'), begin_mask: A.i(bm as number), end_mask: A.i(em as number), shrink_axis_mask: A.i(sm as number), ellipsis_mask: A.i(0), new_axis_mask: A.i(0) });
    expect((await compare(g, x4([2, 6, 3, 2]), ['y'])).maxDiff).toBe(0);
  });
});

describe('control flow, splits and dilated convolution (RVM)', () => {
  it.each([[1, 'then'], [0.5, 'else']])('Switch/Merge on a constant predicate (ratio %s: %s branch), Equal', async (ratio) => {
    const g = graph();
    g.input('x', [1, 4, 4, 2]);
    g.const('ratio', [], [ratio as number]);
    g.const('one', [], [1]);
    g.op('eq', 'Equal', ['ratio', 'one'], { T: F, incompatible_shape_error: A.b(true) });
    g.op('sw', 'Switch', ['x', 'eq'], { T: F });
    g.op('else', 'Sigmoid', ['sw'], { T: F });
    g.op('then', 'Relu', ['sw:1'], { T: F });
    g.op('m', 'Merge', ['else', 'then'], { T: F, N: A.i(2) });
    g.op('y', 'Identity', ['m'], { T: F });
    const r = await compare(g, x4([1, 4, 4, 2], 3), ['y']);
    expect(r.maxDiff).toBeLessThan(1e-6);
    // The untaken branch is gone from the ONNX graph.
    expect(Object.keys(describeModel(r.conv.bytes).ops)).not.toContain(ratio === 1 ? 'Sigmoid' : 'Relu');
  });

  it('FloorMod (float and negative int), Square', async () => {
    const g = graph();
    g.input('x', [2, 3]);
    g.const('d', [], [0.7]);
    g.op('fm', 'FloorMod', ['x', 'd'], { T: F });
    g.op('sq', 'Square', ['x'], { T: F });
    g.input('i', [6], 'DT_INT32');
    g.const('k', [], [4], 'int32');
    g.op('im', 'FloorMod', ['i', 'k'], { T: A.t('DT_INT32') });
    g.op('ic', 'Cast', ['im'], { SrcT: A.t('DT_INT32'), DstT: F, Truncate: A.b(false) });
    const r = await compare(g, { x: { shape: [2, 3], data: randn(6, 3) }, i: { shape: [6], data: Int32Array.from([-9, -8, -1, 0, 7, 9]) } }, ['fm', 'sq', 'ic']);
    expect(r.maxDiff).toBeLessThan(1e-5);
  });

  it('Split, SplitV (with -1), Slice (with -1), BroadcastTo', async () => {
    const g = graph();
    g.input('x', [1, 4, 6, 4]);
    g.const('dim', [], [3], 'int32');
    g.op('sp', 'Split', ['dim', 'x'], { T: F, num_split: A.i(2) });
    g.const('sizes', [2], [1, -1], 'int32');
    g.const('ax', [], [2], 'int32');
    g.op('sv', 'SplitV', ['x', 'sizes', 'ax'], { T: F, num_split: A.i(2), Tlen: A.t('DT_INT32') });
    g.const('begin', [4], [0, 1, 2, 0], 'int32');
    g.const('size', [4], [-1, 2, -1, 3], 'int32');
    g.op('sl', 'Slice', ['x', 'begin', 'size'], { T: F, Index: A.t('DT_INT32') });
    g.const('zero', [], [0.25]);
    g.const('shape', [4], [1, 4, 6, 4], 'int32');
    g.op('bt', 'BroadcastTo', ['zero', 'shape'], { T: F, Tidx: A.t('DT_INT32') });
    g.op('y', 'AddV2', ['bt', 'x'], { T: F });
    const r = await compare(g, x4([1, 4, 6, 4]), ['sp:1', 'sv:1', 'sl', 'y']);
    expect(r.maxDiff).toBe(0);
  });

  it('SpaceToBatchND -> DepthwiseConv2dNative -> BatchToSpaceND (dilation 2, odd size)', async () => {
    const g = graph();
    g.input('x', [1, 7, 9, 3]);
    g.const('block', [2], [2, 2], 'int32');
    g.const('pads', [2, 2], [2, 3, 2, 3], 'int32');
    g.op('s2b', 'SpaceToBatchND', ['x', 'block', 'pads'], { T: F, Tblock_shape: A.t('DT_INT32'), Tpaddings: A.t('DT_INT32') });
    g.const('w', [3, 3, 3, 1], randn(27));
    g.op('dw', 'DepthwiseConv2dNative', ['s2b', 'w'], { T: F, padding: A.s('VALID'), strides: A.li([1, 1, 1, 1]), dilations: A.li([1, 1, 1, 1]), data_format: A.s('NHWC') });
    g.const('crops', [2, 2], [0, 1, 0, 1], 'int32');
    g.op('y', 'BatchToSpaceND', ['dw', 'block', 'crops'], { T: F, Tblock_shape: A.t('DT_INT32'), Tcrops: A.t('DT_INT32') });
    const r = await compare(g, x4([1, 7, 9, 3]), ['s2b', 'y']);
    expect(r.maxDiff).toBeLessThan(1e-5);
  });
});

describe('unsupported ops', () => {
  it('fail the import naming the op and the node', () => {
    const g = graph();
    g.input('x', [1, 4]);
    g.op('weird/node', 'Cumsum', ['x'], { T: F });
    const modelJson = JSON.stringify({ modelTopology: { node: g.nodes }, weightsManifest: [] });
    expect(() => convertTfjsGraph(readTfjsGraph(modelJson, () => Buffer.alloc(0)), { graphName: 'x' })).toThrow(UnsupportedOpError);
    expect(() => convertTfjsGraph(readTfjsGraph(modelJson, () => Buffer.alloc(0)), { graphName: 'x' })).toThrow('unsupported op Cumsum at node "weird/node"');
  });
});
