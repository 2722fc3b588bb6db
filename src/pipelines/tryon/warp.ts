// Try-on warp: each garment part carried from its photo onto its body part. A thin-plate spline
// maps body space to garment space through the part's strip pairs (centre line and both edges at
// every station, parts.ts; solved in steps/tps.ts), and the tps-warp graph evaluates it per pixel
// and samples the garment (GridSample) over the part's clip box. A learned warping model with the
// same inputs could replace the graph.
//   inputs  source  float32 [1, 4, Hg, Wg] NCHW: garment RGB in [0, 1] and the part's mask
//           target  float32 [1, rh, rw, 2]: each output pixel's source position (the spline
//                   evaluated here on a 4-pixel lattice and interpolated: lattice, interpolate)
//           ctrl [1, 0, 2] and weights [0, 2] (no points), linear [2, 2] identity, bias [2] zero:
//                   the graph's own spline left as the identity
//   output  float32 [1, 4, rh, rw]: premultiplied RGB and alpha on the region
import type { RgbImage } from '../../imaging/image.ts';
import { maskBox, type Region } from '../../imaging/morphology.ts';
import type { ModelSession } from '../../models/onnx.ts';
import { solveTps } from '../../steps/tps.ts';
import type { P } from './body.ts';
import type { Strip } from './parts.ts';

const points = (s: Strip): P[] => [...s.centre, ...s.left, ...s.right];

/** The spline's regularization for an affine warp (normalized coordinates: the kernel's weights come out near 0). */
const AFFINE = 100;

/** The warp graph's source tensor per garment picture (RGB planes, then the current part's mask). */
const SOURCES = new WeakMap<RgbImage, Float32Array>();

/**
 * Runs the warp graph for one part over the part of `region` (its clip box) where the garment can
 * land: its premultiplied RGB and alpha there, planar (4 planes), and that box. A clip box is
 * often much larger than the garment on it (the torso's is the whole instance, legs included:
 * most of a 1 MP photo's warp time went to pixels that sample nothing). The spline is still
 * solved and evaluated in the clip box's own coordinates, so every pixel kept gets the same value.
 */
export async function warpPart(warp: ModelSession, garment: RgbImage, partMask: Uint8Array, from: Strip, to: Strip, region: Region, opts: { affine?: boolean } = {}): Promise<{ warped: Float32Array; region: Region }> {
  const { x: rx0, y: ry0, width: rw, height: rh } = region;
  const g = garment;
  const tn = (p: P): P => [(2 * (p[0] - rx0)) / rw - 1, (2 * (p[1] - ry0)) / rh - 1];
  const gn = (p: P): P => [(2 * (p[0] + 0.5)) / g.width - 1, (2 * (p[1] + 0.5)) / g.height - 1];
  const ctrl = points(to).map(tn);
  // `affine`: a regularization that leaves the spline's affine part, the least-squares fit
  // through the pairs. A short sleeve's garment strip is a trapezoid (its root is the slanted
  // armhole's width, wider than the rest) and its body strip nearly a rectangle: the spline bent
  // the sleeve's stripes into arches and hooks; along a straight upper arm there is nothing to bend.
  const tps = solveTps(ctrl, points(from).map(gn), opts.affine ? AFFINE : 1e-3);
  const gn2 = g.width * g.height;
  // The garment's RGB planes are the same for every part: made once per garment picture, and only
  // the mask plane is written per part (the parts are warped one after another).
  let source = SOURCES.get(g);
  if (!source) {
    source = new Float32Array(4 * gn2);
    for (let i = 0; i < gn2; i++) for (let c = 0; c < 3; c++) source[c * gn2 + i] = g.data[3 * i + c]! / 255;
    SOURCES.set(g, source);
  }
  for (let i = 0; i < gn2; i++) source[3 * gn2 + i] = partMask[i]!;
  // The spline is smooth: it is evaluated every STEP pixels here and interpolated bilinearly (well
  // under a tenth of a pixel off), and the graph gets those source positions with an identity
  // spline. Evaluated per pixel in the graph it made [pixels x points x 2] tensors, most of the
  // warp stage's time on a 1 MP photo.
  const landing = maskBox(partMask, g.width, g.height);
  const grid = lattice(tps, ctrl, rw, rh, { box: landing, Wg: g.width, Hg: g.height });
  const box = landingBox(grid, landing, g.width, g.height) ?? { x: 0, y: 0, width: rw, height: rh };
  const target = interpolate(grid, box);
  const out = await warp.run({
    source: { data: source, dims: [1, 4, g.height, g.width] },
    target: { data: target, dims: [1, box.height, box.width, 2] },
    // No control points (N = 0): the graph's spline is then its affine part alone, the identity,
    // and its per-pixel kernel passes (Sub, ReduceSum, Log, MatMul over [pixels x N]) run on empty
    // tensors. With one zero-weight point, as before, they were half the graph's time and changed
    // no value (0 * U is 0): the output is bit-identical.
    ctrl: { data: new Float32Array(0), dims: [1, 0, 2] },
    weights: { data: new Float32Array(0), dims: [0, 2] },
    linear: { data: Float32Array.of(1, 0, 0, 1), dims: [2, 2] },
    bias: { data: new Float32Array(2), dims: [2] },
  });
  return { warped: out[warp.outputNames[0]!]!.data, region: { x: rx0 + box.x, y: ry0 + box.y, width: box.width, height: box.height } };
}

