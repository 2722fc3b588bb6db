// Garment parts as strips: a part (torso, sleeve, trouser leg, pelvis, skirt) is a centre line
// sampled at fixed stations with an image-left and an image-right edge point at each. The garment
// photo and the body each give the same strips (same stations), and each part is warped by a
// thin-plate spline through its pairs (warp.ts), so a sleeve bends at the elbow, a leg follows the
// knee, and the torso takes the body's width row by row.
//   body strips  torso: stations from the shoulder line down the spine, edges measured on the
//                target's instance (arms cut out) along the across direction; sleeves: along
//                shoulder -> elbow -> wrist by arc length; legs: hip -> knee -> ankle
//   clips        where each part may land: the instance (dilated a little), the torso without the
//                arms that are in front, an arm's or a leg's capsule, the skirt's hull
import type { ClothesType } from '../../domain/job.ts';
import { dilate } from '../../imaging/morphology.ts';
import { shapeDistance, type Shape } from '../../steps/person-instance.ts';
import { add, arm, armShapes, leg, len, lerp, mid, perp, sub, unit, type Body, type P } from './body.ts';

export interface Strip {
  centre: P[];
  left: P[];
  right: P[];
}

export type PartName = 'torso' | 'sleeveL' | 'sleeveR' | 'pelvis' | 'legL' | 'legR' | 'skirt';
export type Strips = Partial<Record<PartName, Strip>>;

export const TORSO_STATIONS = [0, 0.15, 0.3, 0.45, 0.6, 0.8, 1];
export const LIMB_STATIONS = [0, 0.33, 0.67, 1];
export const PELVIS_STATIONS = [0, 0.5, 1];

/** Point and direction at arc length s along a polyline (extended past its end along the last segment). */
export function alongPolyline(pts: P[], s: number): { p: P; d: P } {
  let acc = 0;
  for (let i = 0; i + 1 < pts.length; i++) {
    const seg = len(sub(pts[i + 1]!, pts[i]!));
    const last = i + 2 === pts.length;
    if (s <= acc + seg || last) {
      const t = (s - acc) / seg;
      const d = unit(sub(pts[i + 1]!, pts[i]!));
      // Near a joint the direction turns smoothly (the bisector), so the edges do not cross.
      const near = 0.15 * seg;
      let dir = d;
      if (!last && s > acc + seg - near) {
        const nd = unit(sub(pts[i + 2]!, pts[i + 1]!));
        const k = (s - (acc + seg - near)) / (2 * near);
        dir = unit(lerp(d, nd, Math.min(0.5, k)));
      } else if (i > 0 && s < acc + near) {
        const pd = unit(sub(pts[i]!, pts[i - 1]!));
        const k = 0.5 - (s - acc) / (2 * near);
        dir = unit(lerp(d, pd, Math.max(0, k)));
      }
      return { p: add(pts[i]!, d, t * seg), d: dir };
    }
    acc += seg;
  }
  return { p: pts[0]!, d: [0, 1] };
}

export const polylineLength = (pts: P[]) => pts.slice(1).reduce((s, p, i) => s + len(sub(p, pts[i]!)), 0);

/** A limb strip: stations along `pts` from arc `start` for `length`, half-widths per station. */
export function limbStrip(pts: P[], start: number, length: number, half: number[]): Strip {
  const s: Strip = { centre: [], left: [], right: [] };
  LIMB_STATIONS.forEach((f, i) => {
    const { p, d } = alongPolyline(pts, start + f * length);
    const n = perp(d);
    s.centre.push(p);
    s.left.push(add(p, n, half[i]!));
    s.right.push(add(p, n, -half[i]!));
  });
  return s;
}

/**
 * Walks from `c` along `u` and returns the distance to the farthest pixel of `allowed` reached
 * without crossing more than `gap` pixels in a row of `stop` pixels (background); `skip` pixels
 * (an arm in front) neither count nor stop. Capped at `max`.
 */
