// Blurs of float maps (box, and Gaussian as three boxes) and an estimate of how blurred a photo is.
// Plain typed-array loops: they run inside the inference threads.
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
  const blurred = gaussianBlur(grey, W, H, s);
  let e0 = 0, e1 = 0;
  for (let y = 1; y < H - 1; y++) {
    for (let x = 1, i = y * W + 1; x < W - 1; x++, i++) {
      if (!mask[i]) continue;
      const gx = grey[i + 1]! - grey[i - 1]!, gy = grey[i + W]! - grey[i - W]!;
      const bx = blurred[i + 1]! - blurred[i - 1]!, by = blurred[i + W]! - blurred[i - W]!;
      e0 += gx * gx + gy * gy;
      e1 += bx * bx + by * by;
    }
  }
  if (e0 <= 0) return 0;
  const R = Math.min(0.995, e1 / e0);
  return (s * R) / Math.sqrt(1 - R * R);
}
