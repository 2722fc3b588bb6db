// Shape and indexing ops. Shapes are static here, so Shape is a constant and the shape arithmetic
// after it (StridedSlice, Pack, Reshape of constants ...) folds away in JS; on symbolic tensors
// these map to the ONNX op of the same meaning with constant shape/axes inputs.
import { UnsupportedOpError, type OpHandler } from '../context.ts';
import type { DType, TfNode } from '../reader.ts';
import {
  broadcastShape,
  castConst,
  concatConsts,
  constOf,
  evalBinary,
  newData,
  numbers,
  onnxTypeCode,
  size,
  sliceConst,
  sym,
  transposeConst,
  type Const,
  type SliceSpec,
  type Value,
} from '../values.ts';

/**
 * Reshape to a constant shape. In an import at batch N > 1, a target that hard-codes the export's
 * batch 1 ([1, 384, 1]) cannot hold the input; it is read as [N, 384, 1]. At batch 1 (every pinned
 * graph) nothing changes.
 */
const reshape: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  let want = numbers(ctx.constArg(node, ins, 1, 'shape'));
  const n = ctx.batchSize;
  if (n > 1 && want[0] === 1 && !want.includes(-1) && want.reduce((s, d) => s * d, 1) * n === size(x.shape)) want = [n, ...want.slice(1)];
  const known = want.filter((d) => d >= 0).reduce((s, d) => s * d, 1);
  const shape = want.map((d) => (d < 0 ? size(x.shape) / known : d));
  if (x.kind === 'const') return [constOf(x.dtype, shape, x.data)];
  return [sym(ctx.builder.op('Reshape', [x.name, ctx.builder.int64s(`${node.name}/shape`, shape)], {}, node.name), x.dtype, shape)];
};

const squeeze: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const dims = (node.attr.squeeze_dims as number[] | undefined) ?? [];
  const axes = (dims.length ? dims : x.shape.flatMap((d, i) => (d === 1 ? [i] : []))).map((d) => (d < 0 ? d + x.shape.length : d));
  const shape = x.shape.filter((_, i) => !axes.includes(i));
  if (x.kind === 'const') return [constOf(x.dtype, shape, x.data)];
  return [sym(ctx.builder.op('Squeeze', [x.name, ctx.builder.int64s(`${node.name}/axes`, axes)], {}, node.name), x.dtype, shape)];
};

const expandDims: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  let axis = numbers(ctx.constArg(node, ins, 1, 'axis'))[0]!;
  if (axis < 0) axis += x.shape.length + 1;
  const shape = [...x.shape.slice(0, axis), 1, ...x.shape.slice(axis)];
  if (x.kind === 'const') return [constOf(x.dtype, shape, x.data)];
  return [sym(ctx.builder.op('Unsqueeze', [x.name, ctx.builder.int64s(`${node.name}/axes`, [axis])], {}, node.name), x.dtype, shape)];
};

/** Pack: stack along a new axis (ONNX: Unsqueeze each, then Concat). */
const pack: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  let axis = Number(node.attr.axis ?? 0);
  if (axis < 0) axis += x.shape.length + 1;
  const shape = [...x.shape.slice(0, axis), ins.length, ...x.shape.slice(axis)];
  if (ins.every((v) => v.kind === 'const')) {
    const parts = (ins as Const[]).map((c) => constOf(c.dtype, [...c.shape.slice(0, axis), 1, ...c.shape.slice(axis)], c.data));
    return [constOf(x.dtype, shape, concatConsts(parts, axis).data)];
  }
  const axesName = ctx.builder.int64s(`${node.name}/axes`, [axis]);
  const parts = ins.map((v, i) => ctx.builder.op('Unsqueeze', [ctx.tensorName(v, `${node.name}/${i}`), axesName]));
  return [sym(ctx.builder.op('Concat', parts, { axis }, node.name), x.dtype, shape)];
};

