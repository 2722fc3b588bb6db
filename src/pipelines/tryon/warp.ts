// Try-on warp: each garment part carried from its photo onto its body part. A thin-plate spline
// maps body space to garment space through the part's strip pairs (centre line and both edges at
// every station, parts.ts; solved in steps/tps.ts), and the tps-warp graph evaluates it per pixel
// and samples the garment (GridSample) over the part's clip box. A learned warping model with the
// same inputs could replace the graph.
//   inputs  source  float32 [1, 4, Hg, Wg] NCHW: garment RGB in [0, 1] and the part's mask
//           target  float32 [1, rh, rw, 2]: each output pixel's source position (the spline
//                   evaluated here on a 4-pixel lattice and interpolated, sourcePositions)
//           ctrl [1, 1, 2], weights [1, 2] zero, linear [2, 2] identity, bias [2] zero: the graph's
//                   own spline left as the identity
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
  // The spline is smooth: it is evaluated every STEP pixels here and interpolated bilinearly (well
  // under a tenth of a pixel off), and the graph gets those source positions with an identity
  // spline. Evaluated per pixel in the graph it made [pixels x points x 2] tensors, most of the
  // warp stage's time on a 1 MP photo.
  const target = sourcePositions(tps, ctrl, rw, rh);
  const out = await warp.run({
    source: { data: source, dims: [1, 4, g.height, g.width] },
    target: { data: target, dims: [1, rh, rw, 2] },
    ctrl: { data: new Float32Array(2), dims: [1, 1, 2] },
    weights: { data: new Float32Array(2), dims: [1, 2] },
    linear: { data: Float32Array.of(1, 0, 0, 1), dims: [2, 2] },
    bias: { data: new Float32Array(2), dims: [2] },
  });
  return out[warp.outputNames[0]!]!.data;
}

const STEP = 4;

/**
 * The spline's source position (GridSample's normalized space) for every pixel centre of a rw x rh
 * region, interleaved x, y: evaluated at every STEP-th pixel (and the last) and bilinearly between.
 * The same formula as the tps-warp graph: bias + p . linear + sum_i weights_i U(|p - ctrl_i|^2),
 * U(r2) = r2 log(r2 + 1e-9), p in region space [-1, 1].
 */
export function sourcePositions(tps: { weights: Float32Array; linear: Float32Array; bias: Float32Array }, ctrl: P[], rw: number, rh: number): Float32Array {
  const nodes = (n: number) => {
    const out: number[] = [];
    for (let v = 0; v < n - 1; v += STEP) out.push(v);
    out.push(n - 1);
    if (out.length === 1) out.push(n - 1);
    return out;
  };
  const xs = nodes(rw), ys = nodes(rh);
  const gw = xs.length, gh = ys.length;
  const coarse = new Float64Array(gw * gh * 2);
  const { weights: w, linear: L, bias } = tps;
  for (let gy = 0; gy < gh; gy++) {
    const py = (2 * (ys[gy]! + 0.5)) / rh - 1;
    for (let gx = 0; gx < gw; gx++) {
      const px = (2 * (xs[gx]! + 0.5)) / rw - 1;
      let sx = bias[0]! + px * L[0]! + py * L[2]!, sy = bias[1]! + px * L[1]! + py * L[3]!;
      for (let i = 0; i < ctrl.length; i++) {
        const dx = px - ctrl[i]![0], dy = py - ctrl[i]![1];
        const r2 = dx * dx + dy * dy;
        const u = r2 * Math.log(r2 + 1e-9);
        (sx += u * w[2 * i]!), (sy += u * w[2 * i + 1]!);
      }
      coarse[2 * (gy * gw + gx)] = sx;
      coarse[2 * (gy * gw + gx) + 1] = sy;
    }
  }
  const out = new Float32Array(rw * rh * 2);
  for (let y = 0; y < rh; y++) {
    const gy = Math.min(gh - 2, Math.floor(y / STEP)), y0 = ys[gy]!, y1 = ys[gy + 1] ?? y0;
    const fy = y1 > y0 ? (y - y0) / (y1 - y0) : 0;
    for (let x = 0; x < rw; x++) {
      const gx = Math.min(gw - 2, Math.floor(x / STEP)), x0 = xs[gx]!, x1 = xs[gx + 1] ?? x0;
      const fx = x1 > x0 ? (x - x0) / (x1 - x0) : 0;
      const a = 2 * (gy * gw + gx), b = a + 2, c = a + 2 * gw, d = c + 2;
      for (let k = 0; k < 2; k++) {
        const top = coarse[a + k]! + (coarse[b + k]! - coarse[a + k]!) * fx;
        const bottom = coarse[c + k]! + (coarse[d + k]! - coarse[c + k]!) * fx;
        out[2 * (y * rw + x) + k] = top + (bottom - top) * fy;
      }
    }
  }
  return out;
}
