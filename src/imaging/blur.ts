// Blurs of float maps (box, and Gaussian as three boxes), an estimate of how blurred a photo is,
// and a filled region made as soft as its surroundings (matchSharpness). Plain typed-array loops:
// they run inside the inference threads.
import type { PixelBox } from './morphology.ts';
import { giveBack, takePlane } from './scratch.ts';

/**
 * Box blur of a float map (radius r), for shading and feathering: rows, then columns walked in
 * row order with one running sum per column (the same additions, in the same order per column, as
 * a walk down each column, without its stride through memory).
 */
export function boxBlur(src: Float32Array, W: number, H: number, r: number): Float32Array {
  const out = new Float32Array(src.length);
  boxBlurInto(src, out, new Float32Array(src.length), new Float64Array(W), W, H, r);
  return out;
}

/**
 * boxBlur's two passes from `src` into `dst` (which may be `src`: the rows are read into `tmp`
 * before any row of `dst` is written), with `acc` (W doubles) for the running column sums, so
 * repeated passes reuse their planes instead of taking two fresh ones each.
 */
function boxBlurInto(src: Float32Array, dst: Float32Array, tmp: Float32Array, acc: Float64Array, W: number, H: number, r: number): void {
  for (let y = 0; y < H; y++) {
    let sum = 0, n = 0;
    for (let x = -r; x < W; x++) {
      if (x + r < W) (sum += src[y * W + x + r]!), n++;
      if (x - r - 1 >= 0) (sum -= src[y * W + x - r - 1]!), n--;
      if (x >= 0) tmp[y * W + x] = sum / n;
    }
  }
  acc.fill(0);
  let n = 0;
  for (let y = -r; y < H; y++) {
    if (y + r < H) {
      const add = (y + r) * W;
      for (let x = 0; x < W; x++) acc[x]! += tmp[add + x]!;
      n++;
    }
    if (y - r - 1 >= 0) {
      const drop = (y - r - 1) * W;
      for (let x = 0; x < W; x++) acc[x]! -= tmp[drop + x]!;
      n--;
    }
    if (y >= 0 && y < H) for (let x = 0, row = y * W; x < W; x++) dst[row + x] = acc[x]! / n;
  }
}

/**
 * Box blur (radius r) of float maps in place: boxBlur without fresh planes (one scratch plane from
 * the thread's pool serves all the maps; see scratch.ts for why fresh memory costs).
 */
export function boxBlurInPlace(planes: readonly Float32Array[], W: number, H: number, r: number): void {
  if (r <= 0 || !planes.length) return;
  const tmp = takePlane(W * H), acc = new Float64Array(W);
  for (const p of planes) boxBlurInto(p, p, tmp, acc, W, H, r);
  giveBack(tmp);
}

/** The three box radii whose variances add up to sigma^2 (Kovesi 2010): widths wl and wl + 2. */
function gaussianRadii(sigma: number): number[] {
  const ideal = Math.sqrt((12 * sigma * sigma) / 3 + 1);
  let wl = Math.floor(ideal);
  if (wl % 2 === 0) wl--;
  const m = Math.round((12 * sigma * sigma - 3 * wl * wl - 12 * wl - 9) / (-4 * wl - 4));
  return [0, 1, 2].map((k) => ((k < m ? wl : wl + 2) - 1) / 2);
}

/**
 * Gaussian blur of float maps in place, approximated by three box blurs whose radii are chosen so
 * the variances add up to sigma^2 (Kovesi, "Fast almost-Gaussian filtering", 2010): within a few
 * per cent of a true Gaussian, at the cost of three box passes whatever sigma is. One scratch
 * plane from the thread's pool serves all the maps. `halfRes`: from sigma 2 on, at half resolution
 * (halfResBlur: a quarter of the work, for a picture's soft edges, not for measuring).
 */
