// The ONLY importer of sharp: decode, letterbox-to-tensor, drawing and encoding.
// Images travel between stages as RgbImage (8-bit interleaved RGB, EXIF orientation applied),
// decoded once and reused.
import type { Region } from './morphology.ts';
import sharp, { type Sharp } from 'sharp';
import { AppError } from '../errors/codes.ts';
import { letterboxResampled } from './resample.ts';
import { bellNoise } from './grain.ts';

// Inputs are one-off: libvips' operation cache only holds memory here.
sharp.cache(false);

export interface SharpSettings {
  /** libvips threads per operation; 0 = libvips' default (one per core). */
  concurrency: number;
}

/**
 * Sets libvips' thread count per operation. It is one value for the whole process, and sharp's
 * own module code resets it (to 1 on glibc without jemalloc, unless MALLOC_ARENA_MAX is set; to
 * the core count otherwise) each time a thread first imports sharp: so every inference thread
 * calls this after its imports, with the same value, as does the main thread.
 * Default 1: tasks run in parallel across inference threads, each beside onnxruntime's intra-op
 * threads, so more libvips threads per operation only oversubscribe the cores (measured: see
 * README "Benchmarks"). The operation cache stays off (above).
 */
export function configureSharp(settings: SharpSettings): void {
  sharp.concurrency(settings.concurrency);
}

/**
 * On glibc Linux, sharp's shared libraries must be loaded by the main thread before worker threads
 * use sharp, so they stay loaded until every thread is done (sharp docs, "Worker threads").
 * Importing this module does that; calling this documents why the import is there.
 */
export function ensureSharpLoadedInMainThread(): void {
  void sharp.versions;
}

export interface RgbImage {
  /** Interleaved RGB, row-major, width * height * 3 bytes. */
  data: Uint8Array;
  width: number;
  height: number;
}

export interface DecodeLimits {
  maxPixels: number;
}

/**
 * Decodes JPEG/PNG/WebP bytes to RGB with EXIF orientation applied and alpha removed.
 * The header is read first, so a decompression bomb is refused before any pixel is decoded.
 */
export async function decodeImage(bytes: Uint8Array, limits: DecodeLimits): Promise<RgbImage> {
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>['metadata']>>;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (e) {
    throw decodeFailed(e);
  }
  const pixels = (meta.width ?? 0) * (meta.height ?? 0);
  if (!meta.width || !meta.height) throw new AppError('IMAGE_DECODE_FAILED', 'image has no dimensions');
  if (pixels > limits.maxPixels) {
    throw new AppError(
      'IMAGE_TOO_MANY_PIXELS',
      `image is ${meta.width}x${meta.height} (${pixels} pixels), above the limit of ${limits.maxPixels} pixels`,
    );
  }
  try {
    // failOn 'warning' (sharp's default) also refuses truncated or corrupt data instead of
    // returning a half-grey picture.
    const { data, info } = await sharp(bytes, { limitInputPixels: limits.maxPixels, failOn: 'warning' })
      .rotate()
      .toColourspace('srgb')
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`expected 3 channels after conversion, got ${info.channels}`);
    return { data, width: info.width, height: info.height };
  } catch (e) {
    throw decodeFailed(e);
  }
}

/**
 * libvips' text names its loaders and internals; the caller gets a short reason in our words, the
 * worker's log the text (the error's cause).
 */
function decodeFailed(e: unknown): AppError {
  const text = e instanceof Error ? e.message : String(e);
  const reason = /unsupported image format/i.test(text) ? 'unsupported image format' : 'corrupt or truncated data';
  return new AppError('IMAGE_DECODE_FAILED', `image could not be decoded (${reason})`, undefined, { cause: e });
}

/** Width and height from the header alone (no pixel is decoded); null when unreadable. */
export async function readImageSize(bytes: Uint8Array): Promise<{ width: number; height: number } | null> {
  try {
    const m = await sharp(bytes, { limitInputPixels: false }).metadata();
    if (!m.width || !m.height) return null;
    // EXIF orientations 5-8 swap the displayed width and height.
    return (m.orientation ?? 1) >= 5 ? { width: m.height, height: m.width } : { width: m.width, height: m.height };
  } catch {
    return null;
  }
}

function rawInput(img: RgbImage) {
  return sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } });
}

/** Maps letterboxed tensor coordinates back to the original image: x = (xl - padX) / scale. */
export interface Letterbox {
  size: number;
  scale: number;
  padX: number;
  padY: number;
}

