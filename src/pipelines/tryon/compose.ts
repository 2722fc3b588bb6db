// Try-on compositing: the warped parts layered (torso, pelvis or skirt first, then legs, then
// sleeves, so sleeves lie over the torso where an arm crosses it), each clipped to its body part;
// face, hair and hands stay in front; the edges anti-aliased; old clothing of the target's body
// band that the new garment leaves uncovered replaced by patch-based fill (steps/patch-fill.ts)
// from the background and the target's skin; and the photo's own shading carried onto the garment.
import { copyBytes, type RgbImage } from '../../imaging/image.ts';
import { patchFill } from '../../steps/patch-fill.ts';
import { andNot, area, union } from './masks.ts';
import { cuffFade, type Cuff, type PartName } from './parts.ts';
import type { Region } from '../../imaging/morphology.ts';

/**
 * Box blur of a float map (radius r), for shading and feathering: rows, then columns walked in
 * row order with one running sum per column (the same additions, in the same order per column, as
 * a walk down each column, without its stride through memory).
 */
export function blur(src: Float32Array, W: number, H: number, r: number): Float32Array {
  const tmp = new Float32Array(src.length);
  const out = new Float32Array(src.length);
  // (The walks stop at the last pixel written: what came after it changed nothing.)
  for (let y = 0; y < H; y++) {
    let acc = 0, n = 0;
    for (let x = -r; x < W; x++) {
      if (x + r < W) (acc += src[y * W + x + r]!), n++;
      if (x - r - 1 >= 0) (acc -= src[y * W + x - r - 1]!), n--;
      if (x >= 0) tmp[y * W + x] = acc / n;
    }
  }
  const acc = new Float64Array(W);
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
    if (y >= 0 && y < H) for (let x = 0, row = y * W; x < W; x++) out[row + x] = acc[x]! / n;
  }
  return out;
}

/** A box of the photo: x0..x1, y0..y1 inclusive. */
interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** `box` grown by m on every side, within W x H. */
const grow = (box: Box, m: number, W: number, H: number): Box => ({ x0: Math.max(0, box.x0 - m), y0: Math.max(0, box.y0 - m), x1: Math.min(W - 1, box.x1 + m), y1: Math.min(H - 1, box.y1 + m) });

/**
 * The crop `c` of a W-wide map, as its own map. Its blur equals the whole map's wherever a pixel's
 * window (radius r; 2r for a blur of a blur) lies within the crop or the map's edge, so the callers
 * crop the box they need grown by that much. (The running sums are exact in doubles for these
 * float32 maps, so starting them at the crop's edge changes no bit.)
 */
function cropOf(src: Float32Array, W: number, c: Box): { data: Float32Array; w: number; h: number } {
  const w = c.x1 - c.x0 + 1, h = c.y1 - c.y0 + 1;
  const data = new Float32Array(w * h);
  for (let y = 0; y < h; y++) data.set(src.subarray((y + c.y0) * W + c.x0, (y + c.y0) * W + c.x0 + w), y * w);
  return { data, w, h };
}

export interface GarmentLayer {
  /** Coverage 0..1 per pixel of the person photo. */
  alpha: Float32Array;
  /** Garment colour (0..1, un-premultiplied) per pixel where alpha > 0. */
  rgb: Float32Array;
}

export const PART_ORDER: PartName[] = ['skirt', 'pelvis', 'torso', 'legL', 'legR', 'sleeveL', 'sleeveR'];

