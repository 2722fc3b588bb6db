// The garment: its mask, its parts and their strips (parts.ts), in the garment photo's pixels.
//   product photo   background colour estimated from the border (median), pixels far from it
//                   (CIE Lab distance) kept, a morphological close, holes filled (what the border
//                   flood cannot reach), the largest blob kept; then the parts from the mask's
//                   rows: shoulders (6% down), the armpits (where the central run widens going
//                   up), sleeves (outside the shoulder-armpit lines), the torso between; for
//                   lower_body the waistband, the crotch (where the legs part) and the legs, or a
//                   skirt (one run to the hem)
//   worn garment    a person wearing it (garment-worn.ts)
import type { ClothesType } from '../../domain/job.ts';
import { bleedColours, cropRgb, type RgbImage } from '../../imaging/image.ts';
import { close, dilate, erode, fillHoles, maskBox } from '../../imaging/morphology.ts';
import { giveBack, takeInts } from '../../imaging/scratch.ts';
import { labAt } from '../../steps/color.ts';
import { add, len, lerp, mid, perp, sub, unit, type P } from './body.ts';
import { andNot, area, intersect } from './masks.ts';
import { LIMB_STATIONS, PELVIS_STATIONS, TORSO_STATIONS, type PartName, type Strip, type Strips } from './parts.ts';

/** Keeps the largest 4-connected blob. */
function largestBlob(mask: Uint8Array, W: number, H: number): Uint8Array {
  const label = new Int32Array(mask.length);
  const stack = new Int32Array(mask.length);
  let best = 0, bestSize = 0, next = 0;
  for (let s = 0; s < mask.length; s++) {
    if (!mask[s] || label[s]) continue;
    next++;
    let size = 0, top = 0;
    stack[top++] = s;
    label[s] = next;
    while (top > 0) {
      const i = stack[--top]!;
      size++;
      const x = i % W, y = (i - x) / W;
      if (x > 0 && mask[i - 1] && !label[i - 1]) (label[i - 1] = next), (stack[top++] = i - 1);
      if (x < W - 1 && mask[i + 1] && !label[i + 1]) (label[i + 1] = next), (stack[top++] = i + 1);
      if (y > 0 && mask[i - W] && !label[i - W]) (label[i - W] = next), (stack[top++] = i - W);
      if (y < H - 1 && mask[i + W] && !label[i + W]) (label[i + W] = next), (stack[top++] = i + W);
    }
    if (size > bestSize) (bestSize = size), (best = next);
  }
  const out = new Uint8Array(mask.length);
  if (best > 0) for (let i = 0; i < out.length; i++) out[i] = label[i] === best ? 1 : 0;
  return out;
}

/**
 * Garment mask of a product photo on a plain background, and `sealed`: the background the mask's
 * closing sealed off along the outline (the apex of a narrow notch such as a T-shirt's armpit,
 * where the outline's two strokes converge). The mask must keep it (the parts' outlines and strips
 * are measured on it), but the warp must not sample it: a short sleeve samples the whole garment,
 * and the strokes there were a dark V on the sleeve.
 */
export function productMask(img: RgbImage): { mask: Uint8Array; sealed: Uint8Array } {
  const { width: W, height: H, data } = img;
  const border: Array<[number, number, number]> = [];
  for (let x = 0; x < W; x += 2) border.push(labAt(data, x), labAt(data, (H - 1) * W + x));
  for (let y = 0; y < H; y += 2) border.push(labAt(data, y * W), labAt(data, y * W + W - 1));
  const med = (k: 0 | 1 | 2) => border.map((b) => b[k]).sort((a, b) => a - b)[Math.floor(border.length / 2)]!;
  const bg = [med(0), med(1), med(2)];
  const raw = new Uint8Array(W * H);
  for (let i = 0; i < raw.length; i++) {
    const lab = labAt(data, i);
    const dL = lab[0] - bg[0]!, dA = lab[1] - bg[1]!, dB = lab[2] - bg[2]!;
    // The squared distance, or Math.hypot (as before) within rounding of the threshold.
    const d2 = dL * dL + dA * dA + dB * dB;
    raw[i] = (Math.abs(d2 - 144) > 1e-6 ? d2 > 144 : Math.hypot(dL, dA, dB) > 12) ? 1 : 0;
  }
  const r = Math.max(1, Math.round(Math.min(W, H) / 150));
  const closed = close(raw, W, H, r);
  const mask = largestBlob(fillHoles(closed, W, H), W, H);
  // With the strokes along it, and past its tip, where they converge into a solid wedge (the
  // T-shirt's ran 12 px, four closing radii, beyond the light that the closing sealed).
  return { mask, sealed: intersect(dilate(sealedNotches(mask, raw, closed, W, H, 6 * r), W, H, 4 * r), mask) };
}

