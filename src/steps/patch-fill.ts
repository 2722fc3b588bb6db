// Step: exemplar (patch-based) hole filling, so removed hair or clothing is replaced by the texture
// around it (wall, blinds, skin, fabric) instead of a blur. Multi-scale PatchMatch with EM voting
// (Barnes et al. 2009, PatchMatch; Wexler et al. 2007, space-time completion):
//   a pyramid of the region around the hole (the hole and a margin; sources are its known pixels)
//   -> coarsest level (with sourcesPerHole: the coarsest holding enough whole source patches):
//      hole seeded by onion-peel averaging of the allowed pixels, then EM
//      iterations: PatchMatch search (propagation + random search) of a source patch for every
//      patch touching the hole, and a vote (each hole pixel: the similarity-weighted mean of what
//      the overlapping patches say); distances count only hole and allowed pixels
//   -> each finer level up to `searchSide` px: the nearest-neighbour field upsampled, voted,
//      refined by fewer iterations (random jumps must gain a visible margin: a coherent field)
//   -> levels finer than that: the field upsampled again and each hole pixel copied from its
//      match (sharp texture; a vote there would average stripes out of phase into a blur; with
//      `blend`, the matches of its 3x3 neighbours averaged: seams between the copied blocks
//      cross-fade, coherent texture stays sharp), plus a smooth colour offset measured where the
//      hole meets its allowed surroundings (pull-push), so a patch copied from a lighter place
//      meets the edge without a seam.
// Pure TypeScript on typed arrays: it runs inside the inference threads (pipelines run there),
// never on the event loop. A learned inpainting graph with the same contract (image + hole ->
// image) can replace it. Deterministic for a given input (seeded generator), so retries and golden
// outputs reproduce.
import { copyBytes, type RgbImage } from '../imaging/image.ts';
import { maskBox, type PixelBox, type Region } from '../imaging/morphology.ts';
import { giveBack, takeInts, takePlane } from '../imaging/scratch.ts';

export interface PatchFillOptions {
  /** Patch radius in pixels (patch side 2r+1) at every level. */
  radius?: number;
  /** Margin around the hole's bounding box where sources are looked for, as a fraction of its larger side (at least 24 px). */
  margin?: number;
  /** 1 where a pixel may be copied from (default: everywhere outside the hole). */
  source?: Uint8Array;
  /** EM iterations at the coarsest level (fewer at finer ones). */
  iterations?: number;
  /**
   * Longest side (px) of the finest level searched; finer levels copy through the upsampled field.
   * @defaultValue 256
   */
  searchSide?: number;
  seed?: number;
  /**
   * Preference for nearby sources: a patch's distance grows by `locality` x (the offset to its
   * source / the level's region side)^2, in squared levels per patch pixel and channel (0: none).
   * A hole between a door frame and a window then takes the frame where it touches the frame and
   * the window where it touches the window, instead of the one texture that matches best overall.
   * @defaultValue 0
   */
  locality?: number;
  /**
   * Write the filled pixels into `image.data` itself and return `image` (for a caller that owns it
   * and fills several holes in turn: a copy of a 1 MP photo per call was ~9 ms of fresh memory here).
   */
  inPlace?: boolean;
  /**
   * Copy levels (those finer than searchSide): each hole pixel the mean of what the matches of
   * its 3x3 neighbourhood say for it, rather than its own match's pixel alone. Where the field is
   * coherent they all say the same (a sharp copy); where it changes (every 2^k pixels, the copy
   * levels' blocks) the copies cross-fade over a few pixels instead of meeting in a seam: on bare
   * skin and smooth walls those seams were a mosaic of squares.
   * @defaultValue false
   */
  blend?: boolean;
  /**
   * Where the structure is decided: the coarsest level holding at least `sourcesPerHole` whole
   * source patches per hole pixel (or else the finest searched level) starts the search, not the
   * coarsest level of the pyramid. At 40 px a big hole left a handful of whole patches, all in
   * the region's corners (9 for s6-left's hair over the blinds, 19 for s6-centre-right's): the
   * hole was seeded from those and every finer level refined the same wrong texture (a white
   * hood over a wood panel). 0: always the coarsest level.
   * @defaultValue 0
   */
  sourcesPerHole?: number;
}

