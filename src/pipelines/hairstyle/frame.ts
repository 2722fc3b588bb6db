// The canonical face frame templates are drawn in. From the 468 FaceMesh landmarks:
//   origin  on the eye line, at the skull's centre line (the eyes' midpoint on a frontal face)
//   u axis  along the eye line, towards the image-right eye; v axis perpendicular, towards the chin
//   unit    the face width between the cheek extremes (landmarks 234 and 454), measured in 3D
// Anchors measured in that frame (forehead top, brows, ear level, chin, face half-width) let one
// template fit every head, at any size and roll.
import { FACE_OVAL } from '../../steps/face-mesh.ts';

const BROWS = [70, 63, 105, 66, 107, 55, 65, 52, 53, 46, 300, 293, 334, 296, 336, 285, 295, 282, 283, 276];

export interface Frame {
  ox: number;
  oy: number;
  /** Unit vector of u, in pixels per unit, times the scale: pixel = o + s*(u*ux + v*vx). */
  ux: number;
  uy: number;
  scale: number;
}

export interface Anchors {
  /** v of the forehead top (landmark 10). */
  forehead: number;
  /** u of the forehead top: where the head's midline crosses the hairline (off 0 on a turned face). */
  midline: number;
  /** v of the top of the eyebrows. */
  brows: number;
  /** v of the ear level (cheek extremes). */
  ears: number;
  /** v of the chin (landmark 152). */
  chin: number;
  /** Half the face width at the eyes (about 0.5). */
  halfWidth: number;
  /**
   * How far the head is turned, -1..1: the sine of the yaw (yawDegrees), positive where the
   * image-right cheek is the farther one (the ears: ears.ts).
   */
  turn: number;
  /**
   * Face-oval half-width at v on one side (side < 0: the image-left half, > 0: the right half;
   * 0: the wider of the two), interpolated from the landmarks of that side only: a turned face's
   * halves differ, and mixing them made a zigzag edge.
   */
  ovalHalfWidth(v: number, side?: number): number;
}

export function makeFrame(lm: ReadonlyArray<readonly [number, number, number]>): Frame {
  const avg = (ids: number[]) => ids.reduce((acc, i) => [acc[0]! + lm[i]![0] / ids.length, acc[1]! + lm[i]![1] / ids.length], [0, 0]);
  const [rx, ry] = avg([33, 133]) as [number, number];
  const [lx, ly] = avg([362, 263]) as [number, number];
  const dx = lx - rx;
  const dy = ly - ry;
  const d = Math.hypot(dx, dy) || 1;
  const ux = dx / d, uy = dy / d;
  // The face width in 3D (FaceMesh's z is in pixels too): a face turned sideways keeps its size.
  const [a, b] = [lm[234]!, lm[454]!];
  const scale = Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
  // The skull's centre line: between the cheek extremes, moved away from where the nose points by
  // a quarter of the nose's offset (the back of the head shows on the far side of a turned face;
  // more than a quarter left the near side of the forehead bare). Zero for a frontal face, where
  // it is the eyes' midpoint as before.
  const ex = (rx + lx) / 2, ey = (ry + ly) / 2;
  const along = (x: number, y: number) => (x - ex) * ux + (y - ey) * uy;
  const cheeks = along((a[0] + b[0]) / 2, (a[1] + b[1]) / 2);
  const nose = along(lm[4]![0], lm[4]![1]);
  const shift = cheeks - 0.25 * (nose - cheeks);
  return { ox: ex + shift * ux, oy: ey + shift * uy, ux, uy, scale };
}

/** Yaw of the head in degrees (0 = frontal): the cheek-to-cheek line's angle out of the picture plane. */
export function yawDegrees(lm: ReadonlyArray<readonly [number, number, number]>): number {
  const [a, b] = [lm[234]!, lm[454]!];
  return (Math.atan2(b[2] - a[2], Math.hypot(b[0] - a[0], b[1] - a[1])) * 180) / Math.PI;
}

export function toFrame(f: Frame, x: number, y: number): [number, number] {
  const px = x - f.ox;
  const py = y - f.oy;
  return [(px * f.ux + py * f.uy) / f.scale, (-px * f.uy + py * f.ux) / f.scale];
}

/** u alone (no array: the per-pixel loops call these millions of times). */
export function frameU(f: Frame, x: number, y: number): number {
  return ((x - f.ox) * f.ux + (y - f.oy) * f.uy) / f.scale;
}

/** v alone. */
export function frameV(f: Frame, x: number, y: number): number {
  return (-(x - f.ox) * f.uy + (y - f.oy) * f.ux) / f.scale;
}