export function edgeDistance(c: P, u: P, max: number, gap: number, allowed: Uint8Array, skip: Uint8Array | null, W: number, H: number): number | null {
  let last: number | null = null, run = 0;
  for (let d = 0; d <= max; d += 1) {
    const x = Math.round(c[0] + u[0] * d), y = Math.round(c[1] + u[1] * d);
    if (x < 0 || y < 0 || x >= W || y >= H) return d;
    const i = y * W + x;
    if (allowed[i]) (last = d), (run = 0);
    else if (!skip || !skip[i]) if (++run > gap) break;
  }
  return last;
}

/** Rasterizes shapes into a 0/1 mask (within their bounding boxes). */
export function shapesMask(shapes: readonly Shape[], W: number, H: number): Uint8Array {
  const out = new Uint8Array(W * H);
  for (const s of shapes) {
    const pts = 'poly' in s ? s.poly : [s.a, s.b];
    const r = 'poly' in s ? 0 : s.r;
    const x0 = Math.max(0, Math.floor(Math.min(...pts.map((p) => p[0])) - r)), x1 = Math.min(W - 1, Math.ceil(Math.max(...pts.map((p) => p[0])) + r));
    const y0 = Math.max(0, Math.floor(Math.min(...pts.map((p) => p[1])) - r)), y1 = Math.min(H - 1, Math.ceil(Math.max(...pts.map((p) => p[1])) + r));
    for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) if (!out[y * W + x] && shapeDistance(s, x + 0.5, y + 0.5) <= 0) out[y * W + x] = 1;
  }
  return out;
}

/** Lengths of the garment's parts on this body (pixels): torso (from the shoulder line), sleeves, legs, pelvis. */
export interface PartLengths {
  torso?: number;
  sleeveL?: number;
  sleeveR?: number;
  legL?: number;
  legR?: number;
  skirt?: number;
}

export interface BodyParts {
  strips: Strips;
  clips: Partial<Record<PartName, Uint8Array>>;
  /** Arms (forearms + hands) in front of the torso, hands: never covered. */
  arms: Uint8Array;
  hands: Uint8Array;
  /** Where old clothing may be replaced (the type's band of the body). */
  band: Uint8Array;
}

/** Row-filled hull of a mask along `across` (gaps between the legs filled), within a band of rows. */
function hullFill(mask: Uint8Array, W: number, H: number, yFrom: number): Uint8Array {
  const out = Uint8Array.from(mask);
  for (let y = Math.max(0, Math.floor(yFrom)); y < H; y++) {
    let a = -1, b = -1;
    for (let x = 0; x < W; x++) if (mask[y * W + x]) (a < 0 && (a = x), (b = x));
    if (a >= 0) out.fill(1, y * W + a, y * W + b + 1);
  }
  return out;
}