interface Level {
  w: number;
  h: number;
  /** RGB floats, interleaved. */
  img: Float32Array;
  hole: Uint8Array;
  /** 1 where a patch centred here lies wholly on allowed, known pixels. */
  valid: Uint8Array;
  validList: Int32Array;
  /**
   * 1 where a target patch's pixel counts in the distance: the hole (its current estimate) and the
   * allowed known pixels. Known pixels that may not be copied (a face beside a wall being filled)
   * would pull the wall's matches towards face-coloured places.
   */
  care: Uint8Array;
  /** The locality penalty per squared pixel of offset at this level (PatchFillOptions.locality). */
  near: number;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Patch centres whose (2r+1)^2 window is inside the level and wholly allowed (not hole, source). */
function validCentres(w: number, h: number, allowed: Uint8Array, r: number): Uint8Array {
  // Separable erosion of `allowed` by a square of radius r; the border counts as not allowed.
  const rows = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    let run = 0;
    for (let x = 0; x < w; x++) {
      run = allowed[y * w + x] ? run + 1 : 0;
      // run >= 2r+1 at x means x-2r..x all allowed: centre x-r is row-valid.
      if (run >= 2 * r + 1) rows[y * w + x - r] = 1;
    }
  }
  const out = new Uint8Array(w * h);
  for (let x = 0; x < w; x++) {
    let run = 0;
    for (let y = 0; y < h; y++) {
      run = rows[y * w + x] ? run + 1 : 0;
      if (run >= 2 * r + 1) out[(y - r) * w + x] = 1;
    }
  }
  return out;
}

function makeLevel(w: number, h: number, img: Float32Array, hole: Uint8Array, source: Uint8Array, r: number, locality: number): Level {
  const allowed = new Uint8Array(w * h);
  const care = new Uint8Array(w * h);
  for (let i = 0; i < allowed.length; i++) {
    allowed[i] = !hole[i] && source[i] ? 1 : 0;
    care[i] = hole[i] || source[i] ? 1 : 0;
  }
  const valid = validCentres(w, h, allowed, r);
  let n = 0;
  for (let i = 0; i < valid.length; i++) n += valid[i]!;
  const validList = new Int32Array(n);
  for (let i = 0, k = 0; i < valid.length; i++) if (valid[i]) validList[k++] = i;
  const side = Math.max(w, h);
  return { w, h, img, hole, valid, validList, care, near: (locality * 3 * (2 * r + 1) ** 2) / (side * side) };
}

/**
 * Where a level's pixels are read: its own arrays (stride = its width, base 0), or, for the finest
 * level, the photo's bytes and the caller's masks in place (stride = the photo's width, base = the
 * region's first pixel; no source mask: every pixel allowed).
 */
interface View {
  img: Float32Array | Uint8Array;
  hole: Uint8Array;
  source: Uint8Array | undefined;
  stride: number;
  base: number;
}

/** Half size: image by the mean of known children, hole where any child is hole, source where all are. */
function downsample(w: number, h: number, v: View) {
  const { img, hole, source, stride, base } = v;
  const W = Math.ceil(w / 2), H = Math.ceil(h / 2);
  const o = takePlane(W * H * 3);
  const oh = new Uint8Array(W * H);
  const os = new Uint8Array(W * H);
  for (let Y = 0; Y < H; Y++) {
    const ya = base + 2 * Y * stride, yb = base + Math.min(h - 1, 2 * Y + 1) * stride;
    for (let X = 0; X < W; X++) {
      const xa = 2 * X, xb = Math.min(w - 1, 2 * X + 1);
      // The (up to) four children; at an odd edge a child repeats, which changes no mean.
      const a = ya + xa, b = ya + xb, c = yb + xa, d = yb + xb;
      const j = Y * W + X;
      os[j] = source ? source[a]! & source[b]! & source[c]! & source[d]! : 1;
      const ka = hole[a] ? 0 : 1, kb = hole[b] ? 0 : 1, kc = hole[c] ? 0 : 1, kd = hole[d] ? 0 : 1;
      const n = ka + kb + kc + kd;
      oh[j] = n < 4 ? 1 : 0;
      if (!n) continue;
      // The three channels written out (a loop over them was most of this function's time).
      const A = 3 * a, B = 3 * b, C = 3 * c, D = 3 * d, J = 3 * j;
      o[J] = (ka * img[A]! + kb * img[B]! + kc * img[C]! + kd * img[D]!) / n;
      o[J + 1] = (ka * img[A + 1]! + kb * img[B + 1]! + kc * img[C + 1]! + kd * img[D + 1]!) / n;
      o[J + 2] = (ka * img[A + 2]! + kb * img[B + 2]! + kc * img[C + 2]! + kd * img[D + 2]!) / n;
    }
  }
  return { w: W, h: H, img: o, hole: oh, source: os };
}

