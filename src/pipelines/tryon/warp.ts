// Try-on warp: each garment part carried from its photo onto its body part. A thin-plate spline
// maps body space to garment space through the part's strip pairs (centre line and both edges at
// every station, parts.ts; solved in steps/tps.ts), and the tps-warp graph evaluates it per pixel
// and samples the garment (GridSample) over the part's clip box. A learned warping model with the
// same inputs could replace the graph.
//   inputs  source  float32 [1, 4, Hg, Wg] NCHW: garment RGB in [0, 1] and the part's mask
//           target  float32 [1, rh, rw, 2]: each output pixel's position in [-1, 1] region space
//           ctrl [1, n, 2], weights [n, 2], linear [2, 2], bias [2]: the spline
//   output  float32 [1, 4, rh, rw]: premultiplied RGB and alpha on the region
import type { RgbImage } from '../../imaging/image.ts';
import type { ModelSession } from '../../models/onnx.ts';
import { solveTps } from '../../steps/tps.ts';
import type { P } from './body.ts';
import type { Strip } from './parts.ts';

export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The bounding box of a 0/1 mask (null when empty). */
export function maskBox(mask: Uint8Array, W: number, H: number): Region | null {
  let x0 = W, y0 = H, x1 = -1, y1 = -1;
  for (let y = 0; y < H; y++) {
    const row = y * W;
    for (let x = 0; x < W; x++) {
      if (!mask[row + x]) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      y1 = y;
    }
  }
  return x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

const points = (s: Strip): P[] => [...s.centre, ...s.left, ...s.right];

/** Runs the warp graph for one part: its premultiplied RGB and alpha over `region`, planar (4 planes). */
export async function warpPart(warp: ModelSession, garment: RgbImage, partMask: Uint8Array, from: Strip, to: Strip, region: Region): Promise<Float32Array> {
  const { x: rx0, y: ry0, width: rw, height: rh } = region;
  const g = garment;
  const tn = (p: P): P => [(2 * (p[0] - rx0)) / rw - 1, (2 * (p[1] - ry0)) / rh - 1];
  const gn = (p: P): P => [(2 * (p[0] + 0.5)) / g.width - 1, (2 * (p[1] + 0.5)) / g.height - 1];
  const ctrl = points(to).map(tn);
  const tps = solveTps(ctrl, points(from).map(gn));
  const gn2 = g.width * g.height;
  const source = new Float32Array(4 * gn2);
  for (let i = 0; i < gn2; i++) {
    for (let c = 0; c < 3; c++) source[c * gn2 + i] = g.data[3 * i + c]! / 255;
    source[3 * gn2 + i] = partMask[i]!;
  }
  const target = new Float32Array(rw * rh * 2);
  for (let y = 0; y < rh; y++) for (let x = 0; x < rw; x++) ((target[2 * (y * rw + x)] = (2 * (x + 0.5)) / rw - 1), (target[2 * (y * rw + x) + 1] = (2 * (y + 0.5)) / rh - 1));
  const out = await warp.run({
    source: { data: source, dims: [1, 4, g.height, g.width] },
    target: { data: target, dims: [1, rh, rw, 2] },
    ctrl: { data: Float32Array.from(ctrl.flat()), dims: [1, ctrl.length, 2] },
    weights: { data: tps.weights, dims: [ctrl.length, 2] },
    linear: { data: tps.linear, dims: [2, 2] },
    bias: { data: tps.bias, dims: [2] },
  });
  return out[warp.outputNames[0]!]!.data;
}
