// Binary morphology on 0/1 masks, kept in JS rather than sharp's dilate/erode (libvips morph):
// measured on a 1000x1000 0/1 mask (an ellipse with 4000 flipped pixels), 2 shared cores, median
// of 21 runs, sharp.concurrency 1:
//   radius           1       5      10      15
//   this (ms)    10-12    9-14    9-14    9-14    O(1) per pixel: last index in the window, any radius
//   sliding counts  15      21      21      20    (the version before; same session: 12-20)
//   sharp (ms)      13      21      33      59    incl. 0/1 <-> 0/255 copies (call alone 3, 9, 23, 47)
//   previous JS     19      43      58      63    (scan of the window per pixel)
// (A mask that fills part of the frame costs in proportion to its box: see morph.)
// Results are identical pixel for pixel (test/unit/morphology.test.ts checks against sharp). The callers use radius ~3-15 (min(W, H) / 150, face
// scale * 0.015) on 0/1 masks in synchronous code, where this is as fast or faster and needs no
// async round trip through libvips. Note sharp names the operations for a dark foreground: on a
// white-on-black mask its erode() grows the white and its dilate() shrinks it.

import { giveBack, takeBytes, takeInts } from './scratch.ts';

/**
 * Square dilation (pick 1) or erosion (pick 0) by radius r, on the box of the mask's 1-pixels
 * grown by r (0 outside it either way): the try-on's masks (a person, a garment band) fill a
 * fraction of a 1 MP photo, and full-frame passes were most of its morphology time. Exact: every
 * window of a pixel in that box lies within the grown box (or the photo's edge), and outside the
 * box a pixel is 0 after either operation.
 */
function morph(mask: Uint8Array, W: number, H: number, r: number, pick: 0 | 1): Uint8Array {
  // The box of the pixels that can come out 1: those equal to 1 (dilation counts only 1s), or any
  // non-zero pixel (erosion counts only 0s).
  let x0 = W, x1 = -1, y0 = -1, y1 = -1;
  for (let y = 0; y < H; y++) {
    const row = y * W;
    let a = 0;
    if (pick) while (a < W && mask[row + a] !== 1) a++;
    else while (a < W && mask[row + a] === 0) a++;
    if (a === W) continue;
    if (y0 < 0) y0 = y;
    y1 = y;
    if (a < x0) x0 = a;
    let b = W - 1;
    if (pick) while (mask[row + b] !== 1) b--;
    else while (mask[row + b] === 0) b--;
    if (b > x1) x1 = b;
  }
  if (y0 < 0) return new Uint8Array(W * H);
  const cx0 = Math.max(0, x0 - r), cx1 = Math.min(W - 1, x1 + r), cy0 = Math.max(0, y0 - r), cy1 = Math.min(H - 1, y1 + r);
  const cw = cx1 - cx0 + 1, ch = cy1 - cy0 + 1;
  if (cw === W && ch === H) return morphFrame(mask, W, H, r, pick);
  // The crop and its result on kept buffers (scratch.ts): fresh ones cost more in first-touch
  // page faults than the two passes over them (the try-on runs a dozen of these at 1 MP).
  const crop = takeBytes(cw * ch);
  for (let y = 0; y < ch; y++) crop.set(mask.subarray((y + cy0) * W + cx0, (y + cy0) * W + cx0 + cw), y * cw);
  const part = morphFrame(crop, cw, ch, r, pick, true);
  const out = new Uint8Array(W * H);
  for (let y = 0; y < ch; y++) out.set(part.subarray(y * cw, y * cw + cw), (y + cy0) * W + cx0);
  giveBack(crop, part);
  return out;
}

/**
 * morph over the whole frame: separable, rows then columns. `pooled`: the result is on a kept
 * buffer the caller gives back. Each pass keeps, per row (per column),
 * the index of the last `pick` pixel at or before the window's far end: a pixel comes out `pick`
 * when that index is within its window. One read and one compare a pixel and pass (a count slid
 * in and out of the window took three loops over each row in the column pass).
 */