/** Seeds the hole by onion-peel averaging of known 8-neighbours (coarsest level only). */
function onionFill(L: Level): void {
  const { w, h, img } = L;
  // Seeded from the allowed pixels only: a skin-coloured seed beside a shoulder would make the
  // wall behind it match the most skin-like place (a red painting) rather than the wall.
  const known = new Uint8Array(w * h);
  let left = 0;
  let front: number[] = [];
  let n0 = 0, r0 = 0, g0 = 0, b0 = 0;
  for (let i = 0; i < known.length; i++) {
    if (L.hole[i]) {
      front.push(i);
      left++;
    } else if (L.care[i]) {
      known[i] = 1;
      r0 += img[3 * i]!;
      g0 += img[3 * i + 1]!;
      b0 += img[3 * i + 2]!;
      n0++;
    }
  }
  while (left > 0) {
    const next: number[] = [];
    const done: number[] = [];
    for (const i of front) {
      const x = i % w, y = (i - x) / w;
      let n = 0, r = 0, g = 0, b = 0;
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx, yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const j = yy * w + xx;
          if (!known[j]) continue;
          r += img[3 * j]!;
          g += img[3 * j + 1]!;
          b += img[3 * j + 2]!;
          n++;
        }
      }
      if (n) {
        img[3 * i] = r / n;
        img[3 * i + 1] = g / n;
        img[3 * i + 2] = b / n;
        done.push(i);
      } else next.push(i);
    }
    if (done.length === 0) break;
    for (const i of done) known[i] = 1;
    left -= done.length;
    front = next;
  }
  // Parts of the hole walled off from every allowed pixel: the allowed pixels' mean colour.
  if (left > 0 && n0 > 0) {
    for (const i of front) {
      img[3 * i] = r0 / n0;
      img[3 * i + 1] = g0 / n0;
      img[3 * i + 2] = b0 / n0;
    }
  }
}

/** Centres of patches that touch the hole (the hole dilated by r), within the level. */
function targetsOf(L: Level, r: number): Int32Array {
  const { w, h, hole } = L;
  const mark = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (!hole[y * w + x]) continue;
      for (let yy = Math.max(0, y - r); yy <= Math.min(h - 1, y + r); yy++) for (let xx = Math.max(0, x - r); xx <= Math.min(w - 1, x + r); xx++) mark[yy * w + xx] = 1;
    }
  }
  let n = 0;
  for (let i = 0; i < mark.length; i++) n += mark[i]!;
  const out = new Int32Array(n);
  for (let i = 0, k = 0; i < mark.length; i++) if (mark[i]) out[k++] = i;
  return out;
}

/** Sum of squared differences between the patch at target t and the patch at source s; stops past `cap`. */
function patchDistance(L: Level, t: number, s: number, r: number, cap: number): number {
  const { w, h, img, care } = L;
  const tx = t % w, ty = (t - tx) / w;
  const sx = s % w, sy = (s - sx) / w;
  let d = L.near ? L.near * ((tx - sx) * (tx - sx) + (ty - sy) * (ty - sy)) : 0;
  for (let dy = -r; dy <= r; dy++) {
    const y = ty + dy;
    if (y < 0 || y >= h) continue;
    for (let dx = -r; dx <= r; dx++) {
      const x = tx + dx;
      if (x < 0 || x >= w || !care[y * w + x]) continue;
      const a = 3 * (y * w + x), b = 3 * ((sy + dy) * w + sx + dx);
      const e0 = img[a]! - img[b]!, e1 = img[a + 1]! - img[b + 1]!, e2 = img[a + 2]! - img[b + 2]!;
      d += e0 * e0 + e1 * e1 + e2 * e2;
    }
    if (d > cap) return d;
  }
  return d;
}

/** One PatchMatch pass over the targets: propagation from the scan's previous neighbours, then random search. */
function search(L: Level, targets: Int32Array, nnf: Int32Array, dist: Float32Array, r: number, reverse: boolean, rand: () => number, searchRadius: number, coherence: number): void {
  const { w, h, valid } = L;
  const step = reverse ? 1 : -1; // the neighbours already visited in this scan order
  const n = targets.length;
  for (let k = 0; k < n; k++) {
    const t = targets[reverse ? n - 1 - k : k]!;
    const x = t % w, y = (t - x) / w;
    let best = nnf[t]!, bestD = dist[t]!;
    // Propagation: the left/up (or right/down) neighbour's match, shifted back by one.
    for (const [nx, ny] of [[x + step, y], [x, y + step]] as const) {
      if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
      const m = nnf[ny * w + nx]!;
      if (m < 0) continue;
      const c = m - step * (nx !== x ? 1 : w);
      const cx = c % w;
      if (c < 0 || c >= valid.length || !valid[c] || Math.abs(cx - (m % w)) > 1) continue;
      if (c === best) continue;
      const d = patchDistance(L, t, c, r, bestD);
      if (d < bestD) {
        best = c;
        bestD = d;
      }
    }
    // Random search around the best, in windows halving down to one pixel. A jump must gain more
    // than `coherence` over the match it replaces: on smooth areas every patch fits about as well,
    // and random jumps there make a field that, upsampled and copied, shows as a mosaic of blocks.
    const bx = best % w, by = (best - bx) / w;
    for (let R = searchRadius; R >= 1; R >>= 1) {
      const cx = Math.round(bx + (2 * rand() - 1) * R), cy = Math.round(by + (2 * rand() - 1) * R);
      if (cx < 0 || cy < 0 || cx >= w || cy >= h) continue;
      const c = cy * w + cx;
      if (!valid[c] || c === best) continue;
      const d = patchDistance(L, t, c, r, bestD - coherence);
      if (d < bestD - coherence) {
        best = c;
        bestD = d;
      }
    }
    nnf[t] = best;
    dist[t] = bestD;
  }
}

