// Step: one person out of a group photo. Person segmenters (Selfie, Meet) mark everyone; pose
// models see one person per crop. This step picks the target person and cuts the segmenter's mask
// down to that person's instance:
//   target   the largest, most central person: each face (BlazeFace) scores by the one rule of
//            steps/target-face.ts (box area x (1 - 0.6 x its distance from the photo's centre
//            over half the diagonal)); the best face that has a body detection (the one whose face box is nearest it; a
//            face cut by the photo's edge may have none) is the target (without faces: the body
//            detections scored the same way)
//   split    every person-mask pixel goes to the nearest skeleton (the target's and every other
//            person's capsules: limbs and torso from pose landmarks, heads from face boxes), a
//            Voronoi split by distance to the skeleton's surface; pixels farther than `reach`
//            from the target's skeleton (or each shape's own reach) are cut off (neighbours
//            nobody detected); the connected part around the target's torso is the instance
// Pure typed-array code (it runs inside the inference threads).
import type { Face } from './face-detection.ts';
import type { Detection } from './mediapipe.ts';
import { targetScore } from './target-face.ts';

export type Pt = [number, number];

/** A capsule: segment a-b with radius r (a disc when a = b), or a filled convex polygon. */
export type Shape = { a: Pt; b: Pt; r: number } | { poly: Pt[] };

const faceSide = (f: Face) => Math.max(f.box.width, f.box.height);
const centrality = (cx: number, W: number) => 1 - (0.6 * Math.abs(cx - W / 2)) / W;

/** The target face: the largest, most central (the rule every pipeline uses: steps/target-face.ts). */
export function targetFaceIndex(faces: readonly Face[], W: number, H: number): number {
  let best = -1, bestScore = -Infinity;
  faces.forEach((f, i) => {
    const s = targetScore(f, W, H);
    if (s > bestScore) (bestScore = s), (best = i);
  });
  return best;
}

/** The body detection (pose detector, pixels) belonging to a face: the nearest face box centre, within a face size. */
export function bodyOfFace(face: Face, bodies: readonly Detection[]): number {
  const fx = face.box.x + face.box.width / 2, fy = face.box.y + face.box.height / 2;
  let best = -1, bestD = Infinity;
  bodies.forEach((d, i) => {
    const dist = Math.hypot(d.xMin + d.width / 2 - fx, d.yMin + d.height / 2 - fy) / Math.max(1, faceSide(face));
    if (dist < bestD) (bestD = dist), (best = i);
  });
  return bestD <= 1.2 ? best : -1;
}

/** Without a face: the body detection with the largest box x centrality. */
export function targetBodyIndex(bodies: readonly Detection[], W: number): number {
  let best = -1, bestScore = -Infinity;
  bodies.forEach((d, i) => {
    const s = Math.max(d.width, d.height) * centrality(d.xMin + d.width / 2, W);
    if (s > bestScore) (bestScore = s), (best = i);
  });
  return best;
}

