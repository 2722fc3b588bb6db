// Sliding-window ops: convolutions (plain, depthwise, fused with BiasAdd + activation), transposed
// convolution and pooling. TF runs them NHWC, ONNX NCHW only: each is wrapped in
// Transpose(NHWC->NCHW) ... Transpose(NCHW->NHWC), which onnxruntime's transpose optimizer cancels
// between neighbours. TF SAME padding becomes explicit pads computed from the static input size.
import { NCHW_TO_NHWC, NHWC_TO_NCHW, UnsupportedOpError, type OpHandler } from '../context.ts';
import type { TfNode } from '../reader.ts';
import { constOf, numbers, sym, transposeConst, type Sym, type Value } from '../values.ts';
import { activation } from './activation.ts';

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

/** The H and W entries of an NHWC attribute (strides, dilations, ksize). */
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
const convolution: OpHandler = (node, ins, ctx) => {
  const b = ctx.builder;
  const depthwise = node.op.includes('Depthwise');
  const xs = ctx.asSym(ins[0]!, `${node.name}/x`);
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
  const args = [ctx.transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`).name, ctx.tensorName(weight, `${node.name}/W`)];
  let act: string | undefined;
  if (fused.length) {
    if (fused[0] !== 'BiasAdd' || fused.length > 2) throw new UnsupportedOpError(node.op, node.name, `fused_ops [${fused.join(', ')}]`);
    args.push(ctx.tensorName(ins[2]!, `${node.name}/B`));
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
  const out = ctx.transpose(sym(y, 'float32', [xs.shape[0]!, outC, oh, ow]), NCHW_TO_NHWC, `${node.name}/nhwc`);
  return [activation(ctx, node, act, out, ins[3])];
};

/** Conv2DBackpropInput (inputs: output size, filter, x) as ONNX ConvTranspose with output_padding. */
const convTranspose: OpHandler = (node, ins, ctx) => {
  const [sizesV, filter, xv] = ins as [Value, Value, Value];
  if (sizesV.kind !== 'const' || filter.kind !== 'const') throw new UnsupportedOpError(node.op, node.name, 'input_sizes and filter must be constant');
  const outShape = numbers(sizesV); // NHWC
  const xs = ctx.asSym(xv, `${node.name}/x`);
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
  const y = ctx.builder.op('ConvTranspose', [ctx.transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`).name, ctx.tensorName(weight, `${node.name}/W`)], {
    kernel_shape: [kh, kw],
    strides: s,
    dilations: d,
    pads,
    output_padding: outputPadding,
  }, `${node.name}/convT`);
  return [ctx.transpose(sym(y, 'float32', [outShape[0]!, outShape[3]!, outShape[1]!, outShape[2]!]), NCHW_TO_NHWC, `${node.name}/nhwc`)];
};

/** MaxPool / AvgPool. */
const pool: OpHandler = (node, ins, ctx) => {
  const xs: Sym = ctx.asSym(ins[0]!, `${node.name}/const`);
  const k = spatial(node, 'ksize');
  const s = spatial(node, 'strides');
  const pads = paddingOf(node, [xs.shape[1]!, xs.shape[2]!], k, s, [1, 1]);
  const oh = convOut(xs.shape[1]!, k[0], s[0], 1, pads[0]);
  const ow = convOut(xs.shape[2]!, k[1], s[1], 1, pads[1]);
  const attrs: Record<string, number | number[]> = { kernel_shape: k, strides: s, pads: [pads[0][0], pads[1][0], pads[0][1], pads[1][1]] };
  // TF's SAME average pooling divides by the in-image count: ONNX count_include_pad = 0.
  if (node.op === 'AvgPool') attrs.count_include_pad = 0;
  const y = ctx.builder.op(node.op === 'MaxPool' ? 'MaxPool' : 'AveragePool', [ctx.transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`).name], attrs, `${node.name}/pool`);
  return [ctx.transpose(sym(y, xs.dtype, [xs.shape[0]!, xs.shape[3]!, oh, ow]), NCHW_TO_NHWC, `${node.name}/nhwc`)];
};

export const CONV_OPS: Record<string, OpHandler> = {
  Conv2D: convolution,
  _FusedConv2D: convolution,
  DepthwiseConv2dNative: convolution,
  FusedDepthwiseConv2dNative: convolution,
  Conv2DBackpropInput: convTranspose,
  MaxPool: pool,
  AvgPool: pool,
};