/**
 * Background pixels the closing added (`closed` but not `raw`) that are reached from outside the
 * mask through such pixels within `reach` steps: notches sealed at their apex. Thin light details
 * inside the garment (pinstripes the closing also fills) are not reached, or, where one runs out
 * to the outline, only for `reach` pixels.
 */
function sealedNotches(mask: Uint8Array, raw: Uint8Array, closed: Uint8Array, W: number, H: number, reach: number): Uint8Array {
  const sealed = new Uint8Array(W * H);
  // One FIFO queue, ring by ring (each pixel enters once), from the thread's scratch pool.
  const queue = takeInts(W * H);
  let tail = 0;
  const added = (j: number) => mask[j] && !raw[j] && closed[j] && !sealed[j];
  for (let i = 0; i < mask.length; i++) {
    if (!added(i)) continue;
    const x = i % W;
    if ((x > 0 && !mask[i - 1]) || (x < W - 1 && !mask[i + 1]) || (i >= W && !mask[i - W]) || (i + W < mask.length && !mask[i + W])) (sealed[i] = 1), (queue[tail++] = i);
  }
  for (let head = 0, step = 1, ringEnd = tail; step < reach && head < tail; ) {
    const i = queue[head++]!;
    const x = i % W;
    if (x > 0 && added(i - 1)) (sealed[i - 1] = 1), (queue[tail++] = i - 1);
    if (x < W - 1 && added(i + 1)) (sealed[i + 1] = 1), (queue[tail++] = i + 1);
    if (i >= W && added(i - W)) (sealed[i - W] = 1), (queue[tail++] = i - W);
    if (i + W < mask.length && added(i + W)) (sealed[i + W] = 1), (queue[tail++] = i + W);
    if (head === ringEnd) (step++, (ringEnd = tail));
  }
  giveBack(queue);
  return sealed;
}

/** Garment photo pixels inside its outline where the parts end (see garmentSamples). */
const GARMENT_EDGE = 3;

/**
 * What the parts' warps sample: `core`, the parts' alpha, and `source`, the colours. The warp
 * samples the garment bilinearly and stretches it where the body is wider than the garment (a hip
 * below a T-shirt's hem): its colours are bled past its outline first, so the anti-aliased fringe
 * and the background beside it (a product photo's white) do not become a pale rim along the
 * body's contour. The parts end GARMENT_EDGE pixels inside the photo's outline: a product photo's
 * outline stroke (or the shadow along its edge), kept, was stretched by the warp into a dark
 * saw-toothed line around the skirt and along the T-shirt's sides. The colours are bled from a
 * pixel further in (square erosions add up: the core's by 1 is the mask's by GARMENT_EDGE + 1),
 * and from as far from a notch the mask's closing sealed: the notch's converging strokes lie inside
 * the mask (a dark V on a short sleeve, which samples the whole garment), and are painted over
 * with the cloth beside them, not cut out (a hole in the sleeve).
 */
export function garmentSamples(g: { image: RgbImage; mask: Uint8Array; sealed?: Uint8Array }): { core: Uint8Array; source: RgbImage } {
  const { width: W, height: H } = g.image;
  const core = erode(g.mask, W, H, GARMENT_EDGE);
  const source = bleedColours(g.image, erode(core, W, H, 1), 8);
  if (g.sealed) paintOverNotches(source, g.mask, g.sealed);
  return { core, source };
}

/**
 * The colours of a sealed notch's zone (and of what lies within GARMENT_EDGE + 1 of it) painted
 * over with the cloth's around it, bled ring by ring from the pixels farther in (as the outline's
 * are), in the zone's box only (24 rings over the whole garment cost ~30 ms on a product photo).
 */
