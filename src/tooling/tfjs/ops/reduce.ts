// Reductions and contractions: Mean, ArgMax, MatMul.
import type { OpHandler } from '../context.ts';
import type { DType } from '../reader.ts';
import { numbers, onnxTypeCode, sym, transposeConst, type Value } from '../values.ts';

const mean: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const axes = numbers(ctx.constArg(node, ins, 1, 'reduction axes')).map((d) => (d < 0 ? d + x.shape.length : d));
  const keep = Boolean(node.attr.keep_dims);
  const shape = x.shape.flatMap((d, i) => (axes.includes(i) ? (keep ? [1] : []) : [d]));
  return [sym(ctx.builder.op('ReduceMean', [ctx.asSym(x, `${node.name}/const`).name], { axes, keepdims: keep ? 1 : 0 }, node.name), x.dtype, shape)];
};

/** ArgMax: ONNX yields int64; TF's output_type int32 adds a Cast. */
const argMax: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const b = ctx.builder;
  let axis = numbers(ctx.constArg(node, ins, 1, 'dimension'))[0]!;
  if (axis < 0) axis += x.shape.length;
  const shape = x.shape.filter((_, i) => i !== axis);
  const y = b.op('ArgMax', [ctx.asSym(x, `${node.name}/const`).name], { axis, keepdims: 0 }, `${node.name}/i64`);
  const out = (node.attr.output_type as DType) ?? 'int64';
  if (out === 'int64') return [sym(y, 'int64', shape)];
  return [sym(b.op('Cast', [y], { to: onnxTypeCode(out) }, node.name), out, shape)];
};

/** MatMul; transpose_a / transpose_b swap the last two axes first (in JS for constants). */
const matMul: OpHandler = (node, ins, ctx) => {
  let [p, q] = ins as [Value, Value];
  const fix = (v: Value, t: boolean): Value => {
    if (!t) return v;
    const perm = [...v.shape.keys()];
    [perm[perm.length - 1], perm[perm.length - 2]] = [perm[perm.length - 2]!, perm[perm.length - 1]!];
    return v.kind === 'const' ? transposeConst(v, perm) : ctx.transpose(v, perm, `${node.name}/t`);
  };
  p = fix(p, Boolean(node.attr.transpose_a));
  q = fix(q, Boolean(node.attr.transpose_b));
  const shape = [...p.shape.slice(0, -1), q.shape[q.shape.length - 1]!];
  return [sym(ctx.builder.op('MatMul', [ctx.tensorName(p, `${node.name}/a`), ctx.tensorName(q, `${node.name}/b`)], {}, node.name), p.dtype, shape)];
};

export const REDUCE_OPS: Record<string, OpHandler> = {
  Mean: mean,
  ArgMax: argMax,
  MatMul: matMul,
};
