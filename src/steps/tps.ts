// Step: a thin-plate spline through control-point pairs, solved on the CPU (a small dense system,
// n + 3 unknowns for n landmarks). The per-pixel evaluation runs in the tps-warp graph
// (src/tooling/generated/tps-warp.ts builds it); this file must stay free of graph-building code so
// inference threads do not load onnx-proto.

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