export function gaussianBlurInPlace(planes: readonly Float32Array[], W: number, H: number, sigma: number, { halfRes = false } = {}): void {
  if (sigma <= 0 || !planes.length) return;
  if (halfRes && sigma >= HALF_RES_SIGMA && W >= 8 && H >= 8) return halfResBlur(planes, W, H, sigma);
  const radii = gaussianRadii(sigma);
  const tmp = takePlane(W * H), acc = new Float64Array(W);
  for (const p of planes) for (const r of radii) if (r > 0) boxBlurInto(p, p, tmp, acc, W, H, r);
  giveBack(tmp);
}

/** From this sigma (px) on, the blur runs at half resolution (a quarter of the work). */
const HALF_RES_SIGMA = 2;

/**
 * A wide blur at half resolution: each plane averaged 2x2, blurred by what is left of sigma once
 * the averaging (variance 1/4 px^2) and the bilinear way back (about 1/6 of a half-res pixel^2)
 * are counted, and interpolated back. Within a few per cent of the full-resolution result for
 * sigma >= 2, in a quarter of the time.
 */
function halfResBlur(planes: readonly Float32Array[], W: number, H: number, sigma: number): void {
  const w = Math.ceil(W / 2), h = Math.ceil(H / 2);
  const s2 = Math.sqrt(Math.max(0.25, (sigma * sigma - 0.25) / 4 - 1 / 6));
  const radii = gaussianRadii(s2);
  const small = takePlane(w * h), tmp = takePlane(w * h), acc = new Float64Array(w);
  for (const p of planes) {
    for (let y = 0; y < h; y++) {
      const ya = 2 * y, yb = Math.min(H - 1, ya + 1);
      for (let x = 0; x < w; x++) {
        const xa = 2 * x, xb = Math.min(W - 1, xa + 1);
        small[y * w + x] = 0.25 * (p[ya * W + xa]! + p[ya * W + xb]! + p[yb * W + xa]! + p[yb * W + xb]!);
      }
    }
    for (const r of radii) if (r > 0) boxBlurInto(small, small, tmp, acc, w, h, r);
    // Back: full-resolution pixel centre (x + 0.5) sits at (x + 0.5) / 2 - 0.5 on the half grid.
    for (let y = 0; y < H; y++) {
      const fy = Math.min(h - 1, Math.max(0, (y + 0.5) / 2 - 0.5));
      const y0 = Math.floor(fy), y1 = Math.min(h - 1, y0 + 1), ty = fy - y0;
      for (let x = 0; x < W; x++) {
        const fx = Math.min(w - 1, Math.max(0, (x + 0.5) / 2 - 0.5));
        const x0 = Math.floor(fx), x1 = Math.min(w - 1, x0 + 1), tx = fx - x0;
        const top = small[y0 * w + x0]! * (1 - tx) + small[y0 * w + x1]! * tx;
        const bottom = small[y1 * w + x0]! * (1 - tx) + small[y1 * w + x1]! * tx;
        p[y * W + x] = top * (1 - ty) + bottom * ty;
      }
    }
  }
  giveBack(small, tmp);
}

/** gaussianBlurInPlace on a copy. */
export function gaussianBlur(src: Float32Array, W: number, H: number, sigma: number): Float32Array {
  const out = Float32Array.from(src);
  gaussianBlurInPlace([out], W, H, sigma);
  return out;
}

/**
 * How blurred a photo is, as the standard deviation (pixels) of a Gaussian that would blur a sharp
 * edge as much: from the drop of the gradient energy when the region is blurred once more by a
 * known s. A blurred step edge of width sigma0 has gradient energy proportional to 1 / sigma0, so
 * blurring by s scales it by R = sigma0 / sqrt(sigma0^2 + s^2), and sigma0 = s R / sqrt(1 - R^2).
 * Measured where `mask` is 1 (a face has edges at every scale: eyes, brows, lips, nostrils); noise
 * loses more energy than edges do, so a noisy photo reads a little sharper than it is (the safe
 * side: its drawn hair is blurred less). `grey` is the region's lightness, W x H.
 */
export function blurSigma(grey: Float32Array, W: number, H: number, mask: Uint8Array, s = 2): number {
  return blurSigmas(grey, W, H, mask.map((v) => (v ? 1 : 0)), 1, s)[0]!;
}