/** One warped part (planar premultiplied RGB and alpha over `region`) on top of the layer, within `clip`. */
function over(alpha: Float32Array, rgb: Float32Array, W: number, warped: Float32Array, region: Region, clip: Uint8Array, cuff?: Cuff): void {
  const { x: rx0, y: ry0, width: rw, height: rh } = region;
  const plane = rw * rh;
  for (let y = 0; y < rh; y++) {
    for (let x = 0; x < rw; x++) {
      const i = (y + ry0) * W + (x + rx0);
      const j = y * rw + x;
      if (!clip[i]) continue;
      // A sleeve fades out across its arm at its cuff (a soft edge, not the photo's hem warped).
      const fade = cuff ? cuffFade(cuff, x + rx0 + 0.5, y + ry0 + 0.5) : 1;
      const a = Math.min(1, Math.max(0, warped[3 * plane + j]!)) * fade;
      if (a <= 0.01) continue;
      // "over": this part on top of what is there.
      const keep = alpha[i]! * (1 - a);
      const na = a + keep;
      for (let c = 0; c < 3; c++) rgb[3 * i + c] = (warped[c * plane + j]! * fade + rgb[3 * i + c]! * keep) / na;
      alpha[i] = na;
    }
  }
}

/** Layers the warped parts (each clipped) and keeps `front` (face, hair, hands) uncovered. */
export function layerParts(W: number, H: number, parts: Array<{ warped: Float32Array; region: Region; clip: Uint8Array; cuff?: Cuff }>, front: Uint8Array): GarmentLayer {
  const alpha = new Float32Array(W * H);
  const rgb = new Float32Array(W * H * 3);
  for (const { warped, region, clip, cuff } of parts) over(alpha, rgb, W, warped, region, clip, cuff);
  const soft = new Float32Array(W * H);
  if (!parts.length) return { alpha: soft, rgb };
  // Coverage is 0 outside the parts' regions: the front cut and the blur run on their box, grown
  // by the blur's radius (the result; 0 beyond) and by twice it (what the result's windows read).
  const box: Box = { x0: W, y0: H, x1: -1, y1: -1 };
  for (const { region: g } of parts) {
    (box.x0 = Math.min(box.x0, g.x)), (box.y0 = Math.min(box.y0, g.y));
    (box.x1 = Math.max(box.x1, g.x + g.width - 1)), (box.y1 = Math.max(box.y1, g.y + g.height - 1));
  }
  for (let y = box.y0; y <= box.y1; y++) for (let i = y * W + box.x0; i <= y * W + box.x1; i++) if (front[i]) alpha[i] = 0;
  // Anti-aliased edges: a 3x3 mean of the coverage, never onto what stays in front.
  const c = grow(box, 2, W, H), keep = grow(box, 1, W, H);
  const crop = cropOf(alpha, W, c);
  const blurred = blur(crop.data, crop.w, crop.h, 1);
  for (let y = keep.y0; y <= keep.y1; y++) {
    for (let x = keep.x0; x <= keep.x1; x++) {
      const i = y * W + x;
      soft[i] = front[i] ? 0 : blurred[(y - c.y0) * crop.w + (x - c.x0)]!;
    }
  }
  return { alpha: soft, rgb };
}

/**
 * The old clothing of the body band that the garment leaves uncovered (`clothing`: not skin, not
 * face or hair), filled by exemplar patches from the background (`background`: nobody's pixels,
 * so a neighbour's dress is never copied onto the target) and the skin around it.
 * Returns the picture and how many pixels were filled.
 */
export function removeUncovered(image: RgbImage, layer: GarmentLayer, band: Uint8Array, clothing: Uint8Array, background: Uint8Array, skinLike: Uint8Array): { image: RgbImage; filled: number; hole: Uint8Array } {
  const hole = uncovered(band, clothing, layer.alpha);
  const filled = area(hole);
  if (filled < 20) return { image, filled: 0, hole };
  const source = andNot(union(background, skinLike), hole);
  return { image: patchFill(image, hole, { source }), filled, hole };
}

/** Pixels of the band's clothing the layer covers less than half. */
function uncovered(band: Uint8Array, clothing: Uint8Array, alpha: Float32Array): Uint8Array {
  const hole = new Uint8Array(band.length);
  for (let i = 0; i < hole.length; i++) if (band[i] && clothing[i] && alpha[i]! < 0.5) hole[i] = 1;
  return hole;
}