export function letterboxGeometry(width: number, height: number, size: number): Letterbox & { w: number; h: number } {
  const scale = Math.min(size / width, size / height);
  const w = Math.max(1, Math.round(width * scale));
  const h = Math.max(1, Math.round(height * scale));
  const padX = Math.floor((size - w) / 2);
  const padY = Math.floor((size - h) / 2);
  return { size, scale, padX, padY, w, h };
}

/**
 * Letterboxes an image into size x size (aspect kept, black bars) and returns an NHWC float32
 * tensor [1, size, size, 3] with values mapped from [0, 255] to [lo, hi]. `resample`: by sharp
 * (the default) or in JS (imaging/resample.ts: no libvips round trip; within a level or two).
 */
export async function letterboxToTensor(
  img: RgbImage,
  size: number,
  range: readonly [lo: number, hi: number],
  resample: 'sharp' | 'js' = 'sharp',
): Promise<{ tensor: Float32Array; letterbox: Letterbox }> {
  const g = letterboxGeometry(img.width, img.height, size);
  const { bytes: boxed, letterbox } = resample === 'js' ? { bytes: letterboxResampled(img, g), letterbox: { size, scale: g.scale, padX: g.padX, padY: g.padY } } : await letterboxRgb(img, size);
  const [lo, hi] = range;
  const k = (hi - lo) / 255;
  const tensor = new Float32Array(size * size * 3);
  for (let i = 0; i < tensor.length; i++) tensor[i] = boxed[i]! * k + lo;
  return { tensor, letterbox };
}

/** Letterboxes into size x size (aspect kept, black bars): HWC RGB bytes and the mapping back. */
export async function letterboxRgb(img: RgbImage, size: number): Promise<{ bytes: Uint8Array; letterbox: Letterbox }> {
  const g = letterboxGeometry(img.width, img.height, size);
  const bytes = await rawInput(img)
    .resize(g.w, g.h, { fit: 'fill', kernel: 'linear' })
    .extend({
      top: g.padY,
      bottom: size - g.h - g.padY,
      left: g.padX,
      right: size - g.w - g.padX,
      background: { r: 0, g: 0, b: 0 },
    })
    .raw()
    .toBuffer();
  return { bytes, letterbox: { size, scale: g.scale, padX: g.padX, padY: g.padY } };
}

export interface Overlay {
  boxes: Array<{ x: number; y: number; width: number; height: number }>;
  points: Array<{ x: number; y: number }>;
}

const BOX_RGB = [0x00, 0xe6, 0x76] as const;
const POINT_RGB = [0xff, 0x17, 0x44] as const;

function fillRect(img: RgbImage, x0: number, y0: number, x1: number, y1: number, rgb: readonly number[]): void {
  const xa = Math.max(0, Math.floor(x0)), xb = Math.min(img.width, Math.ceil(x1));
  const ya = Math.max(0, Math.floor(y0)), yb = Math.min(img.height, Math.ceil(y1));
  for (let y = ya; y < yb; y++) {
    let o = (y * img.width + xa) * 3;
    for (let x = xa; x < xb; x++, o += 3) {
      img.data[o] = rgb[0]!;
      img.data[o + 1] = rgb[1]!;
      img.data[o + 2] = rgb[2]!;
    }
  }
}

/**
 * Draws box outlines and keypoint squares straight into a copy of the pixels, then encodes a JPEG.
 * (Rasterising an SVG overlay the size of the photo cost 50-60 ms a picture; this costs well under 1 ms.)
 */
export async function renderOverlayJpeg(img: RgbImage, overlay: Overlay, quality = 85): Promise<Buffer> {
  const canvas = copyImage(img);
  const t = Math.max(2, Math.round(Math.min(img.width, img.height) / 200));
  for (const b of overlay.boxes) {
    const x1 = b.x + b.width, y1 = b.y + b.height;
    fillRect(canvas, b.x - t / 2, b.y - t / 2, x1 + t / 2, b.y + t / 2, BOX_RGB);
    fillRect(canvas, b.x - t / 2, y1 - t / 2, x1 + t / 2, y1 + t / 2, BOX_RGB);
    fillRect(canvas, b.x - t / 2, b.y - t / 2, b.x + t / 2, y1 + t / 2, BOX_RGB);
    fillRect(canvas, x1 - t / 2, b.y - t / 2, x1 + t / 2, y1 + t / 2, BOX_RGB);
  }
  for (const p of overlay.points) fillRect(canvas, p.x - t, p.y - t, p.x + t, p.y + t, POINT_RGB);
  return encodeJpeg(canvas, quality);
}