/** Votes the hole's pixels from the matched patches, weighted by similarity; writes them into L.img. */
function vote(L: Level, targets: Int32Array, nnf: Int32Array, dist: Float32Array, r: number, slot: Int32Array, acc: Float32Array, percentile: number): void {
  const { w, h, img } = L;
  acc.fill(0);
  // Weights exp(-d / 2s^2) with s^2 a percentile of the distances (Wexler et al. take the 75th; a
  // lower one lets the best matches dominate, so patches of different phase do not average out).
  const ds = new Float32Array(targets.length);
  for (let k = 0; k < targets.length; k++) ds[k] = dist[targets[k]!]!;
  ds.sort();
  const s2 = Math.max(1e-3, ds[Math.floor(percentile * (ds.length - 1))] ?? 1);
  for (let k = 0; k < targets.length; k++) {
    const t = targets[k]!;
    const m = nnf[t]!;
    if (m < 0) continue;
    const wgt = Math.exp(-dist[t]! / (2 * s2)) + 1e-6;
    const tx = t % w, ty = (t - tx) / w;
    const off = m - t; // source index = target index + off, for every pixel of the patch
    for (let dy = -r; dy <= r; dy++) {
      const y = ty + dy;
      if (y < 0 || y >= h) continue;
      for (let dx = -r; dx <= r; dx++) {
        const x = tx + dx;
        if (x < 0 || x >= w) continue;
        const q = y * w + x;
        const j = slot[q]!;
        if (j < 0) continue;
        const s = 3 * (q + off);
        acc[4 * j] = acc[4 * j]! + wgt * img[s]!;
        acc[4 * j + 1] = acc[4 * j + 1]! + wgt * img[s + 1]!;
        acc[4 * j + 2] = acc[4 * j + 2]! + wgt * img[s + 2]!;
        acc[4 * j + 3] = acc[4 * j + 3]! + wgt;
      }
    }
  }
  for (let q = 0; q < w * h; q++) {
    const j = slot[q]!;
    if (j < 0) continue;
    const a = acc[4 * j + 3]!;
    if (a <= 0) continue;
    img[3 * q] = acc[4 * j]! / a;
    img[3 * q + 1] = acc[4 * j + 1]! / a;
    img[3 * q + 2] = acc[4 * j + 2]! / a;
  }
}

/**
 * Smooth interpolation of sparse samples over a grid (pull-push, Gortler et al. 1996): `val`
 * (3 channels) is kept where `wt` is 1, filled elsewhere from coarser averages, bilinearly.
 */
export function pullPush(w: number, h: number, val: Float32Array, wt: Float32Array): void {
  if (w <= 1 && h <= 1) return;
  const W = Math.ceil(w / 2), H = Math.ceil(h / 2);
  const cv = new Float32Array(3 * W * H), cw = new Float32Array(W * H);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x, j = (y >> 1) * W + (x >> 1), a = wt[i]!;
      if (!a) continue;
      cw[j] = cw[j]! + a;
      for (let c = 0; c < 3; c++) cv[3 * j + c] = cv[3 * j + c]! + a * val[3 * i + c]!;
    }
  }
  for (let j = 0; j < W * H; j++) {
    const a = cw[j]!;
    if (!a) continue;
    for (let c = 0; c < 3; c++) cv[3 * j + c] = cv[3 * j + c]! / a;
    cw[j] = Math.min(1, a);
  }
  pullPush(W, H, cv, cw);
  for (let y = 0; y < h; y++) {
    const fy = Math.min(H - 1, Math.max(0, (y + 0.5) / 2 - 0.5)), y0 = Math.floor(fy), y1 = Math.min(H - 1, y0 + 1), ty = fy - y0;
    for (let x = 0; x < w; x++) {
      const i = y * w + x, a = wt[i]!;
      if (a >= 1) continue;
      const fx = Math.min(W - 1, Math.max(0, (x + 0.5) / 2 - 0.5)), x0 = Math.floor(fx), x1 = Math.min(W - 1, x0 + 1), tx = fx - x0;
      for (let c = 0; c < 3; c++) {
        const up = (1 - ty) * ((1 - tx) * cv[3 * (y0 * W + x0) + c]! + tx * cv[3 * (y0 * W + x1) + c]!) + ty * ((1 - tx) * cv[3 * (y1 * W + x0) + c]! + tx * cv[3 * (y1 * W + x1) + c]!);
        val[3 * i + c] = a * val[3 * i + c]! + (1 - a) * up;
      }
    }
  }
}