function morphFrame(mask: Uint8Array, W: number, H: number, r: number, pick: 0 | 1, pooled = false): Uint8Array {
  const miss = 1 - pick;
  // Every pixel of both is written below: kept buffers need no zeroing beyond takeBytes'.
  const tmp = takeBytes(mask.length);
  const out = pooled ? takeBytes(mask.length) : new Uint8Array(mask.length);
  const none = -r - 1;
  for (let y = 0; y < H; y++) {
    const row = y * W;
    let last = none;
    for (let k = 0; k < Math.min(r, W); k++) if (mask[row + k] === pick) last = k;
    for (let x = 0; x < W; x++) {
      if (x + r < W && mask[row + x + r] === pick) last = x + r;
      tmp[row + x] = last >= x - r ? pick : miss;
    }
  }
  // Columns, walked in row order: the last `pick` row per column.
  const last = new Int32Array(W).fill(none);
  for (let k = 0; k < Math.min(r, H); k++) {
    const row = k * W;
    for (let x = 0; x < W; x++) if (tmp[row + x] === pick) last[x] = k;
  }
  for (let y = 0; y < H; y++) {
    const row = y * W, lo = y - r, j = y + r;
    if (j < H) {
      const add = j * W;
      for (let x = 0; x < W; x++) {
        if (tmp[add + x] === pick) last[x] = j;
        out[row + x] = last[x]! >= lo ? pick : miss;
      }
    } else for (let x = 0; x < W; x++) out[row + x] = last[x]! >= lo ? pick : miss;
  }
  giveBack(tmp);
  return out;
}
export const dilate = (mask: Uint8Array, W: number, H: number, r: number): Uint8Array => morph(mask, W, H, r, 1);
export const erode = (mask: Uint8Array, W: number, H: number, r: number): Uint8Array => morph(mask, W, H, r, 0);
/** Closing: dilation then erosion by r (fills gaps and specks narrower than 2r + 1). */
export const close = (mask: Uint8Array, W: number, H: number, r: number): Uint8Array => erode(dilate(mask, W, H, r), W, H, r);
/**
 * Closes the mask's pixels inside `box` on that box alone and sets the result there (pixels
 * outside the box unchanged): regions far apart (two arms) closed each on its own box rather than
 * on one box spanning what lies between them. Within r of the box's edge the result may miss
 * what a closing of the whole mask would set.
 */
export function closeInBox(mask: Uint8Array, W: number, box: Region, r: number): void {
  const { x, y, width: w, height: h } = box;
  const crop = takeBytes(w * h);
  for (let yy = 0; yy < h; yy++) crop.set(mask.subarray((y + yy) * W + x, (y + yy) * W + x + w), yy * w);
  const closed = close(crop, w, h, r);
  for (let yy = 0; yy < h; yy++) for (let xx = 0; xx < w; xx++) if (closed[yy * w + xx]) mask[(y + yy) * W + x + xx] = 1;
  giveBack(crop);
}
/** Opening: erosion then dilation by r (drops specks and slivers narrower than 2r + 1). */
export const open = (mask: Uint8Array, W: number, H: number, r: number): Uint8Array => dilate(erode(mask, W, H, r), W, H, r);

/**
 * Keeps the 8-connected parts of a 0/1 mask that touch `seed` (1 where a part must reach): the
 * instance of a region attached to one person, without the same class on a neighbour. Linear time.
 */
export function componentsTouching(mask: Uint8Array, seed: Uint8Array, W: number, H: number): Uint8Array {
  const out = new Uint8Array(W * H);
  // A kept buffer (scratch.ts): a fresh 4 MB stack cost ~11 ms of first-touch page faults at 1 MP.
  const stack = takeInts(W * H);
  for (let s = 0; s < mask.length; s++) {
    if (!mask[s] || !seed[s] || out[s]) continue;
    let top = 0;
    stack[top++] = s;
    out[s] = 1;
    while (top > 0) {
      const i = stack[--top]!;
      const x = i % W, y = (i - x) / W;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= H) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= W) continue;
          const j = yy * W + xx;
          if (mask[j] && !out[j]) {
            out[j] = 1;
            stack[top++] = j;
          }
        }
      }
    }
  }
  giveBack(stack);
  return out;
}

