// Separable resampling in JS for the try-on's model crops, letterboxes and mask placements:
// sharp's round trips for these (a crop of a 1 MP photo to 256 px, a 256 px mask scaled back to
// the photo) cost 10-40 ms each on this machine, most of it copying and first-touching megabyte
// buffers on the libvips side; the filter itself touches each source pixel a few times.
// Enlarging is bilinear, reducing averages each output pixel's footprint by area (as sharp's
// "linear" kernel, widened to the scale, also filters it: no aliasing). Values agree with sharp's
// within a level or two on average (more at edges), not bit for bit.
import { giveBack, takePlane } from './scratch.ts';

/** Per output pixel of one axis: `k` source indices (clamped to the source: edges repeat) and weights. */
interface Taps {
  k: number;
  index: Int32Array;
  weight: Float32Array;
}

/**
 * Taps for outputs [from, to) of a virtual `outLen`-pixel axis that spans source coordinates
 * [start, start + span) of a `limit`-pixel source axis. Enlarging: a tent of one source pixel
 * (bilinear, pixel centres aligned). Reducing: each output pixel's footprint averaged by area
 * (OpenCV's INTER_AREA): ceil(scale) + 1 taps, half a widened tent's, and no aliasing.
 */
function taps(start: number, span: number, outLen: number, from: number, to: number, limit: number): Taps {
  const scale = span / outLen;
  const k = scale > 1 ? Math.ceil(scale) + 1 : 2;
  const n = Math.max(0, to - from);
  const index = new Int32Array(n * k), weight = new Float32Array(n * k);
  for (let o = 0; o < n; o++) {
    // Reducing: the footprint [a, a + scale) in source pixel-index coordinates (pixel i covers
    // [i, i + 1)), each source pixel weighted by its overlap. Enlarging: a tent around the output
    // pixel's centre c.
    const a = start + (o + from) * scale;
    const c = start + (o + from + 0.5) * scale - 0.5;
    const lo = Math.floor(scale > 1 ? a : c);
    const w = (s: number): number => (scale > 1 ? Math.max(0, Math.min(s + 1, a + scale) - Math.max(s, a)) : Math.max(0, 1 - Math.abs(s - c)));
    let sum = 0;
    for (let j = 0; j < k; j++) {
      const v = w(lo + j);
      index[o * k + j] = Math.min(limit - 1, Math.max(0, lo + j));
      weight[o * k + j] = v;
      sum += v;
    }
    for (let j = 0; j < k; j++) weight[o * k + j]! /= sum || 1;
  }
  return { k, index, weight };
}

/**
 * Resamples the source rectangle (x, y, sw, sh) of a `channels`-channel 8-bit image (which may
 * reach past the image: its edge pixels repeat) to a virtual outW x outH picture, and returns its
 * window [ox0, ox1) x [oy0, oy1) as 8-bit, row-major.
 */
function resampleWindow(
  src: Uint8Array,
  W: number,
  H: number,
  channels: number,
  rect: { x: number; y: number; width: number; height: number },
  outW: number,
  outH: number,
  win: { x0: number; y0: number; x1: number; y1: number },
): Uint8Array {
  const ow = win.x1 - win.x0, oh = win.y1 - win.y0;
  const out = new Uint8Array(Math.max(0, ow) * Math.max(0, oh) * channels);
  if (ow <= 0 || oh <= 0) return out;
  const tx = taps(rect.x, rect.width, outW, win.x0, win.x1, W);
  const ty = taps(rect.y, rect.height, outH, win.y0, win.y1, H);
  if (rect.height > outH) return reduceRowsFirst(src, W, channels, tx, ty, ow, oh, out);
  // Enlarging: the source rows the vertical taps read, filtered horizontally once each.
  let r0 = H, r1 = -1;
  for (let i = 0; i < ty.index.length; i++) (r0 = Math.min(r0, ty.index[i]!)), (r1 = Math.max(r1, ty.index[i]!));
  const rowLen = ow * channels;
  // A kept plane (scratch.ts): a fresh 3 MB one cost more in first-touch page faults than the filter.
  const tmp = takePlane((r1 - r0 + 1) * rowLen);
  const { k: kx, index: ix, weight: wx } = tx;
  // (Enlarging is a mask's placement, one channel, or a crop smaller than the model's input: the
  // plain per-channel loop; reduceRowsFirst unrolls RGB, where whole photos are read.)
  for (let r = r0; r <= r1; r++) {
    const base = r * W, at = (r - r0) * rowLen;
    for (let o = 0; o < ow; o++) {
      for (let c = 0; c < channels; c++) {
        let acc = 0;
        for (let j = 0; j < kx; j++) acc += wx[o * kx + j]! * src[(base + ix[o * kx + j]!) * channels + c]!;
        tmp[at + o * channels + c] = acc;
      }
    }
  }
  const { k: ky, index: iy, weight: wy } = ty;
  const acc = new Float32Array(rowLen);
  const clamped = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length);
  for (let o = 0; o < oh; o++) {
    acc.fill(0);
    for (let j = 0; j < ky; j++) {
      const w = wy[o * ky + j]!;
      if (w === 0) continue;
      const from = (iy[o * ky + j]! - r0) * rowLen;
      for (let i = 0; i < rowLen; i++) acc[i]! += w * tmp[from + i]!;
    }
    // Through a clamped view: it rounds (half to even) where Uint8Array's conversion truncates.
    clamped.set(acc, o * rowLen);
  }
  giveBack(tmp);
  return out;
}

