// The ONLY importer of sharp: decode, letterbox-to-tensor, drawing and encoding.
// Images travel between stages as RgbImage (8-bit interleaved RGB, EXIF orientation applied),
// decoded once and reused.
import sharp from 'sharp';
import { AppError } from '../errors/codes.ts';

// Inputs are one-off: libvips' operation cache only holds memory here.
sharp.cache(false);

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
    throw new AppError('IMAGE_DECODE_FAILED', `image could not be decoded: ${(e as Error).message}`);
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
    throw new AppError('IMAGE_DECODE_FAILED', `image could not be decoded: ${(e as Error).message}`);
  }
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
 * tensor [1, size, size, 3] with values mapped from [0, 255] to [lo, hi].
 */
export async function letterboxToTensor(
  img: RgbImage,
  size: number,
  range: readonly [lo: number, hi: number],
): Promise<{ tensor: Float32Array; letterbox: Letterbox }> {
  const g = letterboxGeometry(img.width, img.height, size);
  const boxed = await rawInput(img)
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
  const [lo, hi] = range;
  const k = (hi - lo) / 255;
  const tensor = new Float32Array(size * size * 3);
  for (let i = 0; i < tensor.length; i++) tensor[i] = boxed[i]! * k + lo;
  return { tensor, letterbox: { size, scale: g.scale, padX: g.padX, padY: g.padY } };
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
  const canvas: RgbImage = { data: Uint8Array.from(img.data), width: img.width, height: img.height };
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