/**
 * The colour the copied texture lacks, per hole pixel of a searched level: on the known, allowed
 * pixels just outside the hole, the mean difference between their patch and their match (over the
 * patch's known, allowed pixels: lighting, not texture), interpolated into the hole. Added to the
 * fill, it makes a patch copied from a brighter or warmer place meet its surroundings without an
 * edge (a shoulder filled from the face, a wall from its sunlit side).
 */
function colourOffset(L: Level, source: Uint8Array, targets: Int32Array, nnf: Int32Array, r: number): Float32Array {
  const { w, h, img, hole } = L;
  const val = new Float32Array(3 * w * h), wt = new Float32Array(w * h);
  for (const t of targets) {
    const m = nnf[t]!;
    if (hole[t] || !source[t] || m < 0) continue;
    const tx = t % w, ty = (t - tx) / w;
    const off = m - t;
    let n = 0, d0 = 0, d1 = 0, d2 = 0;
    for (let dy = -r; dy <= r; dy++) {
      const y = ty + dy;
      if (y < 0 || y >= h) continue;
      for (let dx = -r; dx <= r; dx++) {
        const x = tx + dx;
        if (x < 0 || x >= w) continue;
        const q = y * w + x;
        if (hole[q] || !source[q]) continue;
        const a = 3 * q, b = 3 * (q + off);
        d0 += img[a]! - img[b]!;
        d1 += img[a + 1]! - img[b + 1]!;
        d2 += img[a + 2]! - img[b + 2]!;
        n++;
      }
    }
    if (!n) continue;
    val[3 * t] = d0 / n;
    val[3 * t + 1] = d1 / n;
    val[3 * t + 2] = d2 / n;
    wt[t] = 1;
  }
  pullPush(w, h, val, wt);
  return val;
}

/** Compact index of each hole pixel (-1 elsewhere) and the vote's accumulator for them. */
function voteBuffers(L: Level): { slot: Int32Array; acc: Float32Array } {
  const slot = new Int32Array(L.w * L.h).fill(-1);
  let n = 0;
  for (let q = 0; q < slot.length; q++) if (L.hole[q]) slot[q] = n++;
  return { slot, acc: new Float32Array(4 * n) };
}

/** The 8 neighbours' offsets, the 4 direct ones first. */
const NX = [-1, 1, 0, 0, -1, 1, -1, 1];
const NY = [0, 0, -1, 1, -1, -1, 1, 1];