const STEP = 4;

/** The spline evaluated on the lattice of a rw x rh region: node columns xs, rows ys, interleaved x, y per node. */
interface Lattice {
  xs: number[];
  ys: number[];
  coarse: Float64Array;
}

/**
 * The spline's source position (GridSample's normalized space) at every STEP-th pixel centre (and
 * the last) of a rw x rh region; interpolate fills in the pixels between. The same formula as the
 * tps-warp graph: bias + p . linear + sum_i weights_i U(|p - ctrl_i|^2), U(r2) = r2 log(r2 + 1e-9),
 * p in region space [-1, 1].
 */
function lattice(tps: { weights: Float32Array; linear: Float32Array; bias: Float32Array }, ctrl: P[], rw: number, rh: number, mask?: { box: Region | null; Wg: number; Hg: number }): Lattice {
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
  const at = (gx: number, gy: number) => {
    const px = (2 * (xs[gx]! + 0.5)) / rw - 1, py = (2 * (ys[gy]! + 0.5)) / rh - 1;
    let sx = bias[0]! + px * L[0]! + py * L[2]!, sy = bias[1]! + px * L[1]! + py * L[3]!;
    for (let i = 0; i < ctrl.length; i++) {
      const dx = px - ctrl[i]![0], dy = py - ctrl[i]![1];
      const r2 = dx * dx + dy * dy;
      const u = r2 * Math.log(r2 + 1e-9);
      (sx += u * w[2 * i]!), (sy += u * w[2 * i + 1]!);
    }
    coarse[2 * (gy * gw + gx)] = sx;
    coarse[2 * (gy * gw + gx) + 1] = sy;
  };
  const live = mask?.box ? sparseLive(at, coarse, gw, gh, mask.box, mask.Wg, mask.Hg) : null;
  for (let gy = 0; gy < gh; gy++) {
    for (let gx = 0; gx < gw; gx++) {
      const state = live ? live[gy * gw + gx] : 1;
      if (state === 1) at(gx, gy);
      // Far outside GridSample's [-1, 1]: samples nothing, and landingBox drops its cells.
      else if (state === 0) coarse[2 * (gy * gw + gx)] = coarse[2 * (gy * gw + gx) + 1] = FAR;
    }
  }
  return { xs, ys, coarse };
}

/** A source position that lands nowhere (GridSample reads zeros there). */
const FAR = -1e3;
/** The sparse lattice's spacing, in lattice nodes. */
const SPARSE = 4;