function paintOverNotches(img: RgbImage, mask: Uint8Array, sealed: Uint8Array): void {
  const { width: W, height: H, data } = img;
  const zb = maskBox(sealed, W, H);
  if (!zb) return;
  // The box with room for the zone's grown edge and the cloth around it.
  const m = 4 * (GARMENT_EDGE + 1);
  const x0 = Math.max(0, zb.x - m), y0 = Math.max(0, zb.y - m);
  const bw = Math.min(W, zb.x + zb.width + m) - x0, bh = Math.min(H, zb.y + zb.height + m) - y0;
  const inner = new Uint8Array(bw * bh), zoneSeed = new Uint8Array(bw * bh);
  for (let y = 0; y < bh; y++) {
    for (let x = 0, i = (y + y0) * W + x0; x < bw; x++, i++) (inner[y * bw + x] = mask[i]! && !sealed[i] ? 1 : 0), (zoneSeed[y * bw + x] = sealed[i]!);
  }
  // Rings enough to reach across the zone (the sealed notch grown by four closing radii).
  const crop = cropRgb(img, { x: x0, y: y0, width: bw, height: bh });
  const bled = bleedColours(crop, erode(inner, bw, bh, GARMENT_EDGE + 1), 24).data;
  // The zone grown by what the core's edge samples, inside the mask (grown in the box: the zone
  // lies m >= GARMENT_EDGE + 1 pixels inside it).
  const zone = dilate(zoneSeed, bw, bh, GARMENT_EDGE + 1);
  for (let y = 0; y < bh; y++) {
    for (let x = 0; x < bw; x++) {
      const i = (y + y0) * W + x + x0, j = y * bw + x;
      if (zone[j] && mask[i]) data.set(bled.subarray(3 * j, 3 * j + 3), 3 * i);
    }
  }
}

/** Runs of mask pixels in row y. */
function runs(mask: Uint8Array, W: number, H: number, y: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const yy = Math.min(H - 1, Math.max(0, Math.round(y)));
  let start = -1;
  for (let x = 0; x <= W; x++) {
    const on = x < W && mask[yy * W + x] === 1;
    if (on && start < 0) start = x;
    if (!on && start >= 0) (out.push([start, x - 1]), (start = -1));
  }
  return out;
}

/** The run of row y containing x (or the nearest one). */
function runAt(mask: Uint8Array, W: number, H: number, y: number, x: number): [number, number] | null {
  const r = runs(mask, W, H, y);
  if (!r.length) return null;
  let best = r[0]!, bd = Infinity;
  for (const run of r) {
    const d = x < run[0] ? run[0] - x : x > run[1] ? x - run[1] : 0;
    if (d < bd) (bd = d), (best = run);
  }
  return best;
}

export interface GarmentParts {
  /** Garment-photo strips per part. */
  strips: Strips;
  /** 0/1 part masks in the garment photo (they overlap a little at the joins). */
  masks: Partial<Record<PartName, Uint8Array>>;
  /** Lengths in garment pixels (torso from the shoulder line; sleeves from their root; legs from the crotch). */
  lengths: Partial<Record<PartName, number>>;
  /** Garment width that matches the body's width scale: shoulder to shoulder, or the waistband. */
  width: number;
  /** lower_body: one piece to the hem (a skirt), not two legs. */
  skirt: boolean;
  /** Sleeve ends as a fraction of the garment's length from the shoulders (for the notes). */
  sleeves: boolean;
}

/** A strip along the straight line root -> end in the garment photo, half-widths measured on `mask` across it. */
function straightStrip(mask: Uint8Array, W: number, H: number, root: P, end: P, rootHalf: number): Strip {
  const d = unit(sub(end, root));
  const n = perp(d);
  const s: Strip = { centre: [], left: [], right: [] };
  for (const f of LIMB_STATIONS) {
    const c = lerp(root, end, f);
    const walk = (sign: number) => {
      let last = 2;
      for (let k = 0; k < 0.6 * len(sub(end, root)) + rootHalf; k++) {
        const x = Math.round(c[0] + n[0] * k * sign), y = Math.round(c[1] + n[1] * k * sign);
        if (x < 0 || y < 0 || x >= W || y >= H || !mask[y * W + x]) break;
        last = k;
      }
      return last;
    };
    const half = f === 0 ? rootHalf : Math.max(3, (walk(1) + walk(-1)) / 2);
    s.centre.push(c);
    s.left.push(add(c, n, half));
    s.right.push(add(c, n, -half));
  }
  return s;
}