/** Unpack: one output per slice along an axis (ONNX: Split, then Squeeze each). */
const unpack: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const b = ctx.builder;
  let axis = Number(node.attr.axis ?? 0);
  if (axis < 0) axis += x.shape.length;
  const num = Number(node.attr.num ?? x.shape[axis]);
  const shape = x.shape.filter((_, i) => i !== axis);
  const xs = ctx.asSym(x, `${node.name}/const`);
  const outsNames = Array.from({ length: num }, (_, i) => b.name(`${node.name}/split${i}`));
  b.node('Split', [xs.name], outsNames, { axis });
  const axesName = b.int64s(`${node.name}/axes`, [axis]);
  return outsNames.map((n, i) => sym(b.op('Squeeze', [n, axesName], {}, `${node.name}:${i}`), x.dtype, shape));
};

const transpose: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const perm = numbers(ctx.constArg(node, ins, 1, 'perm'));
  if (x.kind === 'const') return [transposeConst(x, perm)];
  return [ctx.transpose(x, perm, node.name)];
};

/** ConcatV2: the axis is the last input. */
const concat: OpHandler = (node, ins, ctx) => {
  const parts = ins.slice(0, -1);
  let axis = numbers(ctx.constArg(node, ins, ins.length - 1, 'axis'))[0]!;
  if (axis < 0) axis += parts[0]!.shape.length;
  const shape = [...parts[0]!.shape];
  shape[axis] = parts.reduce((s, p) => s + p.shape[axis]!, 0);
  if (parts.every((p) => p.kind === 'const')) return [concatConsts(parts as Const[], axis)];
  return [sym(ctx.builder.op('Concat', parts.map((p, i) => ctx.tensorName(p, `${node.name}/${i}`)), { axis }, node.name), ins[0]!.dtype, shape)];
};

/** Pad / PadV2 (constant value input) / MirrorPad (REFLECT only: ONNX has no SYMMETRIC). */
const pad: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const p = numbers(ctx.constArg(node, ins, 1, 'paddings'));
  const begins = x.shape.map((_, i) => p[2 * i]!);
  const ends = x.shape.map((_, i) => p[2 * i + 1]!);
  const shape = x.shape.map((d, i) => d + begins[i]! + ends[i]!);
  const mode = node.op === 'MirrorPad' ? String(node.attr.mode).toLowerCase() : 'constant';
  if (mode !== 'constant' && mode !== 'reflect') throw new UnsupportedOpError(node.op, node.name, `mode ${node.attr.mode}`);
  const args = [ctx.asSym(x, `${node.name}/const`).name, ctx.builder.int64s(`${node.name}/pads`, [...begins, ...ends])];
  if (node.op === 'PadV2') args.push(ctx.tensorName(ins[2]!, `${node.name}/value`));
  return [sym(ctx.builder.op('Pad', args, { mode }, node.name), x.dtype, shape)];
};

/** Shape: always a constant (every shape is static), so no ONNX Shape node is emitted. */
const shapeOp: OpHandler = (node, ins) => {
  const x = ins[0]!;
  const out = (node.attr.out_type as DType) ?? 'int32';
  return [castConst(constOf('int32', [x.shape.length], Int32Array.from(x.shape)), out)];
};

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

const stridedSlice: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const b = ctx.builder;
  const spec = resolveStridedSlice(node, x.shape, numbers(ctx.constArg(node, ins, 1, 'begin')), numbers(ctx.constArg(node, ins, 2, 'end')), numbers(ctx.constArg(node, ins, 3, 'strides')));
  if (x.kind === 'const') return [sliceConst(x, spec)];
  const y = b.op('Slice', [x.name, b.int64s(`${node.name}/starts`, spec.starts), b.int64s(`${node.name}/ends`, spec.ends), b.int64s(`${node.name}/axes`, spec.starts.map((_, i) => i)), b.int64s(`${node.name}/steps`, spec.steps)], {}, `${node.name}/slice`);
  const shape = spec.outShape.filter((_, d) => !spec.shrink.includes(d));
  if (!spec.shrink.length) return [sym(y, x.dtype, spec.outShape)];
  return [sym(b.op('Squeeze', [y, b.int64s(`${node.name}/shrink`, spec.shrink)], {}, node.name), x.dtype, shape)];
};