/**
 * Floods from `seed` through the 4-connected pixels for which `ok` holds, setting them in `mark`
 * (pixels already marked are not entered; the seed is taken as it is), on `stack` (at least as
 * long as the picture: each pixel is pushed once). Returns how many pixels it marked. For masks
 * known only pixel by pixel, tested when the flood reaches them (componentsTouching needs the
 * whole mask first).
 */
export function floodWhere(seed: number, W: number, H: number, ok: (i: number) => boolean, mark: Uint8Array, stack: Int32Array): number {
  let top = 0, n = 1;
  stack[top++] = seed;
  mark[seed] = 1;
  while (top) {
    const i = stack[--top]!;
    const x = i % W;
    // The four neighbours in turn, without an array per pixel.
    for (let k = 0; k < 4; k++) {
      const q = k === 0 ? (x > 0 ? i - 1 : -1) : k === 1 ? (x < W - 1 ? i + 1 : -1) : k === 2 ? i - W : i + W < W * H ? i + W : -1;
      if (q < 0 || mark[q] || !ok(q)) continue;
      mark[q] = 1;
      stack[top++] = q;
      n++;
    }
  }
  return n;
}

/**
 * `mask` (0/1, a row of `W`) with its holes filled: the 4-connected pieces of what it leaves out
 * that do not reach the picture's edge, those of at most `maxArea` pixels (all by default). A new
 * mask.
 */
export function fillHoles(mask: Uint8Array, W: number, H: number, maxArea = Infinity): Uint8Array {
  // What reaches the edge through left-out pixels, on a typed stack with the neighbours written
  // out (a flood with a predicate per pixel, as floodWhere, took twice as long: ~12 ms at 1 MP).
  const out = new Uint8Array(mask.length);
  const stack = takeInts(mask.length);
  let top = 0;
  const seed = (i: number) => {
    if (!mask[i] && !out[i]) (out[i] = 1), (stack[top++] = i);
  };
  for (let x = 0; x < W; x++) (seed(x), seed((H - 1) * W + x));
  for (let y = 0; y < H; y++) (seed(y * W), seed(y * W + W - 1));
  while (top > 0) {
    const i = stack[--top]!;
    const x = i % W, y = (i - x) / W;
    if (x > 0 && !mask[i - 1] && !out[i - 1]) (out[i - 1] = 1), (stack[top++] = i - 1);
    if (x < W - 1 && !mask[i + 1] && !out[i + 1]) (out[i + 1] = 1), (stack[top++] = i + 1);
    if (y > 0 && !mask[i - W] && !out[i - W]) (out[i - W] = 1), (stack[top++] = i - W);
    if (y < H - 1 && !mask[i + W] && !out[i + W]) (out[i + W] = 1), (stack[top++] = i + W);
  }
  giveBack(stack);
  // `out` holds what reaches the edge; the rest is the mask and its holes.
  if (maxArea === Infinity) {
    for (let i = 0; i < out.length; i++) out[i] = out[i] ? 0 : 1;
    return out;
  }
  const holes = new Uint8Array(mask.length);
  for (let i = 0; i < out.length; i++) (holes[i] = !out[i] && !mask[i] ? 1 : 0), (out[i] = mask[i] ? 1 : 0);
  eachComponent(holes, W, (hole) => {
    if (hole.length <= maxArea) for (const i of hole) out[i] = 1;
  });
  return out;
}

/**
 * Calls `visit` with each 4-connected component of `mask` (a row of `W`), as pixel indices; the
 * array is reused between calls. Components are found from start pixels in [from, to) (where the
 * caller knows the mask to lie), in index order.
 */
