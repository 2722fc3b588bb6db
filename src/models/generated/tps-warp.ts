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

/**
 * Solves a 2-D thin-plate spline mapping `from` points to `to` points (both normalized), with a
 * small regularization. Returns what the graph takes: weights [N, 2], linear [2, 2], bias [2].
 */
export function solveTps(from: Array<[number, number]>, to: Array<[number, number]>, lambda = 1e-3): { weights: Float32Array; linear: Float32Array; bias: Float32Array } {
  const n = from.length;
  const m = n + 3;
  const U = (r2: number) => (r2 > 0 ? r2 * Math.log(r2 + 1e-9) : 0);
  const A = Array.from({ length: m }, () => new Float64Array(m));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const dx = from[i]![0] - from[j]![0];
      const dy = from[i]![1] - from[j]![1];
      A[i]![j] = U(dx * dx + dy * dy) + (i === j ? lambda : 0);
    }
    A[i]![n] = 1;
    A[i]![n + 1] = from[i]![0];
    A[i]![n + 2] = from[i]![1];
    A[n]![i] = 1;
    A[n + 1]![i] = from[i]![0];
    A[n + 2]![i] = from[i]![1];
  }
  const solve = (rhs: Float64Array) => {
    // Gaussian elimination with partial pivoting on a copy.
    const M = A.map((row, i) => [...row, rhs[i]!]);
    for (let c = 0; c < m; c++) {
      let p = c;
      for (let r = c + 1; r < m; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
      [M[c], M[p]] = [M[p]!, M[c]!];
      const pivot = M[c]![c]!;
      if (Math.abs(pivot) < 1e-12) throw new Error('thin-plate spline: degenerate control points');
      for (let r = 0; r < m; r++) {
        if (r === c) continue;
        const f = M[r]![c]! / pivot;
        if (f === 0) continue;
        for (let k = c; k <= m; k++) M[r]![k]! -= f * M[c]![k]!;
      }
    }
    return M.map((row, i) => row[m]! / row[i]!);
  };
  const solX = solve(Float64Array.from([...to.map((p) => p[0]), 0, 0, 0]));
  const solY = solve(Float64Array.from([...to.map((p) => p[1]), 0, 0, 0]));
  const weights = new Float32Array(2 * n);
  for (let i = 0; i < n; i++) {
    weights[2 * i] = solX[i]!;
    weights[2 * i + 1] = solY[i]!;
  }
  // affine rows: [1, x, y] -> bias = row 0; linear = rows x and y as a 2x2 (x -> [sx, sy], y -> [sx, sy]).
  return {
    weights,
    linear: Float32Array.from([solX[n + 1]!, solY[n + 1]!, solX[n + 2]!, solY[n + 2]!]),
    bias: Float32Array.from([solX[n]!, solY[n]!]),
  };
}