/** Luminance (0.299 R + 0.587 G + 0.114 B, float32) of the crop `c` of a photo. */
function luminance(photo: RgbImage, c: Box): { data: Float32Array; w: number; h: number } {
  const W = photo.width, w = c.x1 - c.x0 + 1, h = c.y1 - c.y0 + 1;
  const data = new Float32Array(w * h);
  for (let y = 0, j = 0; y < h; y++) {
    for (let x = 0, i = (y + c.y0) * W + c.x0; x < w; x++, i++, j++) data[j] = 0.299 * photo.data[3 * i]! + 0.587 * photo.data[3 * i + 1]! + 0.114 * photo.data[3 * i + 2]!;
  }
  return { data, w, h };
}

/** Light: the photo's own shading (local luminance over its wider mean) carried onto the garment. */
export function shadeAndBlend(photo: RgbImage, base: RgbImage, layer: GarmentLayer, size: number): RgbImage {
  const { width: W, height: H } = photo;
  const { alpha, rgb } = layer;
  const data = copyBytes(base.data);
  // Only the garment's box is shaded: luminance and its blurs run on that box grown by what their
  // windows read there (a 1 MP photo's full-frame blurs were most of this stage).
  const box: Box = { x0: W, y0: H, x1: -1, y1: -1 };
  for (let y = 0, i = 0; y < H; y++) {
    for (let x = 0; x < W; x++, i++) {
      if (alpha[i]! <= 0) continue;
      if (x < box.x0) box.x0 = x;
      if (x > box.x1) box.x1 = x;
      if (y < box.y0) box.y0 = y;
      box.y1 = y;
    }
  }
  if (box.x1 < 0) return { data, width: W, height: H };
  // Folds and body shading: luminance at the scale of a fold over its neighbourhood's. Two box
  // passes (a triangle kernel) of 3% of the body size: a fold is wider than that, the stripes or
  // print of the old clothing are narrower, so they do not show through the new garment.
  const r = Math.max(2, Math.round(0.03 * size));
  const R = Math.max(3, Math.round(0.12 * size));
  // The fine map on the box grown by 2r, the mean on the box grown by R (each its own crop).
  const cf = grow(box, 2 * r, W, H), cm = grow(box, R, W, H);
  // Both averages are taken over what the garment covers only (weighted by its alpha: blur(L a) /
  // blur(a)): the background beside the body is no part of its light, and a bright wall or window
  // there lit the garment's outline as a pale rim, a dark one shaded it.
  const lf = luminance(photo, cf), lm = luminance(photo, cm);
  const af = cropOf(alpha, W, cf), am = cropOf(alpha, W, cm);
  for (let j = 0; j < lf.data.length; j++) lf.data[j]! *= af.data[j]!;
  for (let j = 0; j < lm.data.length; j++) lm.data[j]! *= am.data[j]!;
  const fine = blur(blur(lf.data, lf.w, lf.h, r), lf.w, lf.h, r);
  const fineW = blur(blur(af.data, af.w, af.h, r), af.w, af.h, r);
  const mean = blur(lm.data, lm.w, lm.h, R);
  const meanW = blur(am.data, am.w, am.h, R);
  for (let y = box.y0; y <= box.y1; y++) {
    for (let x = box.x0; x <= box.x1; x++) {
      const i = y * W + x;
      const a = alpha[i]!;
      if (a <= 0) continue;
      const jf = (y - cf.y0) * lf.w + (x - cf.x0), jm = (y - cm.y0) * lm.w + (x - cm.x0);
      const lFine = fine[jf]! / Math.max(fineW[jf]!, 1e-3), lMean = mean[jm]! / Math.max(meanW[jm]!, 1e-3);
      const shade = Math.min(1.15, Math.max(0.75, 1 + 0.6 * (lFine / Math.max(lMean, 8) - 1)));
      for (let k = 0; k < 3; k++) data[3 * i + k] = Math.round(data[3 * i + k]! * (1 - a) + Math.min(255, rgb[3 * i + k]! * 255 * shade) * a);
    }
  }
  return { data, width: W, height: H };
}