/** The farthest pixel of `part` from `root`, and the centroid of the part's far end along that axis. */
function limbEnd(part: Uint8Array, W: number, root: P): { end: P; length: number } | null {
  let far: P | null = null, fd = 0;
  for (let i = 0; i < part.length; i++) {
    if (!part[i]) continue;
    const x = i % W, y = (i - x) / W;
    const d = Math.hypot(x - root[0], y - root[1]);
    if (d > fd) (fd = d), (far = [x, y]);
  }
  if (!far) return null;
  const u = unit(sub(far, root));
  let sx = 0, sy = 0, n = 0;
  for (let i = 0; i < part.length; i++) {
    if (!part[i]) continue;
    const x = i % W, y = (i - x) / W;
    if ((x - root[0]) * u[0] + (y - root[1]) * u[1] > 0.9 * fd) (sx += x), (sy += y), n++;
  }
  const end: P = [sx / n, sy / n];
  return { end, length: len(sub(end, root)) };
}

/** Parts of a product photo's garment from its mask. */
export function productParts(mask: Uint8Array, W: number, H: number, type: ClothesType): GarmentParts {
  let top = H, bottom = -1;
  for (let y = 0; y < H; y++) if (runs(mask, W, H, y).length) ((top = Math.min(top, y)), (bottom = y));
  if (bottom < 0) throw new Error('empty garment mask');
  const h = bottom - top;
  const at = (f: number) => top + f * h;
  const extent = (y: number): [number, number] => {
    const r = runs(mask, W, H, y);
    return r.length ? [r[0]![0], r[r.length - 1]![1]] : [0, W - 1];
  };
  const hem = extent(at(0.97));
  const cx = (hem[0] + hem[1]) / 2;
  const masks: GarmentParts['masks'] = {};
  const strips: Strips = {};
  const lengths: GarmentParts['lengths'] = {};

  if (type === 'lower_body') {
    const [wl, wr] = extent(at(0.01));
    let crotchF = -1;
    for (let f = 0.1; f < 0.9; f += 0.01) if (runs(mask, W, H, at(f)).length >= 2) { crotchF = f; break; }
    const skirt = crotchF < 0 || crotchF > 0.8;
    const waistC: P = [(wl + wr) / 2, at(0.01)];
    if (skirt) {
      strips.skirt = { centre: [], left: [], right: [] };
      for (const f of TORSO_STATIONS) {
        const y = at(0.01 + 0.96 * f);
        const [l, r] = extent(y);
        strips.skirt.centre.push([(l + r) / 2, y]);
        strips.skirt.left.push([l, y]);
        strips.skirt.right.push([r, y]);
      }
      masks.skirt = mask;
      lengths.skirt = 0.96 * h;
      return { strips, masks, lengths, width: wr - wl, skirt: true, sleeves: false };
    }
    const cy = at(crotchF);
    const [cl, cr] = extent(cy);
    const crotchX = (() => {
      const r = runs(mask, W, H, cy);
      return r.length >= 2 ? (r[0]![1] + r[1]![0]) / 2 : (cl + cr) / 2;
    })();
    strips.pelvis = { centre: [], left: [], right: [] };
    for (const f of PELVIS_STATIONS) {
      const y = lerp(waistC, [crotchX, cy], f)[1];
      const [l, r] = extent(y);
      strips.pelvis.centre.push([(l + r) / 2, y]);
      strips.pelvis.left.push([l, y]);
      strips.pelvis.right.push([r, y]);
    }
    const overlap = Math.max(2, Math.round(0.02 * h));
    masks.pelvis = new Uint8Array(W * H);
    masks.pelvis.set(mask.subarray(0, Math.min(H, Math.floor(cy + overlap) + 1) * W));
    for (const s of ['L', 'R'] as const) {
      const part = new Uint8Array(W * H);
      for (let y = Math.max(0, Math.ceil(cy - overlap)); y < H; y++) {
        for (let x = s === 'L' ? 0 : Math.max(0, Math.ceil(crotchX)); x < (s === 'L' ? Math.min(W, Math.ceil(crotchX)) : W); x++) part[y * W + x] = mask[y * W + x]!;
      }
      // A trouser leg hangs down in a product photo: its stations are rows from the crotch to the
      // hem, each edge the leg's own run (the farthest pixel from the root is a hem corner, and
      // a strip along that diagonal crosses the leg's sides).
      let x = s === 'L' ? (cl + crotchX) / 2 : (crotchX + cr) / 2;
      let hemY = cy;
      for (let y = Math.ceil(cy); y <= bottom; y++) if (runAt(part, W, H, y, x)) hemY = y;
      if (hemY - cy < 0.05 * h) continue;
      const strip: Strip = { centre: [], left: [], right: [] };
      for (const f of LIMB_STATIONS) {
        const y = cy + overlap + f * (hemY - cy - overlap);
        const r = runAt(part, W, H, y, x) ?? [x, x];
        x = (r[0] + r[1]) / 2;
        strip.centre.push([x, y]);
        strip.left.push([r[0], y]);
        strip.right.push([r[1] + 1, y]);
      }
      masks[`leg${s}`] = part;
      strips[`leg${s}`] = strip;
      lengths[`leg${s}`] = hemY - cy;
    }
    return { strips, masks, lengths, width: wr - wl, skirt: false, sleeves: false };
  }

  // Tops and dresses: shoulders, armpits, sleeves, torso.
  const ys = at(0.06);
  const [sl, sr] = extent(ys);
  const centralRows = Array.from({ length: H }, (_, y) => runAt(mask, W, H, y, cx) ?? ([cx, cx] as [number, number]));
  const central = (y: number) => centralRows[Math.min(H - 1, Math.max(0, Math.round(y)))]!;
  // The armpit: going up from mid-height, the first row where the central run widens by 15% in 3% of the height.
  let armF = -1;
  for (let f = 0.55; f > 0.1; f -= 0.01) {
    const w0 = central(at(f + 0.03)), w1 = central(at(f));
    if (w1[1] - w1[0] > 1.15 * (w0[1] - w0[0]) + 2) { armF = f + 0.03; break; }
  }
  const hasSleeves = armF > 0;
  const ya = hasSleeves ? at(armF) : at(0.3);
  const pit = central(ya);
  const armL: P = [pit[0], ya], armR: P = [pit[1], ya];
  const shL: P = [sl, ys], shR: P = [sr, ys];
  // Sleeve pixels: outside the shoulder-armpit line above the armpit, outside the central run below.
  const side = (a: P, b: P, x: number, y: number) => (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
  const sleeveOf = (s: 'L' | 'R') => {
    const [a, b] = s === 'L' ? [shL, armL] : [shR, armR];
    const inward = Math.sign(side(a, b, cx, (ys + ya) / 2));
    const out = new Uint8Array(W * H);
    if (!hasSleeves) return out;
    for (let y = 0, i = 0; y < H; y++) {
      const c = central(y);
      for (let x = 0; x < W; x++, i++) {
        if (!mask[i]) continue;
        if (y <= ya) out[i] = Math.sign(side(a, b, x, y)) === -inward ? 1 : 0;
        else out[i] = s === 'L' ? (x < c[0] ? 1 : 0) : x > c[1] ? 1 : 0;
      }
    }
    return out;
  };
  const torsoLen = at(0.97) - ys;
  strips.torso = { centre: [], left: [], right: [] };
  for (const f of TORSO_STATIONS) {
    const y = ys + f * torsoLen;
    let l: number, r: number;
    if (hasSleeves && y < ya) {
      const k = (y - ys) / (ya - ys);
      (l = sl + (pit[0] - sl) * k), (r = sr + (pit[1] - sr) * k);
    } else [l, r] = hasSleeves ? central(y) : extent(y);
    strips.torso.centre.push([(l + r) / 2, y]);
    strips.torso.left.push([l, y]);
    strips.torso.right.push([r, y]);
  }
  lengths.torso = torsoLen;
  const sleeveMasks = { L: sleeveOf('L'), R: sleeveOf('R') };
  masks.torso = andNot(mask, sleeveMasks.L, sleeveMasks.R);
  let any = false;
  for (const s of ['L', 'R'] as const) {
    const part = sleeveMasks[s];
    if (area(part) < 0.01 * mask.length * 0.2) continue;
    const [a, b] = s === 'L' ? [shL, armL] : [shR, armR];
    const root = mid(a, b);
    const e = limbEnd(part, W, root);
    if (!e || e.length < 0.05 * h) continue;
    any = true;
    // The sleeve's mask reaches a little into the torso, so the parts meet without a seam.
    masks[`sleeve${s}`] = intersect(dilate(part, W, H, 2), mask);
    strips[`sleeve${s}`] = straightStrip(part, W, H, root, e.end, len(sub(a, b)) / 2);
    lengths[`sleeve${s}`] = e.length;
  }
  return { strips, masks, lengths, width: sr - sl, skirt: false, sleeves: any };
}