export function eachComponent(mask: Uint8Array, W: number, visit: (component: number[]) => void, from = 0, to = mask.length): void {
  const seen = new Uint8Array(mask.length);
  const comp: number[] = [];
  for (let s = from; s < to; s++) {
    if (!mask[s] || seen[s]) continue;
    comp.length = 0;
    comp.push(s);
    seen[s] = 1;
    for (let k = 0; k < comp.length; k++) {
      const j = comp[k]!, x = j % W;
      // The four neighbours in the same order, without an array per pixel (this runs over every
      // pixel of every component).
      for (let q = 0; q < 4; q++) {
        const n = q === 0 ? (x > 0 ? j - 1 : -1) : q === 1 ? (x < W - 1 ? j + 1 : -1) : q === 2 ? j - W : j + W;
        if (n < 0 || n >= mask.length || !mask[n] || seen[n]) continue;
        seen[n] = 1;
        comp.push(n);
      }
    }
    visit(comp);
  }
}

/** Two-pass chamfer distance (3-4 weights, in thirds of a pixel) to the nearest pixel of `seed`. */
export function chamfer(seed: Uint8Array, W: number, H: number): Uint32Array {
  const d = new Uint32Array(W * H).fill(0xffffffff >>> 2);
  for (let i = 0; i < d.length; i++) if (seed[i]) d[i] = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      let v = d[i]!;
      if (x > 0) v = Math.min(v, d[i - 1]! + 3);
      if (y > 0) {
        v = Math.min(v, d[i - W]! + 3);
        if (x > 0) v = Math.min(v, d[i - W - 1]! + 4);
        if (x < W - 1) v = Math.min(v, d[i - W + 1]! + 4);
      }
      d[i] = v;
    }
  }
  for (let y = H - 1; y >= 0; y--) {
    for (let x = W - 1; x >= 0; x--) {
      const i = y * W + x;
      let v = d[i]!;
      if (x < W - 1) v = Math.min(v, d[i + 1]! + 3);
      if (y < H - 1) {
        v = Math.min(v, d[i + W]! + 3);
        if (x < W - 1) v = Math.min(v, d[i + W + 1]! + 4);
        if (x > 0) v = Math.min(v, d[i + W - 1]! + 4);
      }
      d[i] = v;
    }
  }
  return d;
}

/** A pixel rectangle. */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A pixel box [x0, x1) x [y0, y1). */
export interface PixelBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * The box of the pixels listed in `at` (indices into a W-wide image), those `pick` takes by their
 * position k in the list (all without it); null for none. maskBox for a list: no walk of the image.
 */
export function indicesBox(at: Int32Array, W: number, pick?: (k: number) => boolean): PixelBox | null {
  let x0 = Infinity, y0 = Infinity, x1 = -1, y1 = -1;
  for (let k = 0; k < at.length; k++) {
    if (pick && !pick(k)) continue;
    const i = at[k]!, x = i % W, y = (i - x) / W;
    if (x < x0) x0 = x;
    if (x >= x1) x1 = x + 1;
    if (y < y0) y0 = y;
    if (y >= y1) y1 = y + 1;
  }
  return x1 < 0 ? null : { x0, y0, x1, y1 };
}

/**
 * maskBox grown by `m` on every side and clamped to the W x H image, as a PixelBox (null when the
 * mask is empty): the region a pass around a mask's pixels (their sources, their blurs) walks.
 */
export function grownMaskBox(mask: Uint8Array, W: number, H: number, m: number): PixelBox | null {
  const box = maskBox(mask, W, H);
  if (!box) return null;
  return { x0: Math.max(0, box.x - m), y0: Math.max(0, box.y - m), x1: Math.min(W, box.x + box.width + m), y1: Math.min(H, box.y + box.height + m) };
}

/** The bounding box of a mask's non-zero pixels (null when empty); each row is read from both ends. */
export function maskBox(mask: Uint8Array, W: number, H: number): Region | null {
  let x0 = W, y0 = H, x1 = -1, y1 = -1;
  for (let y = 0; y < H; y++) {
    const row = y * W;
    let a = 0;
    while (a < W && !mask[row + a]) a++;
    if (a === W) continue;
    let b = W - 1;
    while (!mask[row + b]) b--;
    if (a < x0) x0 = a;
    if (b > x1) x1 = b;
    if (y < y0) y0 = y;
    y1 = y;
  }
  return x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}
