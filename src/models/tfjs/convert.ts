// TensorFlow.js graph model -> ONNX (opset 17).
//
// Layout: the graph stays NHWC like the original. Each op whose ONNX form is NCHW-only (Conv,
// ConvTranspose, pooling, Resize, DepthToSpace) is wrapped in Transpose(NHWC->NCHW) ...
// Transpose(NCHW->NHWC); onnxruntime's transpose optimizer cancels the pairs between such ops and
// pushes the rest through element-wise ops, so the served graph runs NCHW inside.
//
// Shapes: inputs get static shapes (batch 1, the size the version is built for), every op's output
// shape is inferred here, and any node whose inputs are all constant is evaluated in JS (Shape,
// StridedSlice, Pack, Cast, arithmetic ...): dynamic-shape plumbing folds away. An op without a
// mapping fails the import, naming the op and the node.
import { OnnxGraphBuilder, type OnnxDType } from '../onnx-builder.ts';
import type { ConstTensor, DType, TfGraph, TfNode } from './reader.ts';

export class UnsupportedOpError extends Error {
  constructor(
    readonly op: string,
    readonly node: string,
    detail?: string,
  ) {
    super(`unsupported op ${op} at node "${node}"${detail ? `: ${detail}` : ''}`);
  }
}

type Const = ConstTensor & { kind: 'const' };
type Sym = { kind: 'sym'; name: string; dtype: DType; shape: number[] };
type Value = Const | Sym;

export interface ConvertOptions {
  /** Static shape per placeholder (replaces -1 dims). */
  inputShapes?: Record<string, number[]>;
  /** Output tensor names ("node" or "node:k"); default: the signature's, else the graph's sinks. */
  outputs?: string[];
  graphName: string;
}

export interface ConvertResult {
  bytes: Uint8Array;
  inputs: Array<{ name: string; dtype: DType; shape: number[] }>;
  outputs: Array<{ name: string; dtype: DType; shape: number[] }>;
  /** TF ops seen, with counts (for reports). */
  ops: Record<string, number>;
}

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);
const NHWC_TO_NCHW = [0, 3, 1, 2];
const NCHW_TO_NHWC = [0, 2, 3, 1];

function constOf(dtype: DType, shape: number[], data: Const['data']): Const {
  return { kind: 'const', dtype, shape, data };
}

function newData(dtype: DType, n: number): Const['data'] {
  if (dtype === 'float32') return new Float32Array(n);
  if (dtype === 'int32') return new Int32Array(n);
  if (dtype === 'int64') return new BigInt64Array(n);
  return new Uint8Array(n);
}

function numbers(c: Const): number[] {
  return Array.from(c.data as ArrayLike<number | bigint>, (v) => Number(v));
}

function stridesOf(shape: number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!;
  return s;
}

function broadcastShape(a: number[], b: number[], where: string): number[] {
  const n = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new Error(`${where}: shapes [${a}] and [${b}] do not broadcast`);
    out.push(x === 1 ? y : x);
  }
  return out;
}

/** Element-wise binary op on constants, with broadcasting. */
function evalBinary(a: Const, b: Const, f: (x: number, y: number) => number, where: string): Const {
  const shape = broadcastShape(a.shape, b.shape, where);
  const out = newData(a.dtype, size(shape));
  const st = stridesOf(shape);
  const idx = (src: number[], i: number) => {
    let off = 0;
    let rem = i;
    const sst = stridesOf(src);
    for (let d = 0; d < shape.length; d++) {
      const coord = Math.floor(rem / st[d]!);
      rem -= coord * st[d]!;
      const sd = d - (shape.length - src.length);
      if (sd >= 0 && src[sd]! !== 1) off += coord * sst[sd]!;
    }
    return off;
  };
  const ad = numbers(a);
  const bd = numbers(b);
  for (let i = 0; i < out.length; i++) {
    const v = f(ad[idx(a.shape, i)]!, bd[idx(b.shape, i)]!);
    (out as Float32Array)[i] = a.dtype === 'int32' ? Math.trunc(v) : v;
  }
  return constOf(a.dtype, shape, out);
}

/** Transposes a constant (weights) in JS. */
function transposeConst(c: Const, perm: number[]): Const {
  const shape = perm.map((p) => c.shape[p]!);
  const src = stridesOf(c.shape);
  const dst = stridesOf(shape);
  const out = newData(c.dtype, size(shape));
  const n = size(shape);
  const data = c.data as Float32Array;
  for (let i = 0; i < n; i++) {
    let rem = i;
    let off = 0;
    for (let d = 0; d < shape.length; d++) {
      const coord = Math.floor(rem / dst[d]!);
      rem -= coord * dst[d]!;
      off += coord * src[perm[d]!]!;
    }
    (out as Float32Array)[i] = data[off]!;
  }
  return constOf(c.dtype, shape, out);
}

