// Thin-plate-spline warp as an ONNX graph (built by the project, run on the worker's execution
// provider): evaluates a TPS at every output pixel and samples the source there with GridSample.
//   inputs  "source"  float32 [1, C, Hs, Ws]  planes to warp (RGB + alpha)
//           "target"  float32 [1, Ho, Wo, 2]  each output pixel's (x, y), normalized to [-1, 1]
//           "ctrl"    float32 [1, N, 2]       TPS control points, in the same target space
//           "weights" float32 [N, 2]          TPS kernel weights
//           "linear"  float32 [2, 2]          affine part (x, y) -> source
//           "bias"    float32 [2]             affine offset
//   output  "warped"  float32 [1, C, Ho, Wo]  bilinear, zeros outside the source
// source(p) = bias + p . linear + sum_i weights_i * U(|p - ctrl_i|), U(r) = r^2 log r^2, in
// GridSample's normalized source coordinates (align_corners = 0).
import { OnnxGraphBuilder } from '../onnx-builder.ts';

export function buildTpsWarp(): Uint8Array {
  const b = new OnnxGraphBuilder();
  b.input('source', 'float32', [1, 'C', 'Hs', 'Ws']);
  b.input('target', 'float32', [1, 'Ho', 'Wo', 2]);
  b.input('ctrl', 'float32', [1, 'N', 2]);
  b.input('weights', 'float32', ['N', 2]);
  b.input('linear', 'float32', [2, 2]);
  b.input('bias', 'float32', [2]);
  const p3 = b.op('Reshape', ['target', b.int64s('p3_shape', [-1, 1, 2])], {}, 'points'); // [P, 1, 2]
  const diff = b.op('Sub', [p3, 'ctrl'], {}, 'diff'); // [P, N, 2]
  const r2 = b.op('ReduceSum', [b.op('Mul', [diff, diff]), b.int64s('axis2', [2])], { keepdims: 0 }, 'r2'); // [P, N]
  const eps = b.initializer('eps', 'float32', [], new Float32Array([1e-9]));
  const u = b.op('Mul', [r2, b.op('Log', [b.op('Add', [r2, eps])])], {}, 'kernel');
  const nonlinear = b.op('MatMul', [u, 'weights'], {}, 'nonlinear'); // [P, 2]
  const p2 = b.op('Reshape', ['target', b.int64s('p2_shape', [-1, 2])], {}, 'points2'); // [P, 2]
  const affine = b.op('Add', [b.op('MatMul', [p2, 'linear']), 'bias'], {}, 'affine');
  const src = b.op('Add', [nonlinear, affine], {}, 'source_xy');
  const grid = b.op('Reshape', [src, b.op('Shape', ['target'])], {}, 'grid');
  b.node('GridSample', ['source', grid], ['warped'], { mode: 'bilinear', padding_mode: 'zeros', align_corners: 0 });
  b.output('warped', 'float32', [1, 'C', 'Ho', 'Wo']);
  return b.serialize('tps-warp');
}