export async function encodeJpeg(img: RgbImage, quality = 90): Promise<Buffer> {
  return rawInput(img).jpeg({ quality }).toBuffer();
}

/** A 2x3 affine map from output pixel (x, y) to input point: [a0, a1, a2, b0, b1, b2]. */
export type Affine = readonly [number, number, number, number, number, number];

/**
 * Samples an image through an affine map into an NHWC float tensor [1, outH, outW, 3] with values
 * mapped from [0, 255] to [lo, hi]. Bilinear, with `border` 'zero' (outside is 0) or 'replicate'
 * (coordinates clamped to the edge), matching tf.image.transform's sampling so crops made here
 * equal MediaPipe's TF.js pre-processing.
 */
export function sampleAffine(img: RgbImage, m: Affine, outW: number, outH: number, border: 'zero' | 'replicate', range: readonly [number, number]): Float32Array {
  const out = new Float32Array(outW * outH * 3);
  const [lo, hi] = range;
  const k = (hi - lo) / 255;
  const W = img.width;
  const H = img.height;
  const d = img.data;
  const read = (y: number, x: number, c: number) => (x < 0 || y < 0 || x >= W || y >= H ? 0 : d[(y * W + x) * 3 + c]!);
  let o = 0;
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      let sx = m[0] * x + m[1] * y + m[2];
      let sy = m[3] * x + m[4] * y + m[5];
      if (border === 'replicate') {
        sx = Math.min(Math.max(sx, 0), W - 1);
        sy = Math.min(Math.max(sy, 0), H - 1);
      }
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      const fx = sx - x0;
      const fy = sy - y0;
      for (let c = 0; c < 3; c++) {
        const top = (1 - fx) * read(y0, x0, c) + fx * read(y0, x0 + 1, c);
        const bottom = (1 - fx) * read(y0 + 1, x0, c) + fx * read(y0 + 1, x0 + 1, c);
        out[o++] = ((1 - fy) * top + fy * bottom) * k + lo;
      }
    }
  }
  return out;
}

/** Resizes an image to exactly w x h (aspect not kept) and returns its bytes (HWC RGB). */
export async function resizeRgb(img: RgbImage, w: number, h: number, kernel: 'linear' | 'cubic' = 'linear'): Promise<Uint8Array> {
  return rawInput(img).resize(w, h, { fit: 'fill', kernel }).raw().toBuffer();
}

/** An image scaled by k (each side rounded, at least 1 px). */
export async function scaledRgb(img: RgbImage, k: number): Promise<RgbImage> {
  const w = Math.max(1, Math.round(img.width * k)), h = Math.max(1, Math.round(img.height * k));
  return { data: await resizeRgb(img, w, h), width: w, height: h };
}

/**
 * A picture worked on at a smaller scale put back at full resolution: where the work picture
 * changed (`after` against `before`, the work input), `after` scaled up (bicubic) over `full`;
 * everywhere else `full`'s own pixels, byte for byte (scaled down and up again they would be a
 * softer copy). Inside the changed area's outline the picture blends from the photo's pixels to
 * the scaled-up change over about half a work pixel (its mask scaled up and feathered). The
 * scaled-up change is smoother than the photo's own pixels around it: `grain` (levels, 0: none)
 * lays seeded noise of that strength over it. Returns `full`-sized RGB bytes.
 */