/** GatherNd: ONNX GatherND wants int64 indices. */
const gatherNd: OpHandler = (node, ins, ctx) => {
  const [params, idx] = ins as [Value, Value];
  const idx64 = idx.kind === 'const' ? ctx.tensorName(castConst(idx, 'int64'), `${node.name}/idx`) : ctx.builder.op('Cast', [idx.name], { to: onnxTypeCode('int64') });
  const k = idx.shape[idx.shape.length - 1]!;
  const shape = [...idx.shape.slice(0, -1), ...params.shape.slice(k)];
  return [sym(ctx.builder.op('GatherND', [ctx.tensorName(params, `${node.name}/params`), idx64], {}, node.name), params.dtype, shape)];
};

/** Splits `x` along `axis` into parts of the given sizes (sliced in JS when constant, else ONNX Split). */
function splitInto(node: TfNode, x: Value, axis: number, sizes: number[], ctx: Parameters<OpHandler>[2]): Value[] {
  const shapes = sizes.map((n) => x.shape.map((d, i) => (i === axis ? n : d)));
  if (x.kind === 'const') {
    let at = 0;
    return shapes.map((shape) => {
      const starts = x.shape.map((_, i) => (i === axis ? at : 0));
      at += shape[axis]!;
      return sliceConst(x, { starts, ends: starts.map((s, i) => s + shape[i]!), steps: shape.map(() => 1), outShape: shape, shrink: [] });
    });
  }
  const b = ctx.builder;
  const names = sizes.map((_, i) => b.name(`${node.name}:${i}`));
  b.node('Split', [x.name, b.int64s(`${node.name}/split`, sizes)], names, { axis });
  return names.map((n, i) => sym(n, x.dtype, shapes[i]!));
}

/** Split(split_dim, value): num_split equal parts. */
const split: OpHandler = (node, ins, ctx) => {
  const x = ins[1]!;
  let axis = numbers(ctx.constArg(node, ins, 0, 'split_dim'))[0]!;
  if (axis < 0) axis += x.shape.length;
  const num = Number(node.attr.num_split);
  if (x.shape[axis]! % num) throw new UnsupportedOpError(node.op, node.name, `${x.shape[axis]} does not split in ${num}`);
  return splitInto(node, x, axis, new Array<number>(num).fill(x.shape[axis]! / num), ctx);
};

/** SplitV(value, size_splits, split_dim): one size may be -1 (the rest). */
const splitV: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  let axis = numbers(ctx.constArg(node, ins, 2, 'split_dim'))[0]!;
  if (axis < 0) axis += x.shape.length;
  const sizes = numbers(ctx.constArg(node, ins, 1, 'size_splits'));
  const known = sizes.filter((n) => n >= 0).reduce((a, n) => a + n, 0);
  return splitInto(node, x, axis, sizes.map((n) => (n < 0 ? x.shape[axis]! - known : n)), ctx);
};

/** Slice(x, begin, size): size -1 runs to the end of the axis. */
const slice: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const begin = numbers(ctx.constArg(node, ins, 1, 'begin'));
  const len = numbers(ctx.constArg(node, ins, 2, 'size')).map((n, i) => (n < 0 ? x.shape[i]! - begin[i]! : n));
  const spec: SliceSpec = { starts: begin, ends: begin.map((s, i) => s + len[i]!), steps: begin.map(() => 1), outShape: len, shrink: [] };
  if (x.kind === 'const') return [sliceConst(x, spec)];
  const b = ctx.builder;
  const args = [x.name, b.int64s(`${node.name}/starts`, spec.starts), b.int64s(`${node.name}/ends`, spec.ends), b.int64s(`${node.name}/axes`, begin.map((_, i) => i))];
  return [sym(b.op('Slice', args, {}, node.name), x.dtype, len)];
};

/**
 * BroadcastTo(x, shape): ONNX Expand. A constant is expanded in the graph, not in JS, unless tiny:
 * RVM broadcasts its zero recurrent states to feature-map size, which would otherwise be stored.
 */
const broadcastTo: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const want = numbers(ctx.constArg(node, ins, 1, 'shape'));
  const shape = broadcastShape(x.shape, want, node.name);
  if (x.kind === 'const' && size(shape) <= 64) return [evalBinary(x, constOf(x.dtype, shape, newData(x.dtype, size(shape))), (u) => u, node.name)];
  return [sym(ctx.builder.op('Expand', [ctx.tensorName(x, `${node.name}/x`), ctx.builder.int64s(`${node.name}/shape`, shape)], {}, node.name), x.dtype, shape)];
};

