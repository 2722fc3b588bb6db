// Spatial resampling: ResizeBilinear / ResizeNearestNeighbor (ONNX Resize) and DepthToSpace. Both
// are NCHW in ONNX, so wrapped in NHWC <-> NCHW transposes like the convolutions.
import { NCHW_TO_NHWC, NHWC_TO_NCHW, UnsupportedOpError, type OpHandler } from '../context.ts';
import { numbers, sym } from '../values.ts';

/** TF's align_corners / half_pixel_centers map to ONNX coordinate_transformation_mode. */
const resize: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const a = node.attr;
  const [h, w] = numbers(ctx.constArg(node, ins, 1, 'size'));
  const xs = ctx.asSym(x, `${node.name}/const`);
  const nchw = ctx.transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`);
  const align = Boolean(a.align_corners);
  const half = Boolean(a.half_pixel_centers);
  const linear = node.op === 'ResizeBilinear';
  if (!linear && (align || half)) throw new UnsupportedOpError(node.op, node.name, 'align_corners/half_pixel_centers for nearest');
  const mode = align ? 'align_corners' : half ? 'half_pixel' : 'asymmetric';
  const sizes = ctx.builder.int64s(`${node.name}/sizes`, [xs.shape[0]!, xs.shape[3]!, h!, w!]);
  const y = ctx.builder.op('Resize', [nchw.name, '', '', sizes], { mode: linear ? 'linear' : 'nearest', coordinate_transformation_mode: mode, nearest_mode: 'floor' }, node.name);
  return [ctx.transpose(sym(y, x.dtype, [xs.shape[0]!, xs.shape[3]!, h!, w!]), NCHW_TO_NHWC, `${node.name}/nhwc`)];
};

/** DepthToSpace: TF's NHWC channel order is ONNX's DCR mode. */
const depthToSpace: OpHandler = (node, ins, ctx) => {
  const x = ins[0]!;
  const bs = Number(node.attr.block_size);
  const xs = ctx.asSym(x, `${node.name}/const`);
  const nchw = ctx.transpose(xs, NHWC_TO_NCHW, `${node.name}/nchw`);
  const [n, c, h, w] = nchw.shape as [number, number, number, number];
  const y = ctx.builder.op('DepthToSpace', [nchw.name], { blocksize: bs, mode: 'DCR' }, node.name);
  return [ctx.transpose(sym(y, x.dtype, [n, c / (bs * bs), h * bs, w * bs]), NCHW_TO_NHWC, `${node.name}/nhwc`)];
};

export const RESIZE_OPS: Record<string, OpHandler> = {
  ResizeBilinear: resize,
  ResizeNearestNeighbor: resize,
  DepthToSpace: depthToSpace,
};