/**
 * Which nodes of the lattice to evaluate: per node 1 (evaluate), 0 (set FAR) or 2 (a sparse node,
 * evaluated here already). The torso's clip box is the whole instance, legs included, and the
 * spline (a sum over 30-45 control points, a logarithm each) evaluated at every node of it was
 * 17 ms of a 1 MP try-on. So it is first evaluated every SPARSE nodes; a sparse cell whose
 * corners' source positions come within 8 garment pixels of the part's mask box (landingBox's
 * test, with more margin), and the cells next to it, get all their nodes; the rest samples
 * nothing. The spline is smooth: between nodes 16 px apart it strays from the corners' box by
 * far less than that margin, so every cell that landingBox keeps is evaluated, with the same
 * values (the try-on's outputs on the development photos are unchanged: see the commit). Null
 * (every node) for lattices under SPARSE cells a side.
 */
function sparseLive(at: (gx: number, gy: number) => void, coarse: Float64Array, gw: number, gh: number, mask: Region, Wg: number, Hg: number): Uint8Array | null {
  const sparse = (n: number) => {
    const out: number[] = [];
    for (let v = 0; v < n - 1; v += SPARSE) out.push(v);
    out.push(n - 1);
    return out;
  };
  const sx = sparse(gw), sy = sparse(gh);
  if (sx.length < 3 || sy.length < 3) return null;
  const live = new Uint8Array(gw * gh);
  for (const gy of sy) for (const gx of sx) (at(gx, gy), (live[gy * gw + gx] = 2));
  const cw = sx.length - 1, ch = sy.length - 1;
  const cell = new Uint8Array(cw * ch);
  for (let cy = 0; cy < ch; cy++) {
    for (let cx = 0; cx < cw; cx++) {
      const top = sy[cy]! * gw, bottom = sy[cy + 1]! * gw;
      if (!cellReaches(coarse, top + sx[cx]!, top + sx[cx + 1]!, bottom + sx[cx]!, bottom + sx[cx + 1]!, mask, 8, Wg, Hg)) continue;
      // This cell and its neighbours: every node in them.
      for (let ny = Math.max(0, cy - 1); ny <= Math.min(ch - 1, cy + 1); ny++) {
        for (let nx = Math.max(0, cx - 1); nx <= Math.min(cw - 1, cx + 1); nx++) cell[ny * cw + nx] = 1;
      }
    }
  }
  for (let cy = 0; cy < ch; cy++) {
    for (let cx = 0; cx < cw; cx++) {
      if (!cell[cy * cw + cx]) continue;
      for (let gy = sy[cy]!; gy <= sy[cy + 1]!; gy++) for (let gx = sx[cx]!; gx <= sx[cx + 1]!; gx++) if (live[gy * gw + gx] !== 2) live[gy * gw + gx] = 1;
    }
  }
  return live;
}

/**
 * Whether a lattice cell (its corner nodes' indices) can sample the part's mask box grown by
 * `margin` garment pixels: a pixel's source position is a convex combination of its cell's corners
 * (the bilinear weights), so it lies in their bounding box; GridSample (bilinear, zeros outside,
 * align_corners 0) reads source pixels floor(p) and floor(p) + 1 at pixel p = ((s + 1) W - 1) / 2.
 * A corner that is not finite keeps the cell (the graph decides what such a position samples).
 */
function cellReaches(coarse: Float64Array, a: number, b: number, c: number, d: number, mask: Region, margin: number, Wg: number, Hg: number): boolean {
  for (let k = 0; k < 2; k++) {
    const va = coarse[2 * a + k]!, vb = coarse[2 * b + k]!, vc = coarse[2 * c + k]!, vd = coarse[2 * d + k]!;
    const min = Math.min(va, vb, vc, vd), max = Math.max(va, vb, vc, vd);
    if (!Number.isFinite(min) || !Number.isFinite(max)) return true;
    const size = k ? Hg : Wg, lo = (k ? mask.y : mask.x) - margin, hi = (k ? mask.y + mask.height : mask.x + mask.width) - 1 + margin;
    if (((max + 1) * size - 1) / 2 < lo || ((min + 1) * size - 1) / 2 > hi) return false;
  }
  return true;
}