/** The body's strips and clips for a clothes type (`lengths` from the garment, scaled to this body). */
export function bodyParts(b: Body, instance: Uint8Array, type: ClothesType, lengths: PartLengths, skirtLike: boolean): BodyParts {
  const { W, H, size, across, down } = b;
  const grown = dilate(instance, W, H, Math.max(1, Math.round(0.02 * size)));
  const arms = shapesMask(armShapes(b, { upper: false }), W, H);
  const hands = shapesMask(armShapes(b, { upper: false, forearm: false }), W, H);
  const upperArms = shapesMask(armShapes(b, { forearm: false, hands: false }), W, H);
  const armsAll = Uint8Array.from(arms, (v, i) => (v || upperArms[i] ? 1 : 0));
  const torsoAllowed = Uint8Array.from(instance, (v, i) => (v && !armsAll[i] ? 1 : 0));
  const strips: Strips = {};
  const clips: BodyParts['clips'] = {};
  const hipRow = Math.min(b.L.hip[1], b.R.hip[1]);
  const hull = hullFill(grown, W, H, hipRow - 0.1 * b.tl);

  /** Torso-like strip from `top` along `dir` for `length`, edges measured on `allowed`. */
  const measured = (top: P, dir: P, length: number, stations: number[], allowed: Uint8Array, skip: Uint8Array | null, minHalf: number, maxHalf: number, fixed?: (f: number) => [number, number] | null): Strip => {
    const s: Strip = { centre: [], left: [], right: [] };
    const n: P = unit(perp(dir));
    const acrossN: P = n[0] * across[0] + n[1] * across[1] >= 0 ? n : [-n[0], -n[1]];
    for (const f of stations) {
      const c = add(top, dir, f * length);
      const fx = fixed?.(f);
      const dl = fx ? fx[0] : edgeDistance(c, [-acrossN[0], -acrossN[1]], maxHalf, Math.round(0.06 * size), allowed, skip, W, H);
      const dr = fx ? fx[1] : edgeDistance(c, acrossN, maxHalf, Math.round(0.06 * size), allowed, skip, W, H);
      const hl = Math.min(maxHalf, Math.max(minHalf, dl ?? minHalf)), hr = Math.min(maxHalf, Math.max(minHalf, dr ?? minHalf));
      s.centre.push(c);
      s.left.push(add(c, acrossN, -hl * 1.04));
      s.right.push(add(c, acrossN, hr * 1.04));
    }
    return s;
  };

  if (type !== 'lower_body') {
    const length = lengths.torso ?? 1.1 * b.tl;
    // Above the armpits the torso's edges are the shoulders' (the arms are there); below, measured.
    const sideShoulder = (f: number): [number, number] | null => {
      const depth = f * length;
      if (depth > 0.28 * b.tl) return null;
      const k = depth / (0.28 * b.tl);
      const half = 0.5 * b.sw + 0.1 * size;
      return [half * (1 - 0.25 * k), half * (1 - 0.25 * k)];
    };
    const allowed = type === 'dresses' ? Uint8Array.from(torsoAllowed, (v, i) => (v || (hull[i] && !armsAll[i]) ? 1 : 0)) : torsoAllowed;
    strips.torso = measured(b.neck, down, length, TORSO_STATIONS, allowed, armsAll, 0.3 * size, 1.1 * size, sideShoulder);
    // Arms beside or in front of the torso stay out of it (a sleeve, if any, covers them).
    const base = type === 'dresses' ? hull : grown;
    clips.torso = new Uint8Array(W * H);
    for (let i = 0; i < base.length; i++) if (base[i] && !armsAll[i]) clips.torso[i] = 1;
    for (const s of ['L', 'R'] as const) {
      const l = lengths[`sleeve${s}`];
      if (!l) continue;
      const chain = arm(b, s);
      const full = polylineLength(chain);
      const length = Math.min(l, 1.08 * full);
      const half = LIMB_STATIONS.map((f) => (0.17 - 0.06 * f) * size);
      strips[`sleeve${s}`] = limbStrip(chain, 0, length, half);
      const end = alongPolyline(chain, length).p;
      const caps: Shape[] = [{ a: b[s].shoulder, b: b[s].shoulder, r: 0.2 * size }];
      // The arm's capsule up to the sleeve's end (a short sleeve ends on the upper arm).
      const pts = [chain[0]!];
      let acc = 0;
      for (let i = 1; i < chain.length && acc < length; i++) {
        const seg = len(sub(chain[i]!, chain[i - 1]!));
        pts.push(acc + seg > length ? end : chain[i]!);
        acc += seg;
      }
      for (let i = 1; i < pts.length; i++) caps.push({ a: pts[i - 1]!, b: pts[i]!, r: (i === 1 ? 0.17 : 0.14) * size });
      // Never above the shoulder line (the torso part makes the shoulder's outline).
      const capMask = shapesMask(caps, W, H);
      const clip = new Uint8Array(W * H);
      const sh = b[s].shoulder;
      for (let i = 0; i < clip.length; i++) {
        if (!capMask[i] || !grown[i]) continue;
        const x = i % W, y = (i - x) / W;
        if ((x - sh[0]) * down[0] + (y - sh[1]) * down[1] >= -0.02 * size) clip[i] = 1;
      }
      clips[`sleeve${s}`] = clip;
    }
  } else {
    const waist = add(b.pelvis, down, -0.12 * b.tl);
    const crotch = 0.3 * b.tl;
    if (skirtLike) {
      const kneeMid = mid(b.L.knee, b.R.knee);
      const dir = unit(sub(kneeMid, waist));
      strips.skirt = measured(waist, dir, lengths.skirt ?? 1.2 * b.tl, TORSO_STATIONS, Uint8Array.from(hull, (v, i) => (v && !arms[i] ? 1 : 0)), arms, 0.3 * size, 1.2 * size);
      clips.skirt = Uint8Array.from(hull, (v, i) => (v && !arms[i] ? 1 : 0));
    } else {
      const allowed = Uint8Array.from(instance, (v, i) => (v && !arms[i] ? 1 : 0));
      strips.pelvis = measured(waist, down, crotch, PELVIS_STATIONS, allowed, arms, 0.3 * size, 1.0 * size);
      clips.pelvis = Uint8Array.from(grown, (v, i) => (v && !arms[i] ? 1 : 0));
      for (const s of ['L', 'R'] as const) {
        const l = lengths[`leg${s}`];
        if (!l) continue;
        const chain = leg(b, s);
        const start = Math.min(0.6 * len(sub(chain[1]!, chain[0]!)), 0.18 * b.tl);
        const full = polylineLength(chain) - start;
        const length = Math.min(l, 1.1 * full);
        // The leg's width measured on the instance across its axis at each station.
        const half = LIMB_STATIONS.map((f) => {
          const { p, d } = alongPolyline(chain, start + f * length);
          const n = perp(d);
          const a = edgeDistance(p, n, 0.4 * size, Math.round(0.03 * size), instance, null, W, H);
          const c = edgeDistance(p, [-n[0], -n[1]], 0.4 * size, Math.round(0.03 * size), instance, null, W, H);
          const m = Math.max(a ?? 0, c ?? 0) || (0.24 - 0.1 * f) * size;
          return 1.08 * Math.min(0.36 * size, Math.max(0.1 * size, m));
        });
        strips[`leg${s}`] = limbStrip(chain, start, length, half);
        const end = alongPolyline(chain, start + length).p;
        const caps: Shape[] = [{ a: chain[0]!, b: chain[1]!, r: Math.max(0.26 * size, half[1]!) }];
        caps.push({ a: chain[1]!, b: start + length > len(sub(chain[1]!, chain[0]!)) ? end : chain[1]!, r: Math.max(0.18 * size, half[3]!) });
        clips[`leg${s}`] = Uint8Array.from(shapesMask(caps, W, H), (v, i) => (v && grown[i] && !arms[i] ? 1 : 0));
      }
    }
  }

  // The band where uncovered old clothing is replaced: the garment's own part of the body.
  const band = new Uint8Array(W * H);
  const top = type === 'lower_body' ? add(b.pelvis, down, -0.2 * b.tl) : add(b.neck, down, 0.05 * b.tl);
  const bottom = type === 'upper_body' ? add(b.pelvis, down, 0.1 * b.tl) : type === 'dresses' ? add(b.pelvis, down, 0.4 * b.tl) : add(b.pelvis, down, 0.6 * b.tl);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      if (!instance[i] || arms[i]) continue;
      const t = ((x - top[0]) * down[0] + (y - top[1]) * down[1]) / Math.max(1, len(sub(bottom, top)));
      if (t >= 0 && t <= 1 && !(type !== 'lower_body' && armsAll[i])) band[i] = 1;
    }
  }
  return { strips, clips, arms, hands, band };
}
