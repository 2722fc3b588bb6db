// Try-on warp: each garment part carried from its photo onto its body part. A thin-plate spline
// maps body space to garment space through the part's strip pairs (centre line and both edges at
// every station, parts.ts; solved in steps/tps.ts), or for the wide strips that do not bend (a
// dress's torso, the pelvis, the skirt) the strips' quads do (stripQuads: each quad between two
// stations bilinearly, so a row stretches evenly from the centre to the edge); the map is
// evaluated on a lattice here and the tps-warp graph samples the garment (GridSample) over the
// part's clip box. A learned warping model with the same inputs could replace the graph.
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
export async function warpPart(warp: ModelSession, garment: RgbImage, partMask: Uint8Array, from: Strip, to: Strip, region: Region, opts: { affine?: boolean; quads?: boolean } = {}): Promise<{ warped: Float32Array; region: Region }> {
  const { x: rx0, y: ry0, width: rw, height: rh } = region;
  const g = garment;
  const tn = (p: P): P => [(2 * (p[0] - rx0)) / rw - 1, (2 * (p[1] - ry0)) / rh - 1];
  const gn = (p: P): P => [(2 * (p[0] + 0.5)) / g.width - 1, (2 * (p[1] + 0.5)) / g.height - 1];
  const ctrl = points(to).map(tn);
  // `affine`: a regularization that leaves the spline's affine part, the least-squares fit
  // through the pairs. A short sleeve's garment strip is a trapezoid (its root is the slanted
  // armhole's width, wider than the rest) and its body strip nearly a rectangle: the spline bent
  // the sleeve's stripes into arches and hooks; along a straight upper arm there is nothing to bend.
  // `quads`: the strips' quads mapped bilinearly (stripQuads) instead of the spline.
  const map = opts.quads ? quadMap(stripQuads(from, steadyEdges(to)), region, g) : splineMap(solveTps(ctrl, points(from).map(gn), opts.affine ? AFFINE : 1e-3), ctrl, rw, rh);
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
  const grid = lattice(map, rw, rh, { box: landing, Wg: g.width, Hg: g.height });
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

/**
 * A part's map: writes the source position (GridSample's normalized space) of region pixel (x, y)
 * (its centre) into out[k], out[k + 1].
 */
type SourceMap = (x: number, y: number, out: Float64Array, k: number) => void;

/**
 * The spline as a SourceMap: the same formula as the tps-warp graph, bias + p . linear +
 * sum_i weights_i U(|p - ctrl_i|^2), U(r2) = r2 log(r2 + 1e-9), p in region space [-1, 1].
 */
function splineMap(tps: { weights: Float32Array; linear: Float32Array; bias: Float32Array }, ctrl: P[], rw: number, rh: number): SourceMap {
  const { weights: w, linear: L, bias } = tps;
  return (x, y, out, k) => {
    const px = (2 * (x + 0.5)) / rw - 1, py = (2 * (y + 0.5)) / rh - 1;
    let sx = bias[0]! + px * L[0]! + py * L[2]!, sy = bias[1]! + px * L[1]! + py * L[3]!;
    for (let i = 0; i < ctrl.length; i++) {
      const dx = px - ctrl[i]![0], dy = py - ctrl[i]![1];
      const r2 = dx * dx + dy * dy;
      const u = r2 * Math.log(r2 + 1e-9);
      (sx += u * w[2 * i]!), (sy += u * w[2 * i + 1]!);
    }
    (out[k] = sx), (out[k + 1] = sy);
  };
}

/** stripQuads (photo pixels to garment pixels) as a SourceMap of `region`, onto garment `g`. */
function quadMap(quads: ReturnType<typeof stripQuads>, region: Region, g: RgbImage): SourceMap {
  return (x, y, out, k) => {
    quads(region.x + x + 0.5, region.y + y + 0.5, out, k);
    (out[k] = (2 * (out[k]! + 0.5)) / g.width - 1), (out[k + 1] = (2 * (out[k + 1]! + 0.5)) / g.height - 1);
  };
}

/** The map evaluated on the lattice of a rw x rh region: node columns xs, rows ys, interleaved x, y per node. */
interface Lattice {
  xs: number[];
  ys: number[];
  coarse: Float64Array;
}

/**
 * The map's source position at every STEP-th pixel centre (and the last) of a rw x rh region;
 * interpolate fills in the pixels between. All the nodes, or sparseLive's where the part's mask
 * box is known.
 */
function lattice(map: SourceMap, rw: number, rh: number, mask?: { box: Region | null; Wg: number; Hg: number }): Lattice {
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
  const at = (gx: number, gy: number) => map(xs[gx]!, ys[gy]!, coarse, 2 * (gy * gw + gx));
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

/**
 * The strips as quads: between two stations, from the centre line to one edge, each body quad
 * mapped bilinearly onto the garment's (across the strip from the centre, s 0..1, to the edge;
 * along it from the station, t 0..1). Past the first and the last station the end station's
 * segment is carried on straight (an affine map along the strip's direction there: a quad's
 * bilinear map extrapolated blew up where the strip narrows, as a skirt's does at its hem). A
 * point is mapped through the quad or end that holds it, or the one it lies nearest beyond (past
 * an edge the map runs on straight). Returns the garment point (photo pixel coordinates, as the
 * strips'). Unlike the spline through the same points, a row's stretch between centre and edge is
 * even: where the body's edge swung out between stations (a hip, an arm cut out of the torso) the
 * spline bunched the garment's last few pixels into the body's outer tenth, its outline's pixel
 * steps and its dots drawn out eightfold into teeth and tears along the garment's side.
 */
export function stripQuads(from: Strip, to: Strip): (x: number, y: number, out: Float64Array, k: number) => void {
  const n = Math.min(from.centre.length, to.centre.length);
  type End = { a: P; e: P; d: P; ga: P; ge: P; gd: P };
  const quads: Quad[] = [], ends: End[] = [];
  for (const side of ['left', 'right'] as const) {
    for (let k = 0; k + 1 < n; k++) quads.push(quadOf([to.centre[k]!, to[side][k]!, to[side][k + 1]!, to.centre[k + 1]!], [from.centre[k]!, from[side][k]!, from[side][k + 1]!, from.centre[k + 1]!]));
    // The ends: the end station's segment (centre a to edge e) and the direction d the strip runs on in.
    for (const [k, j] of [[0, 1], [n - 1, n - 2]] as const) {
      if (j < 0 || j >= n) continue;
      const dir = (c: P[], i: number, o: number): P => [c[i]![0] - c[o]![0], c[i]![1] - c[o]![1]];
      ends.push({ a: to.centre[k]!, e: to[side][k]!, d: dir(to.centre, k, j), ga: from.centre[k]!, ge: from[side][k]!, gd: dir(from.centre, k, j) });
    }
  }
  const st = new Float64Array(2);
  // The lattice is walked row by row: a node mostly lies in its neighbour's quad, tried first.
  let last = 0;
  return (x, y, out, at) => {
    let bestErr = Infinity, bs = 0, bt = 0;
    let best: Quad | End | null = null;
    for (let k = -1; k < quads.length; k++) {
      if (k === last) continue;
      const q = quads[k < 0 ? last : k]!;
      if (!inverseBilinear(x, y, q, st)) continue;
      const s = st[0]!, t = st[1]!;
      const err = Math.max(0, -s) + Math.max(0, -t) + Math.max(0, t - 1);
      if (err < bestErr) (bestErr = err), (best = q), (bs = s), (bt = t);
      if (err === 0) {
        if (k >= 0) last = k;
        break;
      }
    }
    if (bestErr > 0) {
      for (const e of ends) {
        // p - a = s (e - a) + tau d, tau >= 0 beyond the end.
        const ux = e.e[0] - e.a[0], uy = e.e[1] - e.a[1], det = ux * e.d[1] - uy * e.d[0];
        if (Math.abs(det) < 1e-9) continue;
        const hx = x - e.a[0], hy = y - e.a[1];
        const s = (hx * e.d[1] - hy * e.d[0]) / det, tau = (ux * hy - uy * hx) / det;
        const err = Math.max(0, -s) + Math.max(0, -tau);
        if (err < bestErr) (bestErr = err), (best = e), (bs = s), (bt = tau);
      }
    }
    if (!best) {
      out[at] = out[at + 1] = -1e6;
      return;
    }
    if ('g' in best) {
      const [a, b, c, d] = best.g;
      // P(s, t) = a + s (b - a) + t (d - a) + s t (a - b + c - d)
      out[at] = a[0] + bs * (b[0] - a[0]) + bt * (d[0] - a[0]) + bs * bt * (a[0] - b[0] + c[0] - d[0]);
      out[at + 1] = a[1] + bs * (b[1] - a[1]) + bt * (d[1] - a[1]) + bs * bt * (a[1] - b[1] + c[1] - d[1]);
    } else {
      out[at] = best.ga[0] + bs * (best.ge[0] - best.ga[0]) + bt * best.gd[0];
      out[at + 1] = best.ga[1] + bs * (best.ge[1] - best.ga[1]) + bt * best.gd[1];
    }
  };
}

/** A body quad [a, b, c, d] (a + s e + t f + s t g) with its point-independent terms, and the garment's. */
interface Quad {
  ax: number;
  ay: number;
  ex: number;
  ey: number;
  fx: number;
  fy: number;
  gx: number;
  gy: number;
  /** cross(g, f) and cross(e, f): the quadratic's t^2 coefficient and part of its t coefficient. */
  gf: number;
  ef: number;
  g: [P, P, P, P];
}

function quadOf(b: [P, P, P, P], g: [P, P, P, P]): Quad {
  const [a, bb, c, d] = b;
  const ex = bb[0] - a[0], ey = bb[1] - a[1], fx = d[0] - a[0], fy = d[1] - a[1];
  const gx = a[0] - bb[0] + c[0] - d[0], gy = a[1] - bb[1] + c[1] - d[1];
  return { ax: a[0], ay: a[1], ex, ey, fx, fy, gx, gy, gf: gx * fy - gy * fx, ef: ex * fy - ey * fx, g };
}

/**
 * (s, t) with p = a + s e + t f + s t g for the quad, into `st`; of the two roots the one nearer
 * the quad's range. False for a degenerate quad. (Inline arithmetic: it runs for every lattice node.)
 */
function inverseBilinear(px: number, py: number, q: Quad, st: Float64Array): boolean {
  const { ex, ey, fx, fy, gx, gy } = q;
  const hx = px - q.ax, hy = py - q.ay;
  // h - t f = s (e + t g): crossed with (e + t g), a quadratic in t.
  const k2 = q.gf, k1 = q.ef + (hx * gy - hy * gx), k0 = hx * ey - hy * ex;
  let t: number;
  if (Math.abs(k2) < 1e-9 * (Math.abs(k1) + 1e-9)) {
    if (Math.abs(k1) < 1e-12) return false;
    t = -k0 / k1;
  } else {
    const disc = k1 * k1 - 4 * k0 * k2;
    if (disc < 0) return false;
    const r = Math.sqrt(disc);
    const t1 = (-k1 - r) / (2 * k2), t2 = (-k1 + r) / (2 * k2);
    // Each root's s, and how far (s, t) lies outside the quad's range.
    const w1x = ex + t1 * gx, w1y = ey + t1 * gy, n1 = w1x * w1x + w1y * w1y;
    const w2x = ex + t2 * gx, w2y = ey + t2 * gy, n2 = w2x * w2x + w2y * w2y;
    const s1 = n1 > 1e-12 ? ((hx - t1 * fx) * w1x + (hy - t1 * fy) * w1y) / n1 : NaN;
    const s2 = n2 > 1e-12 ? ((hx - t2 * fx) * w2x + (hy - t2 * fy) * w2y) / n2 : NaN;
    const r1 = Number.isNaN(s1) ? Infinity : Math.max(0, -s1) + Math.max(0, -t1) + Math.max(0, t1 - 1);
    const r2 = Number.isNaN(s2) ? Infinity : Math.max(0, -s2) + Math.max(0, -t2) + Math.max(0, t2 - 1);
    if (r1 === Infinity && r2 === Infinity) return false;
    if (r1 <= r2) (st[0] = s1), (st[1] = t1);
    else (st[0] = s2), (st[1] = t2);
    return true;
  }
  const wx = ex + t * gx, wy = ey + t * gy, nn = wx * wx + wy * wy;
  if (nn <= 1e-12) return false;
  (st[0] = ((hx - t * fx) * wx + (hy - t * fy) * wy) / nn), (st[1] = t);
  return true;
}

/**
 * The strip with each edge point moved along its station's centre-to-edge line to the median of
 * its own and its neighbours' distances from the centre (the end stations: of their own and their
 * one neighbour's, repeated): one station whose measured edge jumped out onto what the body's
 * outline took in (a neighbour's dress beside a hidden arm) or in (an arm cut out) no longer pulls
 * the garment after it. The quads follow their edge points exactly, where the spline through all
 * of them smoothed such a jump away (and bunched the garment's edge into teeth doing so).
 */
export function steadyEdges(s: Strip): Strip {
  const side = (edge: P[]): P[] => {
    const d = edge.map((e, i) => Math.hypot(e[0] - s.centre[i]![0], e[1] - s.centre[i]![1]));
    return edge.map((e, i) => {
      const c = s.centre[i]!, w = [d[Math.max(0, i - 1)]!, d[i]!, d[Math.min(d.length - 1, i + 1)]!].sort((a, b) => a - b)[1]!;
      const k = d[i]! > 1e-9 ? w / d[i]! : 1;
      return [c[0] + (e[0] - c[0]) * k, c[1] + (e[1] - c[1]) * k];
    });
  };
  return { centre: s.centre, left: side(s.left), right: side(s.right) };
}