/**
 * The box of lattice cells (in region pixels) whose source positions can reach the part's mask
 * (`mask`, a box of garment pixels): null when every cell can (or none: the part then keeps its
 * whole region, as before), by cellReaches: a position more than one pixel outside the mask's box
 * samples only zeros, and two pixels of margin cover the rounding.
 */
function landingBox(grid: Lattice, mask: Region | null, Wg: number, Hg: number): Region | null {
  if (!mask) return null;
  const { xs, ys, coarse } = grid;
  const gw = xs.length, gh = ys.length;
  let x0 = Infinity, y0 = Infinity, x1 = -1, y1 = -1;
  for (let gy = 0; gy + 1 < gh; gy++) {
    for (let gx = 0; gx + 1 < gw; gx++) {
      const n = gy * gw + gx;
      if (!cellReaches(coarse, n, n + 1, n + gw, n + gw + 1, mask, 2, Wg, Hg)) continue;
      x0 = Math.min(x0, xs[gx]!), x1 = Math.max(x1, xs[gx + 1]!);
      y0 = Math.min(y0, ys[gy]!), y1 = Math.max(y1, ys[gy + 1]!);
    }
  }
  if (x1 < 0 || (x0 === 0 && y0 === 0 && x1 === xs[gw - 1] && y1 === ys[gh - 1])) return null;
  return { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

/** The source position of every pixel centre in `box` of the lattice's region (the region's own pixel coordinates), interleaved x, y: bilinear between the lattice's nodes. */
function interpolate(grid: Lattice, box: Region): Float32Array {
  const { xs, ys, coarse } = grid;
  const gw = xs.length, gh = ys.length;
  const { x: bx, y: by, width: bw, height: bh } = box;
  // Each column's lattice cell and fraction, once (the same values for every row).
  const cellX = new Int32Array(bw), fracX = new Float64Array(bw);
  for (let x = bx; x < bx + bw; x++) {
    const gx = Math.min(gw - 2, Math.floor(x / STEP)), x0 = xs[gx]!, x1 = xs[gx + 1] ?? x0;
    cellX[x - bx] = gx;
    fracX[x - bx] = x1 > x0 ? (x - x0) / (x1 - x0) : 0;
  }
  const out = new Float32Array(bw * bh * 2);
  for (let y = by; y < by + bh; y++) {
    const gy = Math.min(gh - 2, Math.floor(y / STEP)), y0 = ys[gy]!, y1 = ys[gy + 1] ?? y0;
    const fy = y1 > y0 ? (y - y0) / (y1 - y0) : 0;
    interpolateRow(coarse, gw, gy, cellX, fracX, fy, out, 2 * (y - by) * bw);
  }
  return out;
}

/** One row of interpolate: bilinear between lattice rows gy and gy + 1 at fraction fy. */
function interpolateRow(coarse: Float64Array, gw: number, gy: number, cellX: Int32Array, fracX: Float64Array, fy: number, out: Float32Array, at: number): void {
  for (let x = 0; x < cellX.length; x++) {
    const fx = fracX[x]!;
    const a = 2 * (gy * gw + cellX[x]!), b = a + 2, c = a + 2 * gw, d = c + 2;
    const top0 = coarse[a]! + (coarse[b]! - coarse[a]!) * fx;
    const bottom0 = coarse[c]! + (coarse[d]! - coarse[c]!) * fx;
    out[at + 2 * x] = top0 + (bottom0 - top0) * fy;
    const top1 = coarse[a + 1]! + (coarse[b + 1]! - coarse[a + 1]!) * fx;
    const bottom1 = coarse[c + 1]! + (coarse[d + 1]! - coarse[c + 1]!) * fx;
    out[at + 2 * x + 1] = top1 + (bottom1 - top1) * fy;
  }
}
