// The garment: its mask and landmarks.
//   product photo   background colour estimated from the border (median), pixels far from it
//                   (CIE Lab distance) kept, a morphological close, holes filled (what the border
//                   flood cannot reach), the largest blob kept
//   landmarks       from the mask's geometry per clothes type: collar, shoulders, armpits, sleeve
//                   ends and hem corners (upper body); waistband, crotch and leg ends (lower body);
//                   shoulders, waist and hem corners (dresses)
// Landmarks are named so the body side (body.ts) can pair them.
import type { ClothesType } from '../../domain/job.ts';
import type { RgbImage } from '../../imaging/image.ts';
import { dilate, erode } from '../../imaging/morphology.ts';
import { srgbToLab } from '../../steps/color.ts';

export type Landmarks = Record<string, [number, number]>;

/** Fills holes: everything not reachable from the border through 0-pixels becomes 1. */
function fillHoles(mask: Uint8Array, W: number, H: number): Uint8Array {
  const reached = new Uint8Array(mask.length);
  const stack: number[] = [];
  const push = (i: number) => {
    if (!mask[i] && !reached[i]) {
      reached[i] = 1;
      stack.push(i);
    }
  };
  for (let x = 0; x < W; x++) (push(x), push((H - 1) * W + x));
  for (let y = 0; y < H; y++) (push(y * W), push(y * W + W - 1));
  while (stack.length) {
    const i = stack.pop()!;
    const x = i % W, y = (i - x) / W;
    if (x > 0) push(i - 1);
    if (x < W - 1) push(i + 1);
    if (y > 0) push(i - W);
    if (y < H - 1) push(i + W);
  }
  return Uint8Array.from(reached, (r) => (r ? 0 : 1));
}

/** Keeps the largest 4-connected blob. */
function largestBlob(mask: Uint8Array, W: number, H: number): Uint8Array {
  const label = new Int32Array(mask.length);
  let best = 0, bestSize = 0, next = 0;
  for (let s = 0; s < mask.length; s++) {
    if (!mask[s] || label[s]) continue;
    next++;
    let size = 0;
    const stack = [s];
    label[s] = next;
    while (stack.length) {
      const i = stack.pop()!;
      size++;
      const x = i % W, y = (i - x) / W;
      for (const j of [x > 0 ? i - 1 : -1, x < W - 1 ? i + 1 : -1, y > 0 ? i - W : -1, y < H - 1 ? i + W : -1]) {
        if (j >= 0 && mask[j] && !label[j]) {
          label[j] = next;
          stack.push(j);
        }
      }
    }
    if (size > bestSize) (bestSize = size), (best = next);
  }
  return Uint8Array.from(label, (l) => (l === best && best > 0 ? 1 : 0));
}

/** Garment mask of a product photo on a plain background. */
export function productMask(img: RgbImage): Uint8Array {
  const { width: W, height: H, data } = img;
  const border: Array<[number, number, number]> = [];
  const lab = (i: number) => srgbToLab(data[3 * i]!, data[3 * i + 1]!, data[3 * i + 2]!);
  for (let x = 0; x < W; x += 2) border.push(lab(x), lab((H - 1) * W + x));
  for (let y = 0; y < H; y += 2) border.push(lab(y * W), lab(y * W + W - 1));
  const med = (k: 0 | 1 | 2) => border.map((b) => b[k]).sort((a, b) => a - b)[Math.floor(border.length / 2)]!;
  const bg = [med(0), med(1), med(2)];
  const raw = new Uint8Array(W * H);
  for (let i = 0; i < raw.length; i++) {
    const [L, A, B] = lab(i);
    raw[i] = Math.hypot(L - bg[0]!, A - bg[1]!, B - bg[2]!) > 12 ? 1 : 0;
  }
  const r = Math.max(1, Math.round(Math.min(W, H) / 150));
  const closed = erode(dilate(raw, W, H, r), W, H, r);
  return largestBlob(fillHoles(closed, W, H), W, H);
}

interface Rows {
  top: number;
  bottom: number;
  /** Leftmost and rightmost mask x of row y (or null). */
  extent(y: number): [number, number] | null;
  /** Runs of mask pixels in row y. */
  runs(y: number): Array<[number, number]>;
}