/**
 * blurSigma for several masks of one region at once, from one blur of it: `bits` holds mask k as
 * its bit k (up to 8 masks); one walk over the region sums every mask's energies. `halfRes`: the
 * blur at half resolution (gaussianBlurInPlace; a quarter of the work, the estimates within ~0.06
 * px of the full blur's on the development photos' fills).
 */
export function blurSigmas(grey: Float32Array, W: number, H: number, bits: Uint8Array, masks: number, s = 2, halfRes = false): number[] {
  const blurred = takePlane(W * H);
  blurred.set(grey);
  gaussianBlurInPlace([blurred], W, H, s, { halfRes });
  const e0 = new Float64Array(masks), e1 = new Float64Array(masks);
  for (let y = 1; y < H - 1; y++) {
    for (let x = 1, i = y * W + 1; x < W - 1; x++, i++) {
      const b = bits[i]!;
      if (!b) continue;
      const gx = grey[i + 1]! - grey[i - 1]!, gy = grey[i + W]! - grey[i - W]!;
      const bx = blurred[i + 1]! - blurred[i - 1]!, by = blurred[i + W]! - blurred[i - W]!;
      const g = gx * gx + gy * gy, q = bx * bx + by * by;
      for (let k = 0; k < masks; k++) if (b & (1 << k)) (e0[k] = e0[k]! + g), (e1[k] = e1[k]! + q);
    }
  }
  giveBack(blurred);
  return Array.from(e0, (a, k) => {
    if (a <= 0) return 0;
    const R = Math.min(0.995, e1[k]! / a);
    return (s * R) / Math.sqrt(1 - R * R);
  });
}

/** Below this difference (px) matchSharpness leaves a fill as it is: it would hardly show. */
const MATCH_MIN_SIGMA = 0.8;

/** Fills for matchSharpness, marked on one region of the image. */
export interface SharpnessFills {
  /** The region measured: the fills and their surroundings. */
  region: PixelBox;
  /** Per pixel of the region (row-major): fill f's reference as bit 2f, its part as bit 2f + 1. */
  bits: Uint8Array;
  /** Per fill (four at most): its part's box and how many reference pixels it has. */
  fills: Array<{ box: PixelBox; references: number }>;
}

/**
 * Filled regions made as soft as what they continue: per fill, the sharpness (blurSigma) of its
 * reference (the fill's own sources beside it) and of its part (the filled pixels), measured on
 * the image's lightness over the region (one blur of it serves every fill); where a fill is
 * sharper by MATCH_MIN_SIGMA or more, its pixels are blurred by the Gaussian that makes up the
 * difference (sqrt(s_ref^2 - s_part^2)), with the pixels around them (within `margin`) as
 * context, and the surroundings' grain put back. An exemplar fill copies pixels at full sharpness
 * and stitches them in blocks: on an out-of-focus background (s5-top's stairs, sigma 2.1 beside
 * the removed ponytail, 1.3 in the fill) its seams and block edges were the sharpest lines there.
 * Only the parts' pixels change, in order (a later fill's blur sees the earlier ones done).
 * Returns the sigma applied per fill (0: none). RGB bytes, in place.
 */
