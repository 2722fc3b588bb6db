// Element-wise ops (broadcasting like numpy in both TF and ONNX). All-constant inputs fold in JS.
import type { OpHandler } from '../context.ts';
import type { DType } from '../reader.ts';
import { broadcastShape, castConst, constOf, evalBinary, onnxTypeCode, sym, type Const, type Value } from '../values.ts';

const allConst = (ins: Value[]) => ins.length > 0 && ins.every((v) => v.kind === 'const');

/** A two-input op: folded with `f` when both inputs are constant, else one ONNX `op`. */
const binary =
  (op: string, f: (p: number, q: number) => number): OpHandler =>
  (node, ins, ctx) => {
    const [p, q] = ins as [Value, Value];
    if (p.kind === 'const' && q.kind === 'const') return [evalBinary(p, q, f, node.name)];
    const shape = broadcastShape(p.shape, q.shape, node.name);
    return [sym(ctx.builder.op(op, [ctx.tensorName(p, `${node.name}/a`), ctx.tensorName(q, `${node.name}/b`)], {}, node.name), p.dtype, shape)];
  };

/** A one-input op mapped to the ONNX op of the same meaning. */
const unary =
  (op: string): OpHandler =>
  (node, ins, ctx) => {
    const x = ins[0]!;
    return [sym(ctx.builder.op(op, [ctx.asSym(x, `${node.name}/const`).name], {}, node.name), x.dtype, x.shape)];
  };

const add = binary('Add', (p, q) => p + q);

const floorDiv: OpHandler = (node, ins, ctx) => {
  const [p, q] = ins as [Value, Value];
  if (allConst(ins)) return [evalBinary(p as Const, q as Const, (u, v) => Math.floor(u / v), node.name)];
  const b = ctx.builder;
  const shape = broadcastShape(p.shape, q.shape, node.name);
  const pn = ctx.tensorName(p, `${node.name}/a`);
  const qn = ctx.tensorName(q, `${node.name}/b`);
  if (p.dtype === 'float32') return [sym(b.op('Floor', [b.op('Div', [pn, qn])], {}, node.name), p.dtype, shape)];
  // Integer floor division for any sign: (p - mod(p, q)) / q, with the divisor's sign (fmod 0).
  const mod = b.op('Mod', [pn, qn], { fmod: 0 });
  return [sym(b.op('Div', [b.op('Sub', [pn, mod]), qn], {}, node.name), p.dtype, shape)];
};

/** FloorMod: the remainder with the divisor's sign (Python's %), for integers and floats. */
const floorMod: OpHandler = (node, ins, ctx) => {
  const [p, q] = ins as [Value, Value];
  if (allConst(ins)) return [evalBinary(p as Const, q as Const, (u, v) => u - Math.floor(u / v) * v, node.name)];
  const b = ctx.builder;
  const shape = broadcastShape(p.shape, q.shape, node.name);
  const pn = ctx.tensorName(p, `${node.name}/a`);
  const qn = ctx.tensorName(q, `${node.name}/b`);
  if (p.dtype !== 'float32') return [sym(b.op('Mod', [pn, qn], { fmod: 0 }, node.name), p.dtype, shape)];
  // ONNX Mod on floats is C's fmod (dividend's sign): p - floor(p / q) * q instead.
  return [sym(b.op('Sub', [pn, b.op('Mul', [b.op('Floor', [b.op('Div', [pn, qn])]), qn])], {}, node.name), p.dtype, shape)];
};

/** Equal: a bool tensor (folded to a bool constant, e.g. a Switch predicate on a fixed input). */
const equal: OpHandler = (node, ins, ctx) => {
  const [p, q] = ins as [Value, Value];
  if (allConst(ins)) return [castConst(evalBinary(castConst(p as Const, 'float32'), castConst(q as Const, 'float32'), (u, v) => (u === v ? 1 : 0), node.name), 'bool')];
  const shape = broadcastShape(p.shape, q.shape, node.name);
  return [sym(ctx.builder.op('Equal', [ctx.tensorName(p, `${node.name}/a`), ctx.tensorName(q, `${node.name}/b`)], {}, node.name), 'bool', shape)];
};

const square: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  if (x.kind === 'const') return [evalBinary(x, x, (u, v) => u * v, node.name)];
  return [sym(ctx.builder.op('Mul', [x.name, x.name], {}, node.name), x.dtype, x.shape)];
};

const squaredDifference: OpHandler = (node, ins, ctx) => {
  const [p, q] = ins as [Value, Value];
  if (allConst(ins)) return [evalBinary(p as Const, q as Const, (u, v) => (u - v) * (u - v), node.name)];
  const b = ctx.builder;
  const d = b.op('Sub', [ctx.tensorName(p, `${node.name}/a`), ctx.tensorName(q, `${node.name}/b`)]);
  return [sym(b.op('Mul', [d, d], {}, node.name), p.dtype, broadcastShape(p.shape, q.shape, node.name))];
};

const addN: OpHandler = (node, ins, ctx) => {
  if (ins.length === 1) return [ins[0]!];
  const shape = ins.map((v) => v.shape).reduce((s, t) => broadcastShape(s, t, node.name));
  return [sym(ctx.builder.op('Sum', ins.map((v, i) => ctx.tensorName(v, `${node.name}/${i}`)), {}, node.name), ins[0]!.dtype, shape)];
};

const neg: OpHandler = (node, ins, ctx) =>
  allConst(ins) ? [evalBinary(ins[0] as Const, constOf('float32', [], new Float32Array([0])), (p) => -p, node.name)] : unary('Neg')(node, ins, ctx);

const rsqrt: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const b = ctx.builder;
  return [sym(b.op('Reciprocal', [b.op('Sqrt', [ctx.asSym(x, `${node.name}/const`).name])], {}, node.name), x.dtype, x.shape)];
};

const cast: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const to = (node.attr.DstT as DType) ?? 'float32';
  if (x.kind === 'const') return [castConst(x, to)];
  return [sym(ctx.builder.op('Cast', [x.name], { to: onnxTypeCode(to) }, node.name), to, x.shape)];
};

export const ELEMENTWISE_OPS: Record<string, OpHandler> = {
  Add: add,
  AddV2: add,
  BiasAdd: add,
  Sub: binary('Sub', (p, q) => p - q),
  Mul: binary('Mul', (p, q) => p * q),
  RealDiv: binary('Div', (p, q) => p / q),
  Maximum: binary('Max', Math.max),
  Minimum: binary('Min', Math.min),
  FloorDiv: floorDiv,
  FloorMod: floorMod,
  Equal: equal,
  Square: square,
  SquaredDifference: squaredDifference,
  AddN: addN,
  Sqrt: unary('Sqrt'),
  Exp: unary('Exp'),
  Neg: neg,
  Rsqrt: rsqrt,
  Cast: cast,
};