function rows(mask: Uint8Array, W: number, H: number): Rows {
  let top = H, bottom = -1;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      if (mask[y * W + x]) {
        top = Math.min(top, y);
        bottom = Math.max(bottom, y);
        break;
      }
    }
  }
  const runs = (y: number) => {
    const out: Array<[number, number]> = [];
    let start = -1;
    const yy = Math.min(H - 1, Math.max(0, Math.round(y)));
    for (let x = 0; x <= W; x++) {
      const on = x < W && mask[yy * W + x] === 1;
      if (on && start < 0) start = x;
      if (!on && start >= 0) (out.push([start, x - 1]), (start = -1));
    }
    return out;
  };
  return {
    top,
    bottom,
    runs,
    extent(y) {
      const r = runs(y);
      return r.length ? [r[0]![0], r[r.length - 1]![1]] : null;
    },
  };
}

/** Garment landmarks from its mask, per clothes type ("L"/"R" = image left/right). */
export function garmentLandmarks(mask: Uint8Array, W: number, H: number, type: ClothesType): Landmarks {
  const r = rows(mask, W, H);
  if (r.bottom < 0) throw new Error('empty garment mask');
  const h = r.bottom - r.top;
  const at = (f: number) => r.top + f * h;
  const ext = (f: number) => r.extent(at(f)) ?? [0, W - 1];
  const lm: Landmarks = {};
  if (type === 'lower_body') {
    const [wl, wr] = ext(0.01);
    lm.waistL = [wl, at(0.01)];
    lm.waistR = [wr, at(0.01)];
    // Crotch: the highest row where the legs part (two runs).
    let crotchY = at(0.45);
    for (let f = 0.1; f < 0.9; f += 0.01) if (r.runs(at(f)).length >= 2) { crotchY = at(f); break; }
    const [cl, cr] = r.extent(crotchY) ?? [wl, wr];
    lm.crotch = [(cl + cr) / 2, crotchY];
    const bottomRuns = r.runs(at(0.98));
    const [bl, br] = ext(0.98);
    const leftLeg: [number, number] = bottomRuns.length >= 2 ? bottomRuns[0]! : [bl, bl];
    const rightLeg: [number, number] = bottomRuns.length >= 2 ? bottomRuns[bottomRuns.length - 1]! : [br, br];
    lm.legL = [(leftLeg[0] + leftLeg[1]) / 2, at(0.98)];
    lm.legR = [(rightLeg[0] + rightLeg[1]) / 2, at(0.98)];
    const [kl, kr] = ext(0.55);
    lm.thighL = [kl, at(0.55)];
    lm.thighR = [kr, at(0.55)];
    return lm;
  }
  const [sl, sr] = ext(0.06);
  lm.shoulderL = [sl, at(0.06)];
  lm.shoulderR = [sr, at(0.06)];
  const top = r.extent(r.top)!;
  lm.collar = [(top[0] + top[1]) / 2, r.top];
  const [hl, hr] = ext(0.98);
  lm.hemL = [hl, at(0.98)];
  lm.hemR = [hr, at(0.98)];
  if (type === 'dresses') {
    let waistF = 0.4, narrow = Infinity;
    for (let f = 0.25; f <= 0.55; f += 0.01) {
      const [a, b] = ext(f);
      if (b - a < narrow) (narrow = b - a), (waistF = f);
    }
    const [wl, wr] = ext(waistF);
    lm.waistL = [wl, at(waistF)];
    lm.waistR = [wr, at(waistF)];
    return lm;
  }
  // Upper body: the torso edge is the extent near the hem; sleeves reach past it.
  const torso = ext(0.8);
  let minX = W, maxX = -1, minY = 0, maxY = 0;
  for (let y = r.top; y <= r.bottom; y++) {
    const e = r.extent(y);
    if (!e) continue;
    if (e[0] < minX) (minX = e[0]), (minY = y);
    if (e[1] > maxX) (maxX = e[1]), (maxY = y);
  }
  lm.sleeveL = [minX, minY];
  lm.sleeveR = [maxX, maxY];
  lm.armpitL = [torso[0], at(0.33)];
  lm.armpitR = [torso[1], at(0.33)];
  return lm;
}
