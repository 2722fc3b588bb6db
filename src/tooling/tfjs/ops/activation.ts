// Activations, standalone or fused into a convolution (conv.ts calls `activation`), and Softmax.
import { UnsupportedOpError, type ConvertContext, type OpHandler } from '../context.ts';
import type { TfNode } from '../reader.ts';
import { sym, type Sym, type Value } from '../values.ts';

/** Applies activation `act` (a TF op name, or none) to `x`; the result is named after `node`. */
export function activation(ctx: ConvertContext, node: TfNode, act: string | undefined, x: Sym, alpha?: Value): Sym {
  if (!act) return x;
  const b = ctx.builder;
  const out = (op: string, extra: string[] = [], attrs = {}) => sym(b.op(op, [x.name, ...extra], attrs, node.name), x.dtype, x.shape);
  switch (act) {
    case 'Relu':
      return out('Relu');
    case 'Relu6':
      return out('Clip', [b.initializer('zero', 'float32', [], new Float32Array([0])), b.initializer('six', 'float32', [], new Float32Array([6]))]);
    case 'Prelu':
      if (!alpha) throw new UnsupportedOpError(node.op, node.name, 'Prelu without alpha');
      return prelu(ctx, x, alpha, node.name);
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
function prelu(ctx: ConvertContext, x: Sym, alpha: Value, base: string): Sym {
  const b = ctx.builder;
  const zero = b.initializer('zero', 'float32', [], new Float32Array([0]));
  const pos = b.op('Max', [x.name, zero], {}, `${base}/pos`);
  const neg = b.op('Min', [x.name, zero], {}, `${base}/neg`);
  const scaled = b.op('Mul', [neg, ctx.tensorName(alpha, `${base}/alpha`)], {}, `${base}/scaled`);
  return sym(b.op('Add', [pos, scaled], {}, base), x.dtype, x.shape);
}

/** A standalone activation op: the same mapping as the fused form. */
const standalone: OpHandler = (node, ins, ctx) => [activation(ctx, node, node.op, ctx.asSym(ins[0]!, `${node.name}/const`), ins[1])];

const softmax: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  return [sym(ctx.builder.op('Softmax', [ctx.asSym(x, `${node.name}/const`).name], { axis: -1 }, node.name), x.dtype, x.shape)];
};

export const ACTIVATION_OPS: Record<string, OpHandler> = {
  Relu: standalone,
  Relu6: standalone,
  Sigmoid: standalone,
  Tanh: standalone,
  Elu: standalone,
  LeakyRelu: standalone,
  Prelu: standalone,
  Softmax: softmax,
};
