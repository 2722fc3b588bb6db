// Graph plumbing: constants (weights), inputs, and pass-through ops.
import type { OnnxDType } from '../../onnx-builder.ts';
import type { OpHandler } from '../context.ts';
import type { DType } from '../reader.ts';
import { constOf, sym } from '../values.ts';

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

export const GRAPH_OPS: Record<string, OpHandler> = {
  Const: constant,
  Placeholder: placeholder,
  Identity: identity,
  StopGradient: identity,
};