interface SliceSpec {
  starts: number[];
  ends: number[];
  steps: number[];
  outShape: number[];
  shrink: number[];
}

/** TF StridedSlice semantics (begin/end/shrink masks) resolved against a static shape. */
function resolveStridedSlice(node: TfNode, shape: number[], begin: number[], end: number[], strides: number[]): SliceSpec {
  const a = node.attr;
  if (Number(a.ellipsis_mask ?? 0) || Number(a.new_axis_mask ?? 0)) throw new UnsupportedOpError(node.op, node.name, 'ellipsis_mask and new_axis_mask are not supported');
  const bm = Number(a.begin_mask ?? 0);
  const em = Number(a.end_mask ?? 0);
  const sm = Number(a.shrink_axis_mask ?? 0);
  const spec: SliceSpec = { starts: [], ends: [], steps: [], outShape: [], shrink: [] };
  for (let i = 0; i < shape.length; i++) {
    const dim = shape[i]!;
    if (i >= begin.length) {
      spec.starts.push(0);
      spec.ends.push(dim);
      spec.steps.push(1);
      spec.outShape.push(dim);
      continue;
    }
    let s = strides[i]!;
    const norm = (v: number) => (v < 0 ? v + dim : v);
    let b: number;
    let e: number;
    if (sm & (1 << i)) {
      b = norm(begin[i]!);
      e = b + 1;
      s = 1;
      spec.shrink.push(i);
    } else {
      b = bm & (1 << i) ? (s > 0 ? 0 : dim - 1) : Math.min(Math.max(norm(begin[i]!), s > 0 ? 0 : -1), s > 0 ? dim : dim - 1);
      e = em & (1 << i) ? (s > 0 ? dim : -1) : Math.min(Math.max(norm(end[i]!), s > 0 ? 0 : -1), s > 0 ? dim : dim - 1);
    }
    const len = s > 0 ? Math.max(0, Math.ceil((e - b) / s)) : Math.max(0, Math.ceil((b - e) / -s));
    spec.starts.push(b);
    // ONNX Slice: a negative end means "from the back"; "before index 0" needs a very negative end.
    spec.ends.push(e === -1 && s < 0 ? -(2 ** 31) : e);
    spec.steps.push(s);
    spec.outShape.push(len);
  }
  return spec;
}

function sliceConst(c: Const, spec: SliceSpec): Const {
  const out = newData(c.dtype, size(spec.outShape));
  const src = stridesOf(c.shape);
  const dst = stridesOf(spec.outShape);
  const data = c.data as Float32Array;
  for (let i = 0; i < out.length; i++) {
    let rem = i;
    let off = 0;
    for (let d = 0; d < spec.outShape.length; d++) {
      const coord = Math.floor(rem / dst[d]!);
      rem -= coord * dst[d]!;
      off += (spec.starts[d]! + coord * spec.steps[d]!) * src[d]!;
    }
    (out as Float32Array)[i] = data[off]!;
  }
  return constOf(c.dtype, spec.outShape.filter((_, d) => !spec.shrink.includes(d)), out);
}

function concatConsts(parts: Const[], axis: number): Const {
  const shape = [...parts[0]!.shape];
  shape[axis] = parts.reduce((a, p) => a + p.shape[axis]!, 0);
  const outer = size(shape.slice(0, axis));
  const out = newData(parts[0]!.dtype, size(shape));
  let o = 0;
  for (let i = 0; i < outer; i++) {
    for (const p of parts) {
      const chunk = size(p.shape.slice(axis));
      const d = p.data as Float32Array;
      for (let j = 0; j < chunk; j++) (out as Float32Array)[o++] = d[i * chunk + j]!;
    }
  }
  return constOf(parts[0]!.dtype, shape, out);
}

function castConst(c: Const, to: DType): Const {
  const out = newData(to, size(c.shape));
  const src = numbers(c);
  for (let i = 0; i < src.length; i++) {
    if (to === 'int64') (out as BigInt64Array)[i] = BigInt(Math.trunc(src[i]!));
    else (out as Float32Array)[i] = to === 'float32' ? src[i]! : to === 'bool' ? (src[i] ? 1 : 0) : Math.trunc(src[i]!);
  }
  return constOf(to, c.shape, out);
}

/** Explicit [before, after] pads of one spatial dim for TF SAME padding. */
function samePads(inSize: number, k: number, stride: number, dilation: number): [number, number] {
  const eff = (k - 1) * dilation + 1;
  const out = Math.ceil(inSize / stride);
  const total = Math.max((out - 1) * stride + eff - inSize, 0);
  return [Math.floor(total / 2), total - Math.floor(total / 2)];
}