/**
 * resampleWindow when reducing rows: the rows first (each output row a weighted sum of whole
 * source rows over the columns the horizontal taps read: contiguous loops), then the columns of
 * those few rows. Filtering every source row horizontally first (indexed reads) was most of the
 * try-on's resampling time.
 */
function reduceRowsFirst(src: Uint8Array, W: number, channels: number, tx: Taps, ty: Taps, ow: number, oh: number, out: Uint8Array): Uint8Array {
  let c0 = W, c1 = -1;
  for (let i = 0; i < tx.index.length; i++) (c0 = Math.min(c0, tx.index[i]!)), (c1 = Math.max(c1, tx.index[i]!));
  const rowLen = (c1 - c0 + 1) * channels;
  const tmp = takePlane(oh * rowLen);
  const { k: ky, index: iy, weight: wy } = ty;
  for (let o = 0; o < oh; o++) {
    const at = o * rowLen;
    for (let j = 0; j < ky; j++) {
      const w = wy[o * ky + j]!;
      if (w === 0) continue;
      const from = (iy[o * ky + j]! * W + c0) * channels;
      for (let i = 0; i < rowLen; i++) tmp[at + i]! += w * src[from + i]!;
    }
  }
  const { k: kx, index: ix, weight: wx } = tx;
  // Through a clamped view: it rounds (half to even) where Uint8Array's conversion truncates.
  const clamped = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length);
  for (let o = 0; o < oh; o++) {
    const at = o * rowLen, to = o * ow * channels;
    if (channels === 3) {
      for (let x = 0, t = 0; x < ow; x++) {
        let a0 = 0, a1 = 0, a2 = 0;
        for (let j = 0; j < kx; j++, t++) {
          const w = wx[t]!, p = at + 3 * (ix[t]! - c0);
          (a0 += w * tmp[p]!), (a1 += w * tmp[p + 1]!), (a2 += w * tmp[p + 2]!);
        }
        (clamped[to + 3 * x] = a0), (clamped[to + 3 * x + 1] = a1), (clamped[to + 3 * x + 2] = a2);
      }
      continue;
    }
    for (let x = 0; x < ow; x++) {
      for (let c = 0; c < channels; c++) {
        let acc = 0;
        for (let j = 0; j < kx; j++) acc += wx[x * kx + j]! * tmp[at + (ix[x * kx + j]! - c0) * channels + c]!;
        clamped[to + x * channels + c] = acc;
      }
    }
  }
  giveBack(tmp);
  return out;
}

/**
 * The square [x, y, side, side] of an RGB image (reaching past the image repeats its edge pixels)
 * resampled to size x size: HWC bytes. What cropSquare (sharp) does, in JS.
 */
export function resampleSquare(img: { data: Uint8Array; width: number; height: number }, x: number, y: number, side: number, size: number): Uint8Array {
  const x0 = Math.round(x), y0 = Math.round(y), s = Math.max(1, Math.round(side));
  return resampleWindow(img.data, img.width, img.height, 3, { x: x0, y: y0, width: s, height: s }, size, size, { x0: 0, y0: 0, x1: size, y1: size });
}

/**
 * A w x h mask (0..255) scaled to outW x outH and placed at (left, top) on a zero canvas: only the
 * part inside the canvas is computed. What placeMask (sharp, no feather) does, in JS.
 */
export function placeMaskResampled(mask: Uint8Array, w: number, h: number, outW: number, outH: number, canvas: { width: number; height: number; left: number; top: number }): Uint8Array {
  const ow = Math.max(1, Math.round(outW)), oh = Math.max(1, Math.round(outH));
  const left = Math.round(canvas.left), top = Math.round(canvas.top);
  const out = new Uint8Array(canvas.width * canvas.height);
  const win = { x0: Math.max(0, -left), y0: Math.max(0, -top), x1: Math.min(ow, canvas.width - left), y1: Math.min(oh, canvas.height - top) };
  if (win.x1 <= win.x0 || win.y1 <= win.y0) return out;
  const part = resampleWindow(mask, w, h, 1, { x: 0, y: 0, width: w, height: h }, ow, oh, win);
  const pw = win.x1 - win.x0;
  for (let y = win.y0; y < win.y1; y++) out.set(part.subarray((y - win.y0) * pw, (y - win.y0 + 1) * pw), (y + top) * canvas.width + left + win.x0);
  return out;
}

/**
 * The image letterboxed into size x size (aspect kept, centred, black bars; the geometry of
 * image.ts's letterboxGeometry): HWC bytes. What letterboxRgb (sharp) does, in JS.
 */
export function letterboxResampled(img: { data: Uint8Array; width: number; height: number }, g: { size: number; w: number; h: number; padX: number; padY: number }): Uint8Array {
  const out = new Uint8Array(g.size * g.size * 3);
  const part = resampleWindow(img.data, img.width, img.height, 3, { x: 0, y: 0, width: img.width, height: img.height }, g.w, g.h, { x0: 0, y0: 0, x1: g.w, y1: g.h });
  for (let y = 0; y < g.h; y++) out.set(part.subarray(3 * y * g.w, 3 * (y + 1) * g.w), 3 * ((y + g.padY) * g.size + g.padX));
  return out;
}