export function matchSharpness(img: { data: Uint8Array; width: number; height: number }, marked: SharpnessFills, margin: number): number[] {
  const { width: W, data } = img;
  const { region, bits, fills } = marked;
  const x0 = region.x0, y0 = region.y0, bw = region.x1 - region.x0, bh = region.y1 - region.y0;
  if (!fills.length || bw < 8 || bh < 8) return fills.map(() => 0);
  const grey = takePlane(bw * bh);
  const lightness = () => {
    for (let y = 0; y < bh; y++) for (let x = 0, i = (y + y0) * W + x0, j = y * bw; x < bw; x++, i++, j++) grey[j] = 0.299 * data[3 * i]! + 0.587 * data[3 * i + 1]! + 0.114 * data[3 * i + 2]!;
  };
  lightness();
  const sigmas = blurSigmas(grey, bw, bh, bits, 2 * fills.length, 2, true);
  // A fill's grain, as a Gaussian noise's sigma: the median absolute Laplacian of the lightness (a
  // white noise of sigma s gives one of s * sqrt(20)), on every other row and column.
  const grainOf = (bit: number) => {
    const d = new Float32Array(((bw >> 1) + 1) * ((bh >> 1) + 1));
    let n = 0;
    for (let y = 1; y < bh - 1; y += 2) {
      for (let x = 1, j = y * bw + 1; x < bw - 1; x += 2, j += 2) {
        if (bits[j]! & bit) d[n++] = Math.abs(4 * grey[j]! - grey[j - 1]! - grey[j + 1]! - grey[j - bw]! - grey[j + bw]!);
      }
    }
    // A typed array's own numeric sort: a plain array with a comparator was tens of ms at 1 MP.
    const got = d.subarray(0, n).sort();
    return n ? (1.4826 * got[n >> 1]!) / Math.sqrt(20) : 0;
  };
  // A fixed seed: the same fills give the same picture (retries, golden outputs).
  let h = 0x2545f491;
  const noise = () => {
    // Two xorshift draws summed and centred: a cheap bell-shaped noise of unit variance.
    let a = 0;
    for (let k = 0; k < 2; k++) (h ^= h << 13), (h ^= h >>> 17), (h ^= h << 5), (a += (h >>> 0) / 4294967296);
    return (a - 1) * 2.449;
  };
  const applied: number[] = [];
  let stale = false;
  for (const [f, { box }] of fills.entries()) {
    const refBit = 1 << (2 * f), partBit = 2 << (2 * f);
    // Too few reference pixels say nothing of the surroundings' focus.
    const extra = fills[f]!.references < 400 ? 0 : Math.sqrt(Math.max(0, sigmas[2 * f]! ** 2 - sigmas[2 * f + 1]! ** 2));
    if (extra < MATCH_MIN_SIGMA) {
      applied.push(0);
      continue;
    }
    if (stale) lightness();
    // The blur takes the copied grain off the fill with its seams (a fill smoother than the
    // photo reads as painted): as much as the surroundings have is put back, as noise.
    const grainRef = grainOf(refBit);
    // The fill's own box and margin (in the shared box's coordinates).
    const fx0 = Math.max(0, box.x0 - margin - x0), fy0 = Math.max(0, box.y0 - margin - y0);
    const fx1 = Math.min(bw, box.x1 + margin - x0), fy1 = Math.min(bh, box.y1 + margin - y0);
    const fw = fx1 - fx0, fh = fy1 - fy0;
    const planes = [0, 1, 2].map(() => takePlane(fw * fh));
    for (let y = 0; y < fh; y++) for (let x = 0, i = (y + fy0 + y0) * W + fx0 + x0, j = y * fw; x < fw; x++, i++, j++) for (let c = 0; c < 3; c++) planes[c]![j] = data[3 * i + c]!;
    gaussianBlurInPlace(planes, fw, fh, extra, { halfRes: true });
    for (let y = 0; y < fh; y++) for (let x = 0, j = (y + fy0) * bw + fx0, k = y * fw; x < fw; x++, j++, k++) grey[j] = 0.299 * planes[0]![k]! + 0.587 * planes[1]![k]! + 0.114 * planes[2]![k]!;
    const grain = Math.sqrt(Math.max(0, grainRef ** 2 - grainOf(partBit) ** 2));
    for (let y = 0; y < fh; y++) {
      for (let x = 0, i = (y + fy0 + y0) * W + fx0 + x0, j = (y + fy0) * bw + fx0, k = y * fw; x < fw; x++, i++, j++, k++) {
        if (!(bits[j]! & partBit)) continue;
        const n = grain > 0 ? grain * noise() : 0;
        for (let c = 0; c < 3; c++) data[3 * i + c] = Math.max(0, Math.min(255, Math.round(planes[c]![k]! + n)));
      }
    }
    giveBack(...planes);
    // The shared lightness now holds this fill's blur without its grain: taken again if needed.
    stale = true;
    applied.push(extra);
  }
  giveBack(grey);
  return applied;
}