function convOut(inSize: number, k: number, stride: number, dilation: number, pads: [number, number]): number {
  return Math.floor((inSize + pads[0] + pads[1] - ((k - 1) * dilation + 1)) / stride) + 1;
}

export function convertTfjsGraph(graph: TfGraph, opts: ConvertOptions): ConvertResult {
  const b = new OnnxGraphBuilder();
  const values = new Map<string, Value>();
  const constNames = new Map<Const, string>();
  const ops: Record<string, number> = {};
  const byName = new Map(graph.nodes.map((n) => [n.name, n]));
  const inputs: ConvertResult['inputs'] = [];

  const key = (ref: string) => (ref.includes(':') ? ref : `${ref}:0`);
  const tensorName = (v: Value, base: string): string => {
    if (v.kind === 'sym') return v.name;
    let n = constNames.get(v);
    if (!n) {
      n = b.initializer(base, v.dtype as OnnxDType, v.shape, v.data);
      constNames.set(v, n);
    }
    return n;
  };
  const sym = (name: string, dtype: DType, shape: number[]): Sym => ({ kind: 'sym', name, dtype, shape });
  const transpose = (x: Sym, perm: number[], base: string): Sym =>
    sym(b.op('Transpose', [x.name], { perm }, base), x.dtype, perm.map((p) => x.shape[p]!));

  // Topological order by data dependencies (model.json order is not guaranteed).
  const order: TfNode[] = [];
  const state = new Map<string, 1 | 2>();
  const visit = (n: TfNode) => {
    const s = state.get(n.name);
    if (s === 2) return;
    if (s === 1) throw new Error(`graph has a cycle at ${n.name}`);
    state.set(n.name, 1);
    for (const i of n.inputs) {
      const dep = byName.get(i.split(':')[0]!);
      if (!dep) throw new Error(`node ${n.name}: input ${i} does not exist`);
      visit(dep);
    }
    state.set(n.name, 2);
    order.push(n);
  };
  const wanted =
    opts.outputs ??
    graph.signatureOutputs ??
    (() => {
      const consumed = new Set(graph.nodes.flatMap((n) => n.inputs.map((i) => i.split(':')[0]!)));
      return graph.nodes.filter((n) => !consumed.has(n.name) && n.op !== 'Const' && n.op !== 'Placeholder').map((n) => n.name);
    })();
  for (const o of wanted) {
    const n = byName.get(o.split(':')[0]!);
    if (!n) throw new Error(`output ${o} is not a node of the graph`);
    visit(n);
  }

  for (const node of order) {
    ops[node.op] = (ops[node.op] ?? 0) + 1;
    const ins = node.inputs.map((i) => {
      const v = values.get(key(i));
      if (!v) throw new Error(`node ${node.name}: input ${i} has no value`);
      return v;
    });
    const outs = convertNode(node, ins);
    outs.forEach((v, i) => values.set(`${node.name}:${i}`, v));
  }

  const outputs: ConvertResult['outputs'] = [];
  for (const o of wanted) {
    const v = values.get(key(o))!;
    let name = tensorName(v, o);
    // Name graph outputs after the TF tensor so callers can find them.
    const outName = b.name(key(o));
    b.node('Identity', [name], [outName]);
    name = outName;
    b.output(name, v.dtype as OnnxDType, v.shape);
    outputs.push({ name, dtype: v.dtype, shape: v.shape });
  }
  return { bytes: b.serialize(opts.graphName), inputs, outputs, ops };

  // ---------------------------------------------------------------------------------------------
  function convertNode(node: TfNode, ins: Value[]): Value[] {
    const a = node.attr;
    const allConst = ins.length > 0 && ins.every((v) => v.kind === 'const');
    const x = ins[0]!;
    const asSym = (v: Value, base = node.name): Sym => (v.kind === 'sym' ? v : sym(tensorName(v, `${base}/const`), v.dtype, v.shape));
    const unary = (op: string, attrs = {}) => [sym(b.op(op, [asSym(x).name], attrs, node.name), x.dtype, x.shape)];
    const binary = (op: string, f: (p: number, q: number) => number) => {
      const [p, q] = ins as [Value, Value];
      if (p.kind === 'const' && q.kind === 'const') return [evalBinary(p, q, f, node.name)];
      const shape = broadcastShape(p.shape, q.shape, node.name);
      return [sym(b.op(op, [tensorName(p, `${node.name}/a`), tensorName(q, `${node.name}/b`)], {}, node.name), p.dtype, shape)];
    };
    const constArg = (i: number, what: string): Const => {
      const v = ins[i];
      if (!v || v.kind !== 'const') throw new UnsupportedOpError(node.op, node.name, `${what} must be constant`);
      return v;
    };

    switch (node.op) {
      case 'Const': {
        const w = graph.weights.get(node.name);
        if (!w) throw new Error(`Const ${node.name} has no weight data`);
        return [constOf(w.dtype, w.shape, w.data)];
      }
      case 'Placeholder': {
        const declared = graph.placeholders.get(node.name) ?? [];
        const shape = opts.inputShapes?.[node.name] ?? declared.map((d, i) => (d < 0 ? (i === 0 ? 1 : -1) : d));
        if (shape.some((d) => d < 0)) throw new Error(`input ${node.name} has unknown dims [${shape}]; give inputShapes`);
        const dtype = (a.dtype as DType) ?? 'float32';
        b.input(node.name, dtype as OnnxDType, shape);
        inputs.push({ name: node.name, dtype, shape });
        return [sym(node.name, dtype, shape)];
      }
      case 'Identity':
      case 'StopGradient':
        return [x];
      case 'Add':
      case 'AddV2':
      case 'BiasAdd':
        return binary('Add', (p, q) => p + q);
      case 'Sub':
        return binary('Sub', (p, q) => p - q);
      case 'Mul':
        return binary('Mul', (p, q) => p * q);
      case 'RealDiv':
        return binary('Div', (p, q) => p / q);
      case 'Maximum':
        return binary('Max', Math.max);
      case 'Minimum':
        return binary('Min', Math.min);
      case 'FloorDiv': {
        const [p, q] = ins as [Value, Value];
        if (allConst) return [evalBinary(p as Const, q as Const, (u, v) => Math.floor(u / v), node.name)];
        const shape = broadcastShape(p.shape, q.shape, node.name);
        const pn = tensorName(p, `${node.name}/a`);
        const qn = tensorName(q, `${node.name}/b`);
        if (p.dtype === 'float32') return [sym(b.op('Floor', [b.op('Div', [pn, qn])], {}, node.name), p.dtype, shape)];
        // Integer floor division for any sign: (p - mod(p, q)) / q, with the divisor's sign (fmod 0).
        const mod = b.op('Mod', [pn, qn], { fmod: 0 });
        return [sym(b.op('Div', [b.op('Sub', [pn, mod]), qn], {}, node.name), p.dtype, shape)];
      }
      case 'SquaredDifference': {
        const [p, q] = ins as [Value, Value];
        if (allConst) return [evalBinary(p as Const, q as Const, (u, v) => (u - v) * (u - v), node.name)];
        const d = b.op('Sub', [tensorName(p, `${node.name}/a`), tensorName(q, `${node.name}/b`)]);
        return [sym(b.op('Mul', [d, d], {}, node.name), p.dtype, broadcastShape(p.shape, q.shape, node.name))];
      }
      case 'AddN':
        if (ins.length === 1) return [x];
      {
        const shape = ins.map((v) => v.shape).reduce((s, t) => broadcastShape(s, t, node.name));
        return [sym(b.op('Sum', ins.map((v, i) => tensorName(v, `${node.name}/${i}`)), {}, node.name), x.dtype, shape)];
      }
      case 'Relu':
      case 'Relu6':
      case 'Sigmoid':
      case 'Tanh':
      case 'Elu':
      case 'LeakyRelu':
        return [activation(node, node.op, asSym(x))];
      case 'Sqrt':
        return unary('Sqrt');
      case 'Exp':
        return unary('Exp');
      case 'Neg':
        return allConst ? [evalBinary(x as Const, constOf('float32', [], new Float32Array([0])), (p) => -p, node.name)] : unary('Neg');
      case 'Rsqrt':
        return [sym(b.op('Reciprocal', [b.op('Sqrt', [asSym(x).name])], {}, node.name), x.dtype, x.shape)];
      case 'Softmax':
        return unary('Softmax', { axis: -1 });
      case 'Prelu':
        return [activation(node, 'Prelu', asSym(x), ins[1])];
      case 'Cast': {
        const to = (a.DstT as DType) ?? 'float32';
        if (x.kind === 'const') return [castConst(x, to)];
        return [sym(b.op('Cast', [x.name], { to: onnxTypeCode(to) }, node.name), to, x.shape)];
      }
      case 'Conv2D':
      case '_FusedConv2D':
      case 'DepthwiseConv2dNative':
      case 'FusedDepthwiseConv2dNative':
        return [convolution(node, ins)];
      case 'Conv2DBackpropInput':
        return [convTranspose(node, ins)];
      case 'MaxPool':
      case 'AvgPool':
        return [pool(node, asSym(x))];
      case 'Mean': {
        const axes = numbers(constArg(1, 'reduction axes')).map((d) => (d < 0 ? d + x.shape.length : d));
        const keep = Boolean(a.keep_dims);
        const shape = x.shape.flatMap((d, i) => (axes.includes(i) ? (keep ? [1] : []) : [d]));
        return [sym(b.op('ReduceMean', [asSym(x).name], { axes, keepdims: keep ? 1 : 0 }, node.name), x.dtype, shape)];
      }
      case 'ResizeBilinear':
      case 'ResizeNearestNeighbor': {
        const [h, w] = numbers(constArg(1, 'size'));
        const xs = asSym(x);
        const nchw = transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`);
        const align = Boolean(a.align_corners);
        const half = Boolean(a.half_pixel_centers);
        const linear = node.op === 'ResizeBilinear';
        if (!linear && (align || half)) throw new UnsupportedOpError(node.op, node.name, 'align_corners/half_pixel_centers for nearest');
        const mode = align ? 'align_corners' : half ? 'half_pixel' : 'asymmetric';
        const sizes = b.int64s(`${node.name}/sizes`, [xs.shape[0]!, xs.shape[3]!, h!, w!]);
        const y = b.op('Resize', [nchw.name, '', '', sizes], { mode: linear ? 'linear' : 'nearest', coordinate_transformation_mode: mode, nearest_mode: 'floor' }, node.name);
        return [transpose(sym(y, x.dtype, [xs.shape[0]!, xs.shape[3]!, h!, w!]), NCHW_TO_NHWC, `${node.name}/nhwc`)];
      }
      case 'DepthToSpace': {
        const bs = Number(a.block_size);
        const xs = asSym(x);
        const nchw = transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`);
        const [n, c, h, w] = nchw.shape as [number, number, number, number];
        const y = b.op('DepthToSpace', [nchw.name], { blocksize: bs, mode: 'DCR' }, node.name);
        return [transpose(sym(y, x.dtype, [n, c / (bs * bs), h * bs, w * bs]), NCHW_TO_NHWC, `${node.name}/nhwc`)];
      }
      case 'Pad':
      case 'PadV2':
      case 'MirrorPad': {
        const p = numbers(constArg(1, 'paddings'));
        const begins = x.shape.map((_, i) => p[2 * i]!);
        const ends = x.shape.map((_, i) => p[2 * i + 1]!);
        const shape = x.shape.map((d, i) => d + begins[i]! + ends[i]!);
        const mode = node.op === 'MirrorPad' ? String(a.mode).toLowerCase() : 'constant';
        if (mode !== 'constant' && mode !== 'reflect') throw new UnsupportedOpError(node.op, node.name, `mode ${a.mode}`);
        const args = [asSym(x).name, b.int64s(`${node.name}/pads`, [...begins, ...ends])];
        if (node.op === 'PadV2') args.push(tensorName(ins[2]!, `${node.name}/value`));
        return [sym(b.op('Pad', args, { mode }, node.name), x.dtype, shape)];
      }
      case 'ConcatV2': {
        const parts = ins.slice(0, -1);
        let axis = numbers(constArg(ins.length - 1, 'axis'))[0]!;
        if (axis < 0) axis += parts[0]!.shape.length;
        const shape = [...parts[0]!.shape];
        shape[axis] = parts.reduce((s, p) => s + p.shape[axis]!, 0);
        if (parts.every((p) => p.kind === 'const')) return [concatConsts(parts as Const[], axis)];
        return [sym(b.op('Concat', parts.map((p, i) => tensorName(p, `${node.name}/${i}`)), { axis }, node.name), x.dtype, shape)];
      }
      case 'Reshape': {
        const want = numbers(constArg(1, 'shape'));
        const known = want.filter((d) => d >= 0).reduce((s, d) => s * d, 1);
        const shape = want.map((d) => (d < 0 ? size(x.shape) / known : d));
        if (x.kind === 'const') return [constOf(x.dtype, shape, x.data)];
        return [sym(b.op('Reshape', [x.name, b.int64s(`${node.name}/shape`, shape)], {}, node.name), x.dtype, shape)];
      }
      case 'Squeeze': {
        const dims = (a.squeeze_dims as number[] | undefined) ?? [];
        const axes = (dims.length ? dims : x.shape.flatMap((d, i) => (d === 1 ? [i] : []))).map((d) => (d < 0 ? d + x.shape.length : d));
        const shape = x.shape.filter((_, i) => !axes.includes(i));
        if (x.kind === 'const') return [constOf(x.dtype, shape, x.data)];
        return [sym(b.op('Squeeze', [x.name, b.int64s(`${node.name}/axes`, axes)], {}, node.name), x.dtype, shape)];
      }
      case 'ExpandDims': {
        let axis = numbers(constArg(1, 'axis'))[0]!;
        if (axis < 0) axis += x.shape.length + 1;
        const shape = [...x.shape.slice(0, axis), 1, ...x.shape.slice(axis)];
        if (x.kind === 'const') return [constOf(x.dtype, shape, x.data)];
        return [sym(b.op('Unsqueeze', [x.name, b.int64s(`${node.name}/axes`, [axis])], {}, node.name), x.dtype, shape)];
      }
      case 'Pack': {
        let axis = Number(a.axis ?? 0);
        if (axis < 0) axis += x.shape.length + 1;
        const shape = [...x.shape.slice(0, axis), ins.length, ...x.shape.slice(axis)];
        if (allConst) {
          const parts = (ins as Const[]).map((c) => constOf(c.dtype, [...c.shape.slice(0, axis), 1, ...c.shape.slice(axis)], c.data));
          return [constOf(x.dtype, shape, concatConsts(parts, axis).data)];
        }
        const axesName = b.int64s(`${node.name}/axes`, [axis]);
        const parts = ins.map((v, i) => b.op('Unsqueeze', [tensorName(v, `${node.name}/${i}`), axesName]));
        return [sym(b.op('Concat', parts, { axis }, node.name), x.dtype, shape)];
      }
      case 'Unpack': {
        let axis = Number(a.axis ?? 0);
        if (axis < 0) axis += x.shape.length;
        const num = Number(a.num ?? x.shape[axis]);
        const shape = x.shape.filter((_, i) => i !== axis);
        const xs = asSym(x);
        const outsNames = Array.from({ length: num }, (_, i) => b.name(`${node.name}/split${i}`));
        b.node('Split', [xs.name], outsNames, { axis });
        const axesName = b.int64s(`${node.name}/axes`, [axis]);
        return outsNames.map((n, i) => sym(b.op('Squeeze', [n, axesName], {}, `${node.name}:${i}`), x.dtype, shape));
      }
      case 'Transpose': {
        const perm = numbers(constArg(1, 'perm'));
        if (x.kind === 'const') return [transposeConst(x, perm)];
        return [transpose(x, perm, node.name)];
      }
      case 'MatMul': {
        let [p, q] = ins as [Value, Value];
        const fix = (v: Value, t: boolean): Value => {
          if (!t) return v;
          const perm = [...v.shape.keys()];
          [perm[perm.length - 1], perm[perm.length - 2]] = [perm[perm.length - 2]!, perm[perm.length - 1]!];
          return v.kind === 'const' ? transposeConst(v, perm) : transpose(v, perm, `${node.name}/t`);
        };
        p = fix(p, Boolean(a.transpose_a));
        q = fix(q, Boolean(a.transpose_b));
        const shape = [...p.shape.slice(0, -1), q.shape[q.shape.length - 1]!];
        return [sym(b.op('MatMul', [tensorName(p, `${node.name}/a`), tensorName(q, `${node.name}/b`)], {}, node.name), p.dtype, shape)];
      }
      case 'ArgMax': {
        let axis = numbers(constArg(1, 'dimension'))[0]!;
        if (axis < 0) axis += x.shape.length;
        const shape = x.shape.filter((_, i) => i !== axis);
        const y = b.op('ArgMax', [asSym(x).name], { axis, keepdims: 0 }, `${node.name}/i64`);
        const out = (a.output_type as DType) ?? 'int64';
        if (out === 'int64') return [sym(y, 'int64', shape)];
        return [sym(b.op('Cast', [y], { to: onnxTypeCode(out) }, node.name), out, shape)];
      }
      case 'GatherNd': {
        const [params, idx] = ins as [Value, Value];
        const idx64 = idx.kind === 'const' ? tensorName(castConst(idx, 'int64'), `${node.name}/idx`) : b.op('Cast', [idx.name], { to: onnxTypeCode('int64') });
        const k = idx.shape[idx.shape.length - 1]!;
        const shape = [...idx.shape.slice(0, -1), ...params.shape.slice(k)];
        return [sym(b.op('GatherND', [tensorName(params, `${node.name}/params`), idx64], {}, node.name), params.dtype, shape)];
      }
      case 'Shape': {
        const out = (a.out_type as DType) ?? 'int32';
        return [castConst(constOf('int32', [x.shape.length], Int32Array.from(x.shape)), out)];
      }
      case 'StridedSlice': {
        const spec = resolveStridedSlice(node, x.shape, numbers(constArg(1, 'begin')), numbers(constArg(2, 'end')), numbers(constArg(3, 'strides')));
        if (x.kind === 'const') return [sliceConst(x, spec)];
        const y = b.op('Slice', [x.name, b.int64s(`${node.name}/starts`, spec.starts), b.int64s(`${node.name}/ends`, spec.ends), b.int64s(`${node.name}/axes`, spec.starts.map((_, i) => i)), b.int64s(`${node.name}/steps`, spec.steps)], {}, `${node.name}/slice`);
        const shape = spec.outShape.filter((_, d) => !spec.shrink.includes(d));
        if (!spec.shrink.length) return [sym(y, x.dtype, spec.outShape)];
        return [sym(b.op('Squeeze', [y, b.int64s(`${node.name}/shrink`, spec.shrink)], {}, node.name), x.dtype, shape)];
      }
      default:
        throw new UnsupportedOpError(node.op, node.name);
    }
  }

  function spatial(node: TfNode, key: 'strides' | 'dilations' | 'ksize'): [number, number] {
    const v = (node.attr[key] as number[] | undefined) ?? [1, 1, 1, 1];
    if ((node.attr.data_format ?? 'NHWC') !== 'NHWC') throw new UnsupportedOpError(node.op, node.name, `data_format ${node.attr.data_format}`);
    return [v[1]!, v[2]!];
  }

  function paddingOf(node: TfNode, inHW: [number, number], k: [number, number], s: [number, number], d: [number, number]): [[number, number], [number, number]] {
    const p = String(node.attr.padding ?? 'VALID');
    if (p === 'VALID') return [[0, 0], [0, 0]];
    if (p === 'SAME') return [samePads(inHW[0], k[0], s[0], d[0]), samePads(inHW[1], k[1], s[1], d[1])];
    if (p === 'EXPLICIT') {
      const e = node.attr.explicit_paddings as number[];
      return [[e[2]!, e[3]!], [e[4]!, e[5]!]];
    }
    throw new UnsupportedOpError(node.op, node.name, `padding ${p}`);
  }

  /** Conv2D / DepthwiseConv2dNative and their fused forms (BiasAdd + activation). */
  function convolution(node: TfNode, ins: Value[]): Sym {
    const depthwise = node.op.includes('Depthwise');
    const xs = ins[0]!.kind === 'sym' ? (ins[0] as Sym) : sym(tensorName(ins[0]!, `${node.name}/x`), ins[0]!.dtype, ins[0]!.shape);
    const filter = ins[1];
    if (!filter || filter.kind !== 'const') throw new UnsupportedOpError(node.op, node.name, 'filter must be constant');
    const [kh, kw, cin, m] = filter.shape as [number, number, number, number];
    // TF HWIO (depthwise: H, W, C, multiplier) -> ONNX OIHW (depthwise: C*multiplier, 1, H, W).
    const weight = depthwise
      ? constOf('float32', [cin * m, 1, kh, kw], transposeConst(filter, [2, 3, 0, 1]).data)
      : transposeConst(filter, [3, 2, 0, 1]);
    const s = spatial(node, 'strides');
    const d = spatial(node, 'dilations');
    const inHW: [number, number] = [xs.shape[1]!, xs.shape[2]!];
    const pads = paddingOf(node, inHW, [kh, kw], s, d);
    const fused = (node.attr.fused_ops as string[] | undefined) ?? [];
    const args = [transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`).name, tensorName(weight, `${node.name}/W`)];
    let act: string | undefined;
    if (fused.length) {
      if (fused[0] !== 'BiasAdd' || fused.length > 2) throw new UnsupportedOpError(node.op, node.name, `fused_ops [${fused.join(', ')}]`);
      args.push(tensorName(ins[2]!, `${node.name}/B`));
      act = fused[1];
    }
    const outC = depthwise ? cin * m : weight.shape[0]!;
    const oh = convOut(inHW[0], kh, s[0], d[0], pads[0]);
    const ow = convOut(inHW[1], kw, s[1], d[1], pads[1]);
    const y = b.op('Conv', args, {
      kernel_shape: [kh, kw],
      strides: s,
      dilations: d,
      pads: [pads[0][0], pads[1][0], pads[0][1], pads[1][1]],
      group: depthwise ? cin : 1,
    }, `${node.name}/conv`);
    const out = transpose(sym(y, 'float32', [xs.shape[0]!, outC, oh, ow]), NCHW_TO_NHWC, `${node.name}/nhwc`);
    return activation(node, act, out, ins[3]);
  }

  /** An activation, standalone or fused into a convolution. */
  function activation(node: TfNode, act: string | undefined, x: Sym, alpha?: Value): Sym {
    if (!act) return x;
    const out = (op: string, extra: string[] = [], attrs = {}) => sym(b.op(op, [x.name, ...extra], attrs, node.name), x.dtype, x.shape);
    switch (act) {
      case 'Relu':
        return out('Relu');
      case 'Relu6':
        return out('Clip', [b.initializer('zero', 'float32', [], new Float32Array([0])), b.initializer('six', 'float32', [], new Float32Array([6]))]);
      case 'Prelu':
        if (!alpha) throw new UnsupportedOpError(node.op, node.name, 'Prelu without alpha');
        return prelu(x, alpha, node.name);
      case 'LeakyRelu':
        // Fused convolutions carry the slope as leakyrelu_alpha, the op itself as alpha.
        return out('LeakyRelu', [], { alpha: { float: Number(node.attr.leakyrelu_alpha ?? node.attr.alpha ?? 0.2) } });
      case 'Sigmoid':
        return out('Sigmoid');
      case 'Elu':
        return out('Elu');
      case 'Tanh':
        return out('Tanh');
      default:
        throw new UnsupportedOpError(node.op, node.name, `fused activation ${act}`);
    }
  }

  /**
   * PReLU as max(x, 0) + alpha * min(x, 0): onnxruntime's blocked (NCHWc) CPU layout covers these
   * ops but not PRelu, which made it convert layouts around every PRelu.
   */
  function prelu(x: Sym, alpha: Value, base: string): Sym {
    const zero = b.initializer('zero', 'float32', [], new Float32Array([0]));
    const pos = b.op('Max', [x.name, zero], {}, `${base}/pos`);
    const neg = b.op('Min', [x.name, zero], {}, `${base}/neg`);
    const scaled = b.op('Mul', [neg, tensorName(alpha, `${base}/alpha`)], {}, `${base}/scaled`);
    return sym(b.op('Add', [pos, scaled], {}, base), x.dtype, x.shape);
  }

  function convTranspose(node: TfNode, ins: Value[]): Sym {
    const [sizesV, filter, xv] = ins as [Value, Value, Value];
    if (sizesV.kind !== 'const' || filter.kind !== 'const') throw new UnsupportedOpError(node.op, node.name, 'input_sizes and filter must be constant');
    const outShape = numbers(sizesV); // NHWC
    const xs = xv.kind === 'sym' ? xv : sym(tensorName(xv, `${node.name}/x`), xv.dtype, xv.shape);
    const [kh, kw] = filter.shape as [number, number, number, number];
    // TF filter [H, W, out, in] -> ONNX ConvTranspose [in, out, H, W].
    const weight = transposeConst(filter, [3, 2, 0, 1]);
    const s = spatial(node, 'strides');
    const d = spatial(node, 'dilations');
    const pads: number[] = [0, 0, 0, 0];
    const outputPadding = [0, 0];
    for (let i = 0; i < 2; i++) {
      const k = i === 0 ? kh : kw;
      const inSize = xs.shape[1 + i]!;
      const want = outShape[1 + i]!;
      // The forward conv's padding for (want -> inSize); ONNX then reproduces `want` exactly.
      const [before, after] = String(node.attr.padding) === 'SAME' ? samePads(want, k, s[i]!, d[i]!) : [0, 0];
      pads[i] = before;
      pads[i + 2] = after;
      const natural = s[i]! * (inSize - 1) + (k - 1) * d[i]! + 1 - before - after;
      outputPadding[i] = want - natural;
      if (outputPadding[i]! < 0 || outputPadding[i]! >= s[i]!) throw new UnsupportedOpError(node.op, node.name, `cannot produce output size ${want}`);
    }
    const y = b.op('ConvTranspose', [transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`).name, tensorName(weight, `${node.name}/W`)], {
      kernel_shape: [kh, kw],
      strides: s,
      dilations: d,
      pads,
      output_padding: outputPadding,
    }, `${node.name}/convT`);
    return transpose(sym(y, 'float32', [outShape[0]!, outShape[3]!, outShape[1]!, outShape[2]!]), NCHW_TO_NHWC, `${node.name}/nhwc`);
  }

  function pool(node: TfNode, xs: Sym): Sym {
    const k = spatial(node, 'ksize');
    const s = spatial(node, 'strides');
    const pads = paddingOf(node, [xs.shape[1]!, xs.shape[2]!], k, s, [1, 1]);
    const oh = convOut(xs.shape[1]!, k[0], s[0], 1, pads[0]);
    const ow = convOut(xs.shape[2]!, k[1], s[1], 1, pads[1]);
    const attrs: Record<string, number | number[]> = { kernel_shape: k, strides: s, pads: [pads[0][0], pads[1][0], pads[0][1], pads[1][1]] };
    // TF's SAME average pooling divides by the in-image count: ONNX count_include_pad = 0.
    if (node.op === 'AvgPool') attrs.count_include_pad = 0;
    const y = b.op(node.op === 'MaxPool' ? 'MaxPool' : 'AveragePool', [transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`).name], attrs, `${node.name}/pool`);
    return transpose(sym(y, xs.dtype, [xs.shape[0]!, xs.shape[3]!, oh, ow]), NCHW_TO_NHWC, `${node.name}/nhwc`);
  }
}

function onnxTypeCode(t: DType): number {
  return { float32: 1, int32: 6, int64: 7, bool: 9 }[t];
}