export function fromFrame(f: Frame, u: number, v: number): [number, number] {
  return [f.ox + f.scale * (u * f.ux - v * f.uy), f.oy + f.scale * (u * f.uy + v * f.ux)];
}

/**
 * The pixel box (x1, y1 exclusive, clamped to W x H) holding the frame's rectangle u0..u1 x v0..v1,
 * turned with the head: the rows and columns a loop over that part of the frame must walk.
 */
export function frameBox(f: Frame, u0: number, u1: number, v0: number, v1: number, W: number, H: number): { x0: number; x1: number; y0: number; y1: number } {
  const corners = [fromFrame(f, u0, v0), fromFrame(f, u1, v0), fromFrame(f, u0, v1), fromFrame(f, u1, v1)];
  return {
    x0: Math.max(0, Math.floor(Math.min(...corners.map((c) => c[0])))),
    x1: Math.min(W, Math.ceil(Math.max(...corners.map((c) => c[0])))),
    y0: Math.max(0, Math.floor(Math.min(...corners.map((c) => c[1])))),
    y1: Math.min(H, Math.ceil(Math.max(...corners.map((c) => c[1])))),
  };
}

/**
 * The jaw line: v of the face oval's lower edge at u (the lowest v at which the oval, on u's side,
 * is at least |u| wide), tabled in steps of 0.01 face widths up to |u| = 0.5; beyond the oval's
 * reach, the brows' v.
 */
export function jawLine(anchors: Anchors): (u: number) => number {
  const STEPS = 50;
  const table = [-1, 1].map((side) =>
    Float64Array.from({ length: STEPS + 1 }, (_, k) => {
      for (let v = anchors.chin; v > anchors.brows; v -= 0.005) if (anchors.ovalHalfWidth(v, side) >= k / 100) return v;
      return anchors.brows;
    }),
  );
  return (u) => table[u < 0 ? 0 : 1]![Math.min(STEPS, Math.round(Math.abs(u) * 100))]!;
}

/** Roll of the face in degrees (0 = eyes level). */
export function rollDegrees(f: Frame): number {
  return (Math.atan2(f.uy, f.ux) * 180) / Math.PI;
}

/**
 * How far above FaceMesh's forehead landmark (10) the hairline lies at the midline (face widths),
 * where hair does not hide it: the parser's hair edge lies 0.15-0.35 above it on the development
 * photos whose forehead shows (the landmark is the mesh's top, not the hairline); a little lower
 * here, so a short cut's hair still meets what the old hair may have hidden.
 */
export const NATURAL_HAIRLINE = 0.1;
/**
 * How far below the forehead landmark (face widths) the oval is as wide as the forehead: above the
 * landmark (the oval's top) the forehead is taken that wide, up to the natural hairline. The oval's
 * own width there is its topmost points', a narrow column.
 */
export const FOREHEAD_WIDTH_BELOW = 0.1;

export function anchorsOf(f: Frame, lm: ReadonlyArray<readonly [number, number, number]>): Anchors {
  const uv = (i: number) => toFrame(f, lm[i]![0], lm[i]![1]);
  const oval = FACE_OVAL.map(uv);
  // One table per side: (v, |u|) of that side's oval points, sorted by v, interpolated.
  const table = (sign: number) => oval.filter(([u]) => Math.sign(u) === sign || Math.abs(u) < 1e-3).map(([u, v]) => [v, Math.abs(u)] as const).sort((a, b) => a[0] - b[0]);
  const tables = [table(-1), table(1)] as const;
  const interp = (t: ReadonlyArray<readonly [number, number]>, v: number) => {
    if (t.length === 0) return 0.5;
    if (v <= t[0]![0]) return t[0]![1];
    if (v >= t[t.length - 1]![0]) return t[t.length - 1]![1];
    let i = 1;
    while (t[i]![0] < v) i++;
    const [v0, w0] = t[i - 1]!;
    const [v1, w1] = t[i]!;
    return v1 === v0 ? Math.max(w0, w1) : w0 + ((w1 - w0) * (v - v0)) / (v1 - v0);
  };
  const ovalHalfWidth = (v: number, side = 0) => (side < 0 ? interp(tables[0], v) : side > 0 ? interp(tables[1], v) : Math.max(interp(tables[0], v), interp(tables[1], v)));
  return {
    forehead: uv(10)[1],
    midline: uv(10)[0],
    brows: Math.min(...BROWS.map((i) => uv(i)[1])),
    ears: (uv(234)[1] + uv(454)[1]) / 2,
    chin: uv(152)[1],
    halfWidth: Math.max(Math.abs(uv(33)[0]), Math.abs(uv(263)[0])) + 0.08,
    turn: Math.sin((yawDegrees(lm) * Math.PI) / 180),
    ovalHalfWidth,
  };
}