export async function upscaleChanges(full: RgbImage, before: RgbImage, after: RgbImage, grain: number, seed: number): Promise<Uint8Array> {
  const { width: w, height: h } = before;
  const { width: W, height: H } = full;
  const changed = new Uint8Array(w * h);
  let x0 = w, x1 = -1, y0 = h, y1 = -1;
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      if (before.data[3 * i] === after.data[3 * i] && before.data[3 * i + 1] === after.data[3 * i + 1] && before.data[3 * i + 2] === after.data[3 * i + 2]) continue;
      changed[i] = 255;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  const out = copyBytes(full.data);
  if (x1 < 0) return out;
  // Only the changed box (a work pixel's margin for the blend) is scaled up and walked: libvips
  // computes what the box asks for (the whole 5.5 MP frame was ~0.3 s for a small fill).
  const kx = W / w, ky = H / h;
  const box = boxAtScale({ x0, y0, x1, y1 }, w, h, W, H);
  const bx0 = box.x, by0 = box.y;
  // The mask feathered by half a work pixel: scaled up bilinearly alone, a diagonal outline (the
  // new hair's beside a kept dark lock) was a staircase of work pixels.
  const [up, m] = await Promise.all([resizedBox(after.data, w, h, 3, W, H, box, 'cubic'), resizedBox(changed, w, h, 1, W, H, box, 'linear', 0.5 * Math.max(kx, ky))]);
  // The blend ramps inside the changed area only (0 at its outline, 1 half a work pixel in): what
  // the work picture left unchanged stays the photo's own (the bicubic change spilt a pixel or two
  // of a garment's colour onto a forearm in front of it, 1.2% of its skin by 30 levels and more).
  const noise = bellNoise(seed);
  for (let y = 0; y < box.height; y++) {
    for (let x = 0, j = y * box.width, i = (y + by0) * W + bx0; x < box.width; x++, j++, i++) {
      const a = Math.min(1, Math.max(0, (2 * m[j]!) / 255 - 1));
      if (a <= 0) continue;
      const g = grain > 0 ? grain * noise() : 0;
      for (let c = 0; c < 3; c++) {
        const k = 3 * i + c;
        out[k] = Math.max(0, Math.min(255, Math.round(full.data[k]! + (up[3 * j + c]! + g - full.data[k]!) * a)));
      }
    }
  }
  return out;
}

/**
 * The pixels of a W x H picture that a box of a w x h picture (inclusive bounds) covers once it is
 * scaled up, with a work pixel's margin either side (what a bicubic scale-up of the box reads and
 * a feathered outline reaches), clipped to the picture.
 */