/** Distance from (x, y) to a shape's surface (0 inside). */
export function shapeDistance(s: Shape, x: number, y: number): number {
  if ('poly' in s) {
    const p = s.poly;
    let inside = true, d = Infinity, sign = 0;
    for (let i = 0; i < p.length; i++) {
      const a = p[i]!, b = p[(i + 1) % p.length]!;
      const cross = (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
      if (cross !== 0) {
        if (sign === 0) sign = Math.sign(cross);
        else if (Math.sign(cross) !== sign) inside = false;
      }
      d = Math.min(d, segmentDistance(a, b, x, y));
    }
    return inside ? 0 : d;
  }
  return Math.max(0, segmentDistance(s.a, s.b, x, y) - s.r);
}

export function segmentDistance(a: Pt, b: Pt, x: number, y: number): number {
  const dx = b[0] - a[0], dy = b[1] - a[1];
  const l2 = dx * dx + dy * dy;
  const t = l2 > 0 ? Math.max(0, Math.min(1, ((x - a[0]) * dx + (y - a[1]) * dy) / l2)) : 0;
  const ex = x - a[0] - t * dx, ey = y - a[1] - t * dy;
  // Math.sqrt, not Math.hypot: this runs per pixel (grid cell) for every shape, and hypot's
  // overflow care costs several times as much.
  return Math.sqrt(ex * ex + ey * ey);
}

/** Whether any shape of any of `people` is nearer (x, y) than `d` (stops at the first one). */
function nearerThan(people: ReadonlyArray<readonly Shape[]>, x: number, y: number, d: number): boolean {
  for (const shapes of people) for (const s of shapes) if (shapeDistance(s, x, y) < d) return true;
  return false;
}

/** Grid step of the distance evaluation (pixels). */
const G = 3;

export interface InstanceOptions {
  /** Pixels farther than this from the target's skeleton surface are never the target's. */
  reach: number;
  /** Per target shape (same order), its own reach in place of `reach` (limbs reach less far than the torso). */
  reaches?: readonly number[];
  /** Mask threshold (0..255). */
  threshold?: number;
  /** Where the target's body is for sure (the connected part around it is kept). */
  seed: Pt;
}

/**
 * The target's instance: mask pixels nearer the target's skeleton than any other's, within `reach`,
 * connected to `seed`. Distances are evaluated on a 3x coarser grid (the skeletons are smooth).
 * Returns 0/1 at full resolution.
 */
export function splitInstance(mask: Uint8Array, W: number, H: number, target: readonly Shape[], others: ReadonlyArray<readonly Shape[]>, o: InstanceOptions): Uint8Array {
  const th = o.threshold ?? 127;
  const gw = Math.ceil(W / G), gh = Math.ceil(H / G);
  // Only grid cells with mask pixels are evaluated.
  const any = cellsOver(mask, W, H, th, gw, gh);
  const own = new Uint8Array(gw * gh);
  for (let gy = 0; gy < gh; gy++) {
    for (let gx = 0; gx < gw; gx++) {
      if (!any[gy * gw + gx]) continue;
      const x = G * gx + G / 2, y = G * gy + G / 2;
      let dt = Infinity, within = false;
      for (let k = 0; k < target.length; k++) {
        const d = shapeDistance(target[k]!, x, y);
        if (d < dt) dt = d;
        if (d <= (o.reaches?.[k] ?? o.reach)) within = true;
      }
      if (!within) continue;
      own[gy * gw + gx] = nearerThan(others, x, y, dt) ? 0 : 1;
    }
  }
  const cand = pixelsOver(mask, W, H, th, own, gw);
  // The connected part around the seed (or the candidate pixel nearest it).
  let start = -1;
  const sx = Math.round(o.seed[0]), sy = Math.round(o.seed[1]);
  for (let r = 0; r < Math.max(W, H) && start < 0; r += 2) {
    for (let y = Math.max(0, sy - r); y <= Math.min(H - 1, sy + r) && start < 0; y++) {
      for (let x = Math.max(0, sx - r); x <= Math.min(W - 1, sx + r); x++) if (cand[y * W + x]) { start = y * W + x; break; }
    }
  }
  return connected(cand, W, H, start);
}

/** Grid cells (G x G pixels, gw x gh) holding a pixel of `mask` over `th`. */
function cellsOver(mask: Uint8Array, W: number, H: number, th: number, gw: number, gh: number): Uint8Array {
  const any = new Uint8Array(gw * gh);
  for (let y = 0; y < H; y++) {
    const cells = ((y / G) | 0) * gw;
    for (let x = 0, i = y * W; x < W; x++, i++) if (mask[i]! > th) any[cells + ((x / G) | 0)] = 1;
  }
  return any;
}

/** Pixels of `mask` over `th` whose grid cell is set in `own`. */
function pixelsOver(mask: Uint8Array, W: number, H: number, th: number, own: Uint8Array, gw: number): Uint8Array {
  const cand = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    const cells = ((y / G) | 0) * gw;
    for (let x = 0, i = y * W; x < W; x++, i++) if (mask[i]! > th && own[cells + ((x / G) | 0)]) cand[i] = 1;
  }
  return cand;
}

/** The 4-connected part of `cand` around pixel `start` (-1: none), with a typed stack (each pixel pushed once). */
function connected(cand: Uint8Array, W: number, H: number, start: number): Uint8Array {
  const out = new Uint8Array(W * H);
  if (start < 0) return out;
  const stack = new Int32Array(W * H);
  let top = 0;
  stack[top++] = start;
  out[start] = 1;
  const n = out.length;
  while (top > 0) {
    const i = stack[--top]!;
    const x = i % W;
    if (x > 0 && cand[i - 1] && !out[i - 1]) (out[i - 1] = 1), (stack[top++] = i - 1);
    if (x < W - 1 && cand[i + 1] && !out[i + 1]) (out[i + 1] = 1), (stack[top++] = i + 1);
    if (i - W >= 0 && cand[i - W] && !out[i - W]) (out[i - W] = 1), (stack[top++] = i - W);
    if (i + W < n && cand[i + W] && !out[i + W]) (out[i + W] = 1), (stack[top++] = i + W);
  }
  return out;
}
