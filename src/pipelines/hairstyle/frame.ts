// The canonical face frame templates are drawn in. From the 468 FaceMesh landmarks:
//   origin  the midpoint of the two eye centres
//   u axis  along the eye line, towards the image-right eye; v axis perpendicular, towards the chin
//   unit    the face width between the cheek extremes (landmarks 234 and 454)
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
  /** v of the top of the eyebrows. */
  brows: number;
  /** v of the ear level (cheek extremes). */
  ears: number;
  /** v of the chin (landmark 152). */
  chin: number;
  /** Half the face width at the eyes (about 0.5). */
  halfWidth: number;
  /** Face-oval half-width as a function of v (interpolated from the landmarks). */
  ovalHalfWidth(v: number): number;
}

export function makeFrame(lm: ReadonlyArray<readonly [number, number, number]>): Frame {
  const avg = (ids: number[]) => ids.reduce((acc, i) => [acc[0]! + lm[i]![0] / ids.length, acc[1]! + lm[i]![1] / ids.length], [0, 0]);
  const [rx, ry] = avg([33, 133]) as [number, number];
  const [lx, ly] = avg([362, 263]) as [number, number];
  const dx = lx - rx;
  const dy = ly - ry;
  const d = Math.hypot(dx, dy) || 1;
  const scale = Math.hypot(lm[454]![0] - lm[234]![0], lm[454]![1] - lm[234]![1]);
  return { ox: (rx + lx) / 2, oy: (ry + ly) / 2, ux: dx / d, uy: dy / d, scale };
}

export function toFrame(f: Frame, x: number, y: number): [number, number] {
  const px = x - f.ox;
  const py = y - f.oy;
  return [(px * f.ux + py * f.uy) / f.scale, (-px * f.uy + py * f.ux) / f.scale];
}

export function fromFrame(f: Frame, u: number, v: number): [number, number] {
  return [f.ox + f.scale * (u * f.ux - v * f.uy), f.oy + f.scale * (u * f.uy + v * f.ux)];
}

/** Roll of the face in degrees (0 = eyes level). */
export function rollDegrees(f: Frame): number {
  return (Math.atan2(f.uy, f.ux) * 180) / Math.PI;
}

export function anchorsOf(f: Frame, lm: ReadonlyArray<readonly [number, number, number]>): Anchors {
  const uv = (i: number) => toFrame(f, lm[i]![0], lm[i]![1]);
  const oval = FACE_OVAL.map(uv);
  // Half-width of the oval at each v: from the oval's points, as a sorted table to interpolate.
  const table = oval.map(([u, v]) => [v, Math.abs(u)] as const).sort((a, b) => a[0] - b[0]);
  const ovalHalfWidth = (v: number) => {
    if (v <= table[0]![0]) return table[0]![1];
    if (v >= table[table.length - 1]![0]) return table[table.length - 1]![1];
    let i = 1;
    while (table[i]![0] < v) i++;
    const [v0, w0] = table[i - 1]!;
    const [v1, w1] = table[i]!;
    return v1 === v0 ? Math.max(w0, w1) : w0 + ((w1 - w0) * (v - v0)) / (v1 - v0);
  };
  return {
    forehead: uv(10)[1],
    brows: Math.min(...BROWS.map((i) => uv(i)[1])),
    ears: (uv(234)[1] + uv(454)[1]) / 2,
    chin: uv(152)[1],
    halfWidth: Math.max(Math.abs(uv(33)[0]), Math.abs(uv(263)[0])) + 0.08,
    ovalHalfWidth,
  };
}
