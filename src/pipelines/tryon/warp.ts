// Try-on warp: the garment carried from its photo onto the body. A thin-plate spline maps body
// space to garment space through the landmark pairs (solved in steps/tps.ts), and the tps-warp graph
// evaluates it per pixel and samples the garment (GridSample), over the region of the person photo
// the garment can reach. A learned warping model with the same inputs could replace the graph.
//   inputs  source  float32 [1, 4, Hg, Wg] NCHW: garment RGB in [0, 1] and its mask
//           target  float32 [1, rh, rw, 2]: each output pixel's position in [-1, 1] region space
//           ctrl [1, n, 2], weights [n, 2], linear [2, 2], bias [2]: the spline
//   output  float32 [1, 4, rh, rw]: premultiplied RGB and alpha on the region
import type { ModelSession } from '../../models/onnx.ts';
import { solveTps } from '../../steps/tps.ts';
import type { GarmentAnalysis } from './analysis.ts';
import type { Landmarks } from './garment.ts';

export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The box around the body targets, `margin` (pixels) wider on every side, clipped to the photo. */
export function reachRegion(to: Landmarks, names: readonly string[], margin: number, W: number, H: number): Region {
  const xs = names.map((k) => to[k]![0]), ys = names.map((k) => to[k]![1]);
  const x0 = Math.max(0, Math.floor(Math.min(...xs) - margin)), x1 = Math.min(W, Math.ceil(Math.max(...xs) + margin));
  const y0 = Math.max(0, Math.floor(Math.min(...ys) - margin)), y1 = Math.min(H, Math.ceil(Math.max(...ys) + margin));
  return { x: x0, y: y0, width: Math.max(1, x1 - x0), height: Math.max(1, y1 - y0) };
}

/** Runs the warp graph: the garment's premultiplied RGB and alpha over `region`, planar (4 planes). */
export async function warpGarment(warp: ModelSession, garment: GarmentAnalysis, to: Landmarks, names: readonly string[], region: Region): Promise<Float32Array> {
  const { x: rx0, y: ry0, width: rw, height: rh } = region;
  const g = garment.image;
  const tn = (p: [number, number]): [number, number] => [(2 * (p[0] - rx0)) / rw - 1, (2 * (p[1] - ry0)) / rh - 1];
  const gn = (p: [number, number]): [number, number] => [(2 * (p[0] + 0.5)) / g.width - 1, (2 * (p[1] + 0.5)) / g.height - 1];
  const ctrl = names.map((k) => tn(to[k]!));
  const tps = solveTps(ctrl, names.map((k) => gn(garment.landmarks[k]!)));
  const gn2 = g.width * g.height;
  const source = new Float32Array(4 * gn2);
  for (let i = 0; i < gn2; i++) {
    for (let c = 0; c < 3; c++) source[c * gn2 + i] = g.data[3 * i + c]! / 255;
    source[3 * gn2 + i] = garment.mask[i]!;
  }
  const target = new Float32Array(rw * rh * 2);
  for (let y = 0; y < rh; y++) for (let x = 0; x < rw; x++) ((target[2 * (y * rw + x)] = (2 * (x + 0.5)) / rw - 1), (target[2 * (y * rw + x) + 1] = (2 * (y + 0.5)) / rh - 1));
  const out = await warp.run({
    source: { data: source, dims: [1, 4, g.height, g.width] },
    target: { data: target, dims: [1, rh, rw, 2] },
    ctrl: { data: Float32Array.from(ctrl.flat()), dims: [1, names.length, 2] },
    weights: { data: tps.weights, dims: [names.length, 2] },
    linear: { data: tps.linear, dims: [2, 2] },
    bias: { data: tps.bias, dims: [2] },
  });
  return out[warp.outputNames[0]!]!.data;
}
