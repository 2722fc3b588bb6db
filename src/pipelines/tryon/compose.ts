// Try-on compositing: the warped parts layered (torso, pelvis or skirt first, then legs, then
// sleeves, so sleeves lie over the torso where an arm crosses it), each clipped to its body part;
// face, hair and hands stay in front; the edges anti-aliased; old clothing of the target's body
// band that the new garment leaves uncovered replaced by patch-based fill (steps/patch-fill.ts)
// from the background and the target's skin; and the photo's own shading carried onto the garment.
import type { RgbImage } from '../../imaging/image.ts';
import { patchFill } from '../../steps/patch-fill.ts';
import type { PartName } from './parts.ts';
import type { Region } from './warp.ts';

/** Box blur of a float map (radius r), for shading and feathering. */
export function blur(src: Float32Array, W: number, H: number, r: number): Float32Array {
  const tmp = new Float32Array(src.length);
  const out = new Float32Array(src.length);
  for (let y = 0; y < H; y++) {
    let acc = 0, n = 0;
    for (let x = -r; x < W + r; x++) {
      if (x + r < W) (acc += src[y * W + x + r]!), n++;
      if (x - r - 1 >= 0) (acc -= src[y * W + x - r - 1]!), n--;
      if (x >= 0 && x < W) tmp[y * W + x] = acc / n;
    }
  }
  for (let x = 0; x < W; x++) {
    let acc = 0, n = 0;
    for (let y = -r; y < H + r; y++) {
      if (y + r < H) (acc += tmp[(y + r) * W + x]!), n++;
      if (y - r - 1 >= 0) (acc -= tmp[(y - r - 1) * W + x]!), n--;
      if (y >= 0 && y < H) out[y * W + x] = acc / n;
    }
  }
  return out;
}

export interface GarmentLayer {
  /** Coverage 0..1 per pixel of the person photo. */
  alpha: Float32Array;
  /** Garment colour (0..1, un-premultiplied) per pixel where alpha > 0. */
  rgb: Float32Array;
}

export const PART_ORDER: PartName[] = ['skirt', 'pelvis', 'torso', 'legL', 'legR', 'sleeveL', 'sleeveR'];

/** Layers the warped parts (each clipped) and keeps `front` (face, hair, hands) uncovered. */
export function layerParts(W: number, H: number, parts: Array<{ warped: Float32Array; region: Region; clip: Uint8Array }>, front: Uint8Array): GarmentLayer {
  const alpha = new Float32Array(W * H);
  const rgb = new Float32Array(W * H * 3);
  for (const { warped, region, clip } of parts) {
    const { x: rx0, y: ry0, width: rw, height: rh } = region;
    const plane = rw * rh;
    for (let y = 0; y < rh; y++) {
      for (let x = 0; x < rw; x++) {
        const i = (y + ry0) * W + (x + rx0);
        const j = y * rw + x;
        if (!clip[i]) continue;
        const a = Math.min(1, Math.max(0, warped[3 * plane + j]!));
        if (a <= 0.01) continue;
        // "over": this part on top of what is there.
        const keep = alpha[i]! * (1 - a);
        const na = a + keep;
        for (let c = 0; c < 3; c++) rgb[3 * i + c] = (warped[c * plane + j]! + rgb[3 * i + c]! * keep) / na;
        alpha[i] = na;
      }
    }
  }
  for (let i = 0; i < alpha.length; i++) if (front[i]) alpha[i] = 0;
  // Anti-aliased edges: a 3x3 mean of the coverage, never onto what stays in front.
  const soft = blur(alpha, W, H, 1);
  for (let i = 0; i < soft.length; i++) if (front[i]) soft[i] = 0;
  return { alpha: soft, rgb };
}

/**
 * The old clothing of the body band that the garment leaves uncovered (`clothing`: not skin, not
 * face or hair), filled by exemplar patches from the background (`background`: nobody's pixels,
 * so a neighbour's dress is never copied onto the target) and the skin around it.
 * Returns the picture and how many pixels were filled.
 */
export function removeUncovered(image: RgbImage, layer: GarmentLayer, band: Uint8Array, clothing: Uint8Array, background: Uint8Array, skinLike: Uint8Array): { image: RgbImage; filled: number; hole: Uint8Array } {
  const n = band.length;
  const hole = new Uint8Array(n);
  let filled = 0;
  for (let i = 0; i < n; i++) if (band[i] && clothing[i] && layer.alpha[i]! < 0.5) (hole[i] = 1), filled++;
  if (filled < 20) return { image, filled: 0, hole };
  const source = new Uint8Array(n);
  for (let i = 0; i < n; i++) source[i] = !hole[i] && (background[i] || skinLike[i]) ? 1 : 0;
  return { image: patchFill(image, hole, { source }), filled, hole };
}

/** Light: the photo's own shading (local luminance over its wider mean) carried onto the garment. */
export function shadeAndBlend(photo: RgbImage, base: RgbImage, layer: GarmentLayer, size: number): RgbImage {
  const { width: W, height: H } = photo;
  const { alpha, rgb } = layer;
  const lum = new Float32Array(W * H);
  for (let i = 0; i < lum.length; i++) lum[i] = 0.299 * photo.data[3 * i]! + 0.587 * photo.data[3 * i + 1]! + 0.114 * photo.data[3 * i + 2]!;
  // Folds and body shading: luminance at the scale of a fold over its neighbourhood's. Two box
  // passes (a triangle kernel) of 3% of the body size: a fold is wider than that, the stripes or
  // print of the old clothing are narrower, so they do not show through the new garment.
  const r = Math.max(2, Math.round(0.03 * size));
  const fine = blur(blur(lum, W, H, r), W, H, r);
  const mean = blur(lum, W, H, Math.max(3, Math.round(0.12 * size)));
  const data = Uint8Array.from(base.data);
  for (let i = 0; i < alpha.length; i++) {
    const a = alpha[i]!;
    if (a <= 0) continue;
    const shade = Math.min(1.15, Math.max(0.75, 1 + 0.6 * (fine[i]! / Math.max(mean[i]!, 8) - 1)));
    for (let c = 0; c < 3; c++) data[3 * i + c] = Math.round(data[3 * i + c]! * (1 - a) + Math.min(255, rgb[3 * i + c]! * 255 * shade) * a);
  }
  return { data, width: W, height: H };
}
