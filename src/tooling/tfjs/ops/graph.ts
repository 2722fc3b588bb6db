// Graph plumbing: constants (weights), inputs, and pass-through ops.
import type { OnnxDType } from '../../onnx-builder.ts';
import { UnsupportedOpError, type OpHandler } from '../context.ts';
import type { DType } from '../reader.ts';
import { constOf, numbers, sym, type Sym } from '../values.ts';

const constant: OpHandler = (node, _ins, ctx) => {
  const w = ctx.source.weights.get(node.name);
  if (!w) throw new Error(`Const ${node.name} has no weight data`);
  return [constOf(w.dtype, w.shape, w.data)];
};

/** A graph input with a static shape: the version's, else the model's with batch 1. */
const placeholder: OpHandler = (node, _ins, ctx) => {
  const declared = ctx.source.placeholders.get(node.name) ?? [];
  const shape = ctx.inputShapes[node.name] ?? declared.map((d, i) => (d < 0 ? (i === 0 ? 1 : -1) : d));
  if (shape.some((d) => d < 0)) throw new Error(`input ${node.name} has unknown dims [${shape}]; give inputShapes`);
  const dtype = (node.attr.dtype as DType) ?? 'float32';
  ctx.builder.input(node.name, dtype as OnnxDType, shape);
  ctx.inputs.push({ name: node.name, dtype, shape });
  return [sym(node.name, dtype, shape)];
};

const identity: OpHandler = (_node, ins) => [ins[0]!];

/**
 * The untaken output of a Switch. Control flow is resolved at import: a Switch's predicate must be
 * constant (e.g. RVM's `downsample_ratio == 1`, with the ratio fixed by the version), the converter
 * skips every node fed by this value, and Merge passes on its one live input.
 */
export const DEAD_BRANCH: Sym = Object.freeze(sym('<untaken branch>', 'float32', [])) as Sym;

/** Switch(data, pred): output 0 carries data when pred is false, output 1 when it is true. */
const switchOp: OpHandler = (node, ins, ctx) => {
  const taken = numbers(ctx.constArg(node, ins, 1, 'predicate'))[0] !== 0;
  return taken ? [DEAD_BRANCH, ins[0]!] : [ins[0]!, DEAD_BRANCH];
};

/** Merge: the one input on the taken branch, and its index. */
const merge: OpHandler = (node, ins) => {
  const live = ins.findIndex((v) => v !== DEAD_BRANCH);
  if (live < 0 || ins.some((v, i) => i !== live && v !== DEAD_BRANCH)) throw new UnsupportedOpError(node.op, node.name, 'needs exactly one live input (a constant Switch predicate)');
  return [ins[live]!, constOf('int32', [], Int32Array.of(live))];
};

export const GRAPH_OPS: Record<string, OpHandler> = {
  Const: constant,
  Placeholder: placeholder,
  Identity: identity,
  StopGradient: identity,
  Switch: switchOp,
  Merge: merge,
};