export function boxAtScale(b: { x0: number; y0: number; x1: number; y1: number }, w: number, h: number, W: number, H: number): Region {
  const kx = W / w, ky = H / h;
  const x0 = Math.max(0, Math.floor((b.x0 - 1) * kx)), x1 = Math.min(W, Math.ceil((b.x1 + 2) * kx));
  const y0 = Math.max(0, Math.floor((b.y0 - 1) * ky)), y1 = Math.min(H, Math.ceil((b.y1 + 2) * ky));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/**
 * `src` (w x h, 1 or 3 channels) resized to W x H and, of that, only the pixels of `box` (W x H
 * coordinates; what libvips computes), optionally feathered by a Gaussian of `featherPx` after the
 * resize (read past the box's edges, as the whole frame's blur would). Returns the box's bytes.
 */
export async function resizedBox(src: Uint8Array, w: number, h: number, channels: 1 | 3, W: number, H: number, box: Region, kernel: 'linear' | 'cubic', featherPx = 0): Promise<Uint8Array> {
  const m = featherPx > 0 ? Math.ceil(3 * featherPx) + 1 : 0;
  const left = Math.max(0, box.x - m), top = Math.max(0, box.y - m);
  const width = Math.min(W, box.x + box.width + m) - left, height = Math.min(H, box.y + box.height + m) - top;
  // sharp widens 1-channel raw input to sRGB on output unless told 'b-w': keep the channels.
  const keep = (p: Sharp) => (channels === 1 ? p.toColourspace('b-w') : p);
  let part = await keep(sharp(src, { raw: { width: w, height: h, channels } }).resize(W, H, { fit: 'fill', kernel }).extract({ left, top, width, height })).raw().toBuffer();
  // A second pass, so the blur runs after the resize.
  if (featherPx > 0) part = await keep(sharp(part, { raw: { width, height, channels } }).blur(Math.max(0.3, featherPx))).raw().toBuffer();
  if (left === box.x && top === box.y && width === box.width && height === box.height) return part;
  const out = new Uint8Array(box.width * box.height * channels);
  const row = box.width * channels;
  for (let y = 0; y < box.height; y++) {
    const from = ((y + box.y - top) * width + (box.x - left)) * channels;
    out.set(part.subarray(from, from + row), y * row);
  }
  return out;
}

/**
 * The pixels of `box` (integer x, y; it may reach past the image: the edge pixels are repeated).
 * Returns HWC RGB bytes.
 */
export async function cropPadded(img: RgbImage, box: Region): Promise<Uint8Array> {
  const { x: x0, y: y0, width: w, height: h } = box;
  const left = Math.max(0, x0), top = Math.max(0, y0);
  const right = Math.min(img.width, x0 + w), bottom = Math.min(img.height, y0 + h);
  return rawInput(img)
    .extract({ left, top, width: Math.max(1, right - left), height: Math.max(1, bottom - top) })
    .extend({ left: left - x0, top: top - y0, right: x0 + w - right, bottom: y0 + h - bottom, extendWith: 'copy' })
    .raw()
    .toBuffer();
}

/**
 * Crops the square [x, y, side, side] (which may reach past the image: the edge pixels are
 * repeated) and resizes it to size x size with proper filtering. Returns HWC RGB bytes.
 */
export async function cropSquare(img: RgbImage, x: number, y: number, side: number, size: number): Promise<Uint8Array> {
  const s = Math.max(1, Math.round(side));
  // Two passes: sharp runs resize before extend whatever the call order, so the padded square
  // is materialized first.
  const padded = await cropPadded(img, { x: Math.round(x), y: Math.round(y), width: s, height: s });
  return sharp(padded, { raw: { width: s, height: s, channels: 3 } }).resize(size, size, { fit: 'fill', kernel: 'linear' }).raw().toBuffer();
}

/**
 * A soft mask (0..255, w x h) scaled to outW x outH with bilinear interpolation and feathered by
 * a Gaussian of `featherPx` (0: none), placed at (left, top) on a zero canvas of canvasW x canvasH.
 */
export async function placeMask(
  mask: Uint8Array,
  w: number,
  h: number,
  outW: number,
  outH: number,
  featherPx: number,
  canvas: { width: number; height: number; left: number; top: number },
): Promise<Uint8Array> {
  const sw = Math.max(1, Math.round(outW)), sh = Math.max(1, Math.round(outH));
  const scaled = await resizedBox(mask, w, h, 1, sw, sh, { x: 0, y: 0, width: sw, height: sh }, 'linear', featherPx);
  const out = new Uint8Array(canvas.width * canvas.height);
  // Row by row, the part of each row inside the canvas in one copy.
  const left = Math.round(canvas.left), top = Math.round(canvas.top);
  const x0 = Math.max(0, -left), x1 = Math.min(sw, canvas.width - left);
  for (let y = Math.max(0, -top); y < Math.min(sh, canvas.height - top) && x1 > x0; y++) {
    out.set(scaled.subarray(y * sw + x0, y * sw + x1), (y + top) * canvas.width + left + x0);
  }
  return out;
}

/**
 * bytes / divisor + offset as float32 (a model's input tensor from 8-bit pixels; a division, as
 * the models' own preprocessing writes it, so the values match it bit for bit). A typed loop:
 * Float32Array.from with a mapper calls it per element, 10-20x slower on a 512x512x3 crop.
 */
export function scaledFloats(bytes: Uint8Array, divisor: number, offset = 0): Float32Array {
  const out = new Float32Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = bytes[i]! / divisor + offset;
  return out;
}

/** Blends `color` over the image where the 8-bit mask is set (weight mask/255 * strength). */
export function tint(img: RgbImage, mask: Uint8Array, color: readonly [number, number, number], strength: number): RgbImage {
  const out = copyBytes(img.data);
  for (let i = 0; i < mask.length; i++) {
    const a = (mask[i]! / 255) * strength;
    if (a === 0) continue;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(out[i * 3 + c]! * (1 - a) + color[c]! * a);
  }
  return { data: out, width: img.width, height: img.height };
}

/** Draws thick line segments and square points in place (for pose skeletons and landmark meshes). */
export function drawSegments(img: RgbImage, segments: Array<[number, number, number, number]>, rgb: readonly number[], thickness: number): void {
  for (const [x0, y0, x1, y1] of segments) {
    const steps = Math.max(1, Math.ceil(Math.hypot(x1 - x0, y1 - y0)));
    for (let i = 0; i <= steps; i++) {
      const x = x0 + ((x1 - x0) * i) / steps;
      const y = y0 + ((y1 - y0) * i) / steps;
      fillRect(img, x - thickness / 2, y - thickness / 2, x + thickness / 2, y + thickness / 2, rgb);
    }
  }
}

export function drawPoints(img: RgbImage, points: Array<{ x: number; y: number }>, rgb: readonly number[], radius: number): void {
  for (const p of points) fillRect(img, p.x - radius, p.y - radius, p.x + radius, p.y + radius, rgb);
}

/**
 * A copy of bytes (of a Buffer too, whose slice() is a view): one memcpy. `Uint8Array.from` walks
 * the source as an iterable, ~4 ns a byte (11 ms for a 1 MP picture).
 */
export function copyBytes(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  return out;
}

export function copyImage(img: RgbImage): RgbImage {
  return { data: copyBytes(img.data), width: img.width, height: img.height };
}

/** The pixels of `box` (inside the image) as an image of their own. */
export function cropRgb(img: RgbImage, box: Region): RgbImage {
  const data = new Uint8Array(3 * box.width * box.height);
  for (let y = 0; y < box.height; y++) {
    const from = 3 * ((box.y + y) * img.width + box.x);
    data.set(img.data.subarray(from, from + 3 * box.width), 3 * y * box.width);
  }
  return { data, width: box.width, height: box.height };
}

/** Writes `part` (channels per pixel: 3 for RGB, 1 for a mask) over `box` of `dst` (`width` wide), in place; returns `dst`. */
export function pasteInto(dst: Uint8Array, width: number, part: Uint8Array, box: Region, channels: 1 | 3): Uint8Array {
  const row = channels * box.width;
  for (let y = 0; y < box.height; y++) dst.set(part.subarray(y * row, (y + 1) * row), channels * ((box.y + y) * width + box.x));
  return dst;
}

/** PNG of 1 (grey), 3 (RGB) or 4 (RGBA) channel bytes. */
export async function encodePng(data: Uint8Array, width: number, height: number, channels: 1 | 3 | 4): Promise<Buffer> {
  const s = sharp(data, { raw: { width, height, channels } });
  return (channels === 1 ? s.toColourspace('b-w') : s).png({ compressionLevel: 6 }).toBuffer();
}

/**
 * Colour bleeding ("edge padding"): each pixel outside `inside` within `rings` steps of it takes
 * the mean colour of its already-coloured 4-neighbours (of its diagonal ones where it has none),
 * ring by ring, so that what samples an
 * object's outline bilinearly (a warp that stretches it) reads the object's own colours there
 * instead of its anti-aliased fringe and background. Pixels farther out keep their colour.
 */
export function bleedColours(img: RgbImage, inside: Uint8Array, rings: number): RgbImage {
  const { width: W, height: H } = img;
  const data = copyBytes(img.data);
  const done = copyBytes(inside);
  let frontier: number[] = [];
  const pushNeighbours = (i: number, into: number[]) => {
    const x = i % W, y = (i - x) / W;
    for (let dy = -1; dy <= 1; dy++) {
      const yy = y + dy;
      if (yy < 0 || yy >= H) continue;
      for (let dx = -1; dx <= 1; dx++) {
        const xx = x + dx, j = yy * W + xx;
        if (xx < 0 || xx >= W || done[j] !== 0) continue;
        done[j] = 2; // queued for this ring
        into.push(j);
      }
    }
  };
  for (let i = 0; i < done.length; i++) if (done[i] === 1) {
    const x = i % W;
    // Only the outline's pixels have neighbours outside.
    if ((x > 0 && !inside[i - 1]) || (x < W - 1 && !inside[i + 1]) || (i >= W && !inside[i - W]) || (i + W < done.length && !inside[i + W])) pushNeighbours(i, frontier);
  }
  for (let ring = 0; ring < rings && frontier.length > 0; ring++) {
    // Each ring reads only the rings before it (done === 1), then joins them.
    for (const j of frontier) {
      const x = j % W, y = (j - x) / W;
      let r = 0, g = 0, b = 0, n = 0;
      const take = (k: number) => {
        if (done[k] !== 1) return;
        r += data[3 * k]!, g += data[3 * k + 1]!, b += data[3 * k + 2]!, n++;
      };
      // The 4-neighbours first, the diagonal ones only where none is coloured: a pixel beside a
      // straight outline copies the one across it, so a stripe ending at the outline runs on
      // straight. (The mean of all eight diffused each stripe into its neighbours ring by ring:
      // a saw-tooth of tapering stripe ends, which the warp stretched along a T-shirt's sides.)
      if (x > 0) take(j - 1);
      if (x < W - 1) take(j + 1);
      if (y > 0) take(j - W);
      if (y < H - 1) take(j + W);
      if (n === 0) {
        for (const yy of [y - 1, y + 1]) {
          if (yy < 0 || yy >= H) continue;
          if (x > 0) take(yy * W + x - 1);
          if (x < W - 1) take(yy * W + x + 1);
        }
      }
      data[3 * j] = Math.round(r / n), data[3 * j + 1] = Math.round(g / n), data[3 * j + 2] = Math.round(b / n);
    }
    const next: number[] = [];
    for (const j of frontier) done[j] = 1;
    if (ring + 1 < rings) for (const j of frontier) pushNeighbours(j, next);
    frontier = next;
  }
  return { data, width: W, height: H };
}