/** SpaceToBatchND / BatchToSpaceND operands: the NHWC input, its 2-D block, and the 4 paddings or crops. */
function blockArgs(node: TfNode, ins: Value[], ctx: Parameters<OpHandler>[2], third: 'paddings' | 'crops') {
  const x = ctx.asSym(ins[0]!, `${node.name}/x`);
  const [bh, bw] = numbers(ctx.constArg(node, ins, 1, 'block_shape')) as [number, number];
  const edges = numbers(ctx.constArg(node, ins, 2, third));
  if (x.shape.length !== 4 || edges.length !== 4) throw new UnsupportedOpError(node.op, node.name, 'only NHWC with a 2-D block');
  return { x, bh, bw, edges };
}

/**
 * SpaceToBatchND on NHWC with a 2-D block (TF's form of a dilated convolution's input):
 * pad, then move each (bh, bw) phase of the grid into the batch, phase-major.
 */
const spaceToBatch: OpHandler = (node, ins, ctx) => {
  const { x, bh, bw, edges: p } = blockArgs(node, ins, ctx, 'paddings');
  const [n, h, w, c] = x.shape as [number, number, number, number];
  const hp = h + p[0]! + p[1]!;
  const wp = w + p[2]! + p[3]!;
  const b = ctx.builder;
  const padded = b.op('Pad', [x.name, b.int64s(`${node.name}/pads`, [0, p[0]!, p[2]!, 0, 0, p[1]!, p[3]!, 0])], { mode: 'constant' });
  const grid = b.op('Reshape', [padded, b.int64s(`${node.name}/grid`, [n, hp / bh, bh, wp / bw, bw, c])]);
  const phases = b.op('Transpose', [grid], { perm: [2, 4, 0, 1, 3, 5] });
  const shape = [bh * bw * n, hp / bh, wp / bw, c];
  return [sym(b.op('Reshape', [phases, b.int64s(`${node.name}/shape`, shape)], {}, node.name), x.dtype, shape)];
};

/** BatchToSpaceND on NHWC with a 2-D block: the inverse interleave, then the crops. */
const batchToSpace: OpHandler = (node, ins, ctx) => {
  const { x, bh, bw, edges: cr } = blockArgs(node, ins, ctx, 'crops');
  const [nb, h, w, c] = x.shape as [number, number, number, number];
  const n = nb / (bh * bw);
  const b = ctx.builder;
  const phases = b.op('Reshape', [x.name, b.int64s(`${node.name}/phases`, [bh, bw, n, h, w, c])]);
  const grid = b.op('Transpose', [phases], { perm: [2, 3, 0, 4, 1, 5] });
  const full = b.op('Reshape', [grid, b.int64s(`${node.name}/full`, [n, h * bh, w * bw, c])]);
  const shape = [n, h * bh - cr[0]! - cr[1]!, w * bw - cr[2]! - cr[3]!, c];
  const starts = [0, cr[0]!, cr[2]!, 0];
  const args = [full, b.int64s(`${node.name}/starts`, starts), b.int64s(`${node.name}/ends`, starts.map((s, i) => s + shape[i]!)), b.int64s(`${node.name}/axes`, [0, 1, 2, 3])];
  return [sym(b.op('Slice', args, {}, node.name), x.dtype, shape)];
};

export const SHAPE_OPS: Record<string, OpHandler> = {
  Reshape: reshape,
  Squeeze: squeeze,
  ExpandDims: expandDims,
  Pack: pack,
  Unpack: unpack,
  Transpose: transpose,
  ConcatV2: concat,
  Pad: pad,
  PadV2: pad,
  MirrorPad: pad,
  Shape: shapeOp,
  StridedSlice: stridedSlice,
  GatherNd: gatherNd,
  Split: split,
  SplitV: splitV,
  Slice: slice,
  BroadcastTo: broadcastTo,
  SpaceToBatchND: spaceToBatch,
  BatchToSpaceND: batchToSpace,
};