/** A level's hole's bounding box (x1, y1 exclusive): the copying levels' loops walk it, not the level. */
interface HoleBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * A level finer than the search cap: each hole pixel takes its parent's match, doubled and offset
 * like the child, where that is a known source pixel (always, but at the region's odd edges: a
 * parent's match is known and allowed, and so are its four children); else a neighbour's offset.
 * Writes the matched pixels' colours (read through `v`) into `out` at the hole's pixels (a pixel
 * left without a match takes its parent's colour; with `blend`, the mean of its 3x3 neighbours'
 * matches shifted onto it: PatchFillOptions.blend); returns the field.
 */
function upsampleAndCopy(w: number, h: number, v: View, hb: HoleBox, out: Float32Array, parentField: Int32Array, parent: { w: number; img: Float32Array }, blend: boolean): Int32Array {
  const { img, hole, source, stride, base } = v;
  const pw = parent.w;
  const field = takeInts(w * h).fill(-1);
  const at = (x: number, y: number) => base + y * stride + x;
  const usable = (cx: number, cy: number) => cx >= 0 && cy >= 0 && cx < w && cy < h && !hole[at(cx, cy)] && (!source || source[at(cx, cy)] === 1);
  const missing: number[] = [];
  for (let y = hb.y0; y < hb.y1; y++) {
    for (let x = hb.x0, q = y * w + x; x < hb.x1; x++, q++) {
      if (!hole[at(x, y)]) continue;
      const pq = (y >> 1) * pw + (x >> 1);
      const m = parentField[pq]!;
      if (m >= 0) {
        const px = m % pw, py = (m - px) / pw;
        const cx = 2 * px + (x & 1), cy = 2 * py + (y & 1);
        if (usable(cx, cy)) {
          field[q] = cy * w + cx;
          continue;
        }
      }
      missing.push(q);
      out[3 * q] = parent.img[3 * pq]!;
      out[3 * q + 1] = parent.img[3 * pq + 1]!;
      out[3 * q + 2] = parent.img[3 * pq + 2]!;
    }
  }
  // Two sweeps (forward, then backward) spread neighbours' offsets into the gaps.
  for (let pass = 0; pass < 2 && missing.length; pass++) {
    const order = pass === 0 ? missing : missing.reverse();
    for (const q of order) {
      if (field[q]! >= 0) continue;
      const x = q % w, y = (q - x) / w;
      for (let k = 0; k < 8 && field[q]! < 0; k++) {
        const nx = x + NX[k]!, ny = y + NY[k]!;
        if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
        const m = field[ny * w + nx]!;
        if (m < 0) continue;
        const mx = m % w, my = (m - mx) / w;
        const cx = mx - NX[k]!, cy = my - NY[k]!;
        if (usable(cx, cy)) field[q] = cy * w + cx;
      }
    }
  }
  for (let y = hb.y0; y < hb.y1; y++) {
    for (let x = hb.x0, q = y * w + x; x < hb.x1; x++, q++) {
      const c = field[q]!;
      if (c < 0 || !hole[at(x, y)]) continue;
      if (blend && blendAt(x, y, w, h, field, usable, at, img, out, 3 * q)) continue;
      const cx = c % w, k = 3 * at(cx, (c - cx) / w);
      out[3 * q] = img[k]!;
      out[3 * q + 1] = img[k + 1]!;
      out[3 * q + 2] = img[k + 2]!;
    }
  }
  return field;
}

/**
 * PatchFillOptions.blend at level pixel (x, y): the mean of what its 3x3 neighbours' matches,
 * shifted onto it, say (those landing on usable pixels), written at `out[o..o+2]`. False when none
 * does (the pixel keeps its own match).
 */
function blendAt(x: number, y: number, w: number, h: number, field: Int32Array, usable: (cx: number, cy: number) => boolean, at: (x: number, y: number) => number, img: ArrayLike<number>, out: Float32Array, o: number): boolean {
  let n = 0, s0 = 0, s1 = 0, s2 = 0;
  for (let dy = -1; dy <= 1; dy++) {
    const ny = y + dy;
    if (ny < 0 || ny >= h) continue;
    for (let dx = -1; dx <= 1; dx++) {
      const nx = x + dx;
      const m = nx < 0 || nx >= w ? -1 : field[ny * w + nx]!;
      if (m < 0) continue;
      const mx = m % w, sx = mx - dx, sy = (m - mx) / w - dy;
      if (!usable(sx, sy)) continue;
      const k = 3 * at(sx, sy);
      (s0 += img[k]!), (s1 += img[k + 1]!), (s2 += img[k + 2]!), n++;
    }
  }
  if (!n) return false;
  (out[o] = s0 / n), (out[o + 1] = s1 / n), (out[o + 2] = s2 / n);
  return true;
}

/** Hole pixels of a level, counted in its hole box. */
function holeCount(hole: Uint8Array, hb: HoleBox, w: number): number {
  let n = 0;
  for (let y = hb.y0; y < hb.y1; y++) for (let x = hb.x0, q = y * w + x; x < hb.x1; x++, q++) n += hole[q]!;
  return n;
}

function refreshDistances(L: Level, targets: Int32Array, nnf: Int32Array, dist: Float32Array, r: number): void {
  for (const t of targets) dist[t] = nnf[t]! >= 0 ? patchDistance(L, t, nnf[t]!, r, Infinity) : Infinity;
}

/**
 * Where patchFill works and looks for sources around a hole whose bounding box is `box`: the box
 * and `margin` (0.5 unless told) of its larger side, at least 24 px, around it, clipped to the
 * image (exclusive ends). For a caller that prepares the sources there.
 */
export function sourceRegion(box: Region, W: number, H: number, margin = 0.5): PixelBox {
  const m = Math.max(24, Math.round(margin * Math.max(box.width, box.height)));
  return { x0: Math.max(0, box.x - m), y0: Math.max(0, box.y - m), x1: Math.min(W, box.x + box.width + m), y1: Math.min(H, box.y + box.height + m) };
}

/**
 * Fills `hole` (1 = fill) of `image` with patches from around it. Returns a new image; pixels
 * outside the hole are unchanged. A hole with no usable source near it is returned as it was.
 */
export function patchFill(image: RgbImage, hole: Uint8Array, options: PatchFillOptions = {}): RgbImage {
  const r = options.radius ?? 2;
  const { width: W, height: H } = image;
  // The working region: the hole's bounding box and a margin.
  const box = maskBox(hole, W, H);
  if (!box) return image;
  const { x0, y0, x1: xe, y1: ye } = sourceRegion(box, W, H, options.margin);
  const w = xe - x0, h = ye - y0;
  // The finest level is read in place (the photo's bytes, the caller's masks) while it is only
  // copied into: a 1 MP region's conversion to floats and its mask copies were a third of a call.
  // It is made a level of its own (floats, masks) only when it is searched (a small region).
  const view0: View = { img: image.data, hole, source: options.source, stride: W, base: y0 * W + x0 };
  const cap = options.searchSide ?? 256;
  // The region's floats and its pyramid come from the thread's scratch pool and go back to it at
  // the end (a 1 MP region is 12 MB of floats, fresh memory on every call otherwise).
  const P0 = { w, h, img: takePlane(w * h * 3), hole: new Uint8Array(0), source: new Uint8Array(0) };
  const materialize = () => {
    P0.hole = new Uint8Array(w * h);
    P0.source = new Uint8Array(w * h);
    if (!options.source) P0.source.fill(1);
    for (let y = 0; y < h; y++) {
      const i = (y0 + y) * W + x0;
      P0.img.set(image.data.subarray(3 * i, 3 * (i + w)), 3 * y * w);
      for (let x = 0, j = y * w; x < w; x++, j++) {
        P0.hole[j] = hole[i + x] ? 1 : 0;
        if (options.source) P0.source[j] = options.source[i + x] ? 1 : 0;
      }
    }
  };
  if (Math.max(w, h) <= cap) materialize();
  // Pyramid down to 40 px or less on the long side: at the coarsest level a patch spans a good part
  // of the region, so structure (the phase of stripes, where a wall meets a frame) is decided there.
  const pyramid = [P0];
  // Each level's hole box: a parent is hole where any child is, so its box is the children's halved.
  const boxes: HoleBox[] = [{ x0: box.x - x0, y0: box.y - y0, x1: box.x + box.width - x0, y1: box.y + box.height - y0 }];
  while (Math.max(pyramid.at(-1)!.w, pyramid.at(-1)!.h) > 40) {
    const p = pyramid.at(-1)!;
    const b = boxes.at(-1)!;
    pyramid.push(downsample(p.w, p.h, p === P0 ? view0 : { ...p, stride: p.w, base: 0 }));
    boxes.push({ x0: b.x0 >> 1, y0: b.y0 >> 1, x1: ((b.x1 - 1) >> 1) + 1, y1: ((b.y1 - 1) >> 1) + 1 });
  }
  // The pyramid's planes (and the last match field) go back to the scratch pool on the way out.
  const release = (field?: Int32Array) => giveBack(...pyramid.map((p) => p.img), ...(field ? [field] : []));
  const rand = mulberry32(options.seed ?? 0x9e3779b9);
  const iterations = options.iterations ?? 5;
  let nnf: Int32Array | undefined;
  let offset: { w: number; h: number; val: Float32Array; scale: number } | undefined;
  for (let l = pyramid.length - 1; l >= 0; l--) {
    const P = pyramid[l]!;
    // Levels finer than the search cap take the field of the level below, upsampled, and copy
    // each hole pixel from its match: known pixels of this level, at full sharpness (a vote of
    // matches found at a coarser level would average their phases into a blur).
    if (nnf && Math.max(P.w, P.h) > cap) {
      const field = upsampleAndCopy(P.w, P.h, P === P0 ? view0 : { ...P, stride: P.w, base: 0 }, boxes[l]!, P.img, nnf, pyramid[l + 1]!, options.blend ?? false);
      giveBack(nnf);
      nnf = field;
      continue;
    }
    if (P === P0 && !P0.hole.length) materialize();
    const L = makeLevel(P.w, P.h, P.img, P.hole, P.source, r, options.locality ?? 0);
    const perHole = options.sourcesPerHole ?? 0;
    if (perHole > 0 && !nnf && l > 0 && Math.max(pyramid[l - 1]!.w, pyramid[l - 1]!.h) <= cap && L.validList.length < perHole * holeCount(P.hole, boxes[l]!, P.w)) continue;
    if (L.validList.length === 0) {
      if (l === 0) {
        release(nnf);
        return image; // nothing to copy from
      }
      nnf = undefined; // a finer level starts afresh
      continue;
    }
    const targets = targetsOf(L, r);
    const { slot, acc } = voteBuffers(L);
    // The coarsest level searched (or a level starting afresh) decides the structure: full
    // iterations whatever its size (a small region has only one level).
    const fresh = !nnf;
    const field = new Int32Array(L.w * L.h).fill(-1);
    const dist = new Float32Array(L.w * L.h).fill(Infinity);
    if (!nnf) {
      onionFill(L);
      for (const t of targets) field[t] = L.validList[Math.floor(rand() * L.validList.length)]!;
    } else {
      // Upsampled field: a child keeps its parent's match, doubled and offset like the child.
      const cw = pyramid[l + 1]!.w;
      for (const t of targets) {
        const x = t % L.w, y = (t - x) / L.w;
        const parent = nnf[(y >> 1) * cw + (x >> 1)]!;
        let c = -1;
        if (parent >= 0) {
          const px = parent % cw, py = (parent - px) / cw;
          const cx = Math.min(L.w - 1, 2 * px + (x & 1)), cy = Math.min(L.h - 1, 2 * py + (y & 1));
          c = cy * L.w + cx;
        }
        field[t] = c >= 0 && L.valid[c] ? c : L.validList[Math.floor(rand() * L.validList.length)]!;
      }
      refreshDistances(L, targets, field, dist, r);
      vote(L, targets, field, dist, r, slot, acc, 0.5);
    }
    // The coarse levels decide the structure (where a wall meets a frame): several full-range
    // iterations; the finer searched levels refine the phase of fine texture (stripes appear only
    // there) with fewer, the finest two (measured: a third fewer searches, no visible change on
    // the development photos). The last vote of the finest searched level is sharper, dominated by
    // the best matches: at full resolution it is the result.
    const finest = l === 0 || Math.max(pyramid[l - 1]!.w, pyramid[l - 1]!.h) > cap;
    const its = fresh ? iterations : finest ? 2 : Math.max(2, iterations - 2);
    const searchRadius = Math.max(L.w, L.h);
    // About 3 levels of difference per pixel and channel over the patch: below what the eye tells apart.
    const coherence = fresh ? 0 : 9 * 3 * (2 * r + 1) ** 2;
    refreshDistances(L, targets, field, dist, r);
    for (let k = 0; k < its; k++) {
      search(L, targets, field, dist, r, k % 2 === 1, rand, searchRadius, coherence);
      vote(L, targets, field, dist, r, slot, acc, finest && k === its - 1 ? 0.25 : 0.75);
      if (k < its - 1) refreshDistances(L, targets, field, dist, r);
    }
    if (finest) offset = { w: L.w, h: L.h, val: colourOffset(L, P.source, targets, field, r), scale: 2 ** l };
    nnf = field;
  }
  const data = options.inPlace ? image.data : copyBytes(image.data);
  const fin = P0.img;
  const hb = boxes[0]!;
  for (let y = hb.y0; y < hb.y1; y++) {
    for (let x = hb.x0; x < hb.x1; x++) {
      const j = y * w + x;
      const i = (y0 + y) * W + x0 + x;
      if (!hole[i]) continue;
      // The searched level's colour offset, bilinearly at this pixel.
      let o0 = 0, o1 = 0, o2 = 0;
      if (offset) {
        const { w: ow, h: oh, val, scale } = offset;
        const fx = Math.min(ow - 1, Math.max(0, (x + 0.5) / scale - 0.5)), fy = Math.min(oh - 1, Math.max(0, (y + 0.5) / scale - 0.5));
        const ax = Math.floor(fx), ay = Math.floor(fy), bx = Math.min(ow - 1, ax + 1), by = Math.min(oh - 1, ay + 1), tx = fx - ax, ty = fy - ay;
        const k00 = 3 * (ay * ow + ax), k01 = 3 * (ay * ow + bx), k10 = 3 * (by * ow + ax), k11 = 3 * (by * ow + bx);
        const wa = (1 - tx) * (1 - ty), wb = tx * (1 - ty), wc = (1 - tx) * ty, wd = tx * ty;
        o0 = wa * val[k00]! + wb * val[k01]! + wc * val[k10]! + wd * val[k11]!;
        o1 = wa * val[k00 + 1]! + wb * val[k01 + 1]! + wc * val[k10 + 1]! + wd * val[k11 + 1]!;
        o2 = wa * val[k00 + 2]! + wb * val[k01 + 2]! + wc * val[k10 + 2]! + wd * val[k11 + 2]!;
      }
      data[3 * i] = Math.max(0, Math.min(255, Math.round(fin[3 * j]! + o0)));
      data[3 * i + 1] = Math.max(0, Math.min(255, Math.round(fin[3 * j + 1]! + o1)));
      data[3 * i + 2] = Math.max(0, Math.min(255, Math.round(fin[3 * j + 2]! + o2)));
    }
  }
  release(nnf);
  return options.inPlace ? image : { data, width: W, height: H };
}
