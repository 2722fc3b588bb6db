// Try-on compositing: the warped garment's alpha at full resolution (on the body only, under face,
// hair, forearms and hands, feathered), the old clothing it leaves uncovered removed (steps/inpaint),
// and the photo's own shading carried onto the garment.
import type { ClothesType } from '../../domain/job.ts';
import type { RgbImage } from '../../imaging/image.ts';
import type { ModelSession } from '../../models/onnx.ts';
import type { StageTimer } from '../../domain/stage-timer.ts';
import { inpaint } from '../../steps/inpaint.ts';
import type { PersonAnalysis } from './analysis.ts';
import { bodyRegion, polygonMask, torso } from './body.ts';
import type { Landmarks } from './garment.ts';
import type { Region } from './warp.ts';

/** Forearms and hands (elbow to past the wrist), where the arm crosses the body: 0/1 mask. */
export function forearms(p: PersonAnalysis, from: Landmarks, type: ClothesType): Uint8Array {
  const { width: W, height: H } = p.image;
  const mask = new Uint8Array(W * H);
  if (type === 'lower_body') return mask;
  const { sw } = torso(p.pose);
  for (const [side, sleeve] of [['right', from.sleeveL], ['left', from.sleeveR]] as const) {
    const e = p.pose[`${side}_elbow`], w = p.pose[`${side}_wrist`];
    if (e.score < 0.25 || w.score < 0.25) continue;
    const start: [number, number] = sleeve && type === 'upper_body' ? sleeve : [e.x, e.y];
    const end: [number, number] = [w.x + (w.x - e.x) * 0.35, w.y + (w.y - e.y) * 0.35];
    const r = 0.12 * sw;
    for (let y = Math.max(0, Math.floor(Math.min(start[1], end[1]) - r)); y < Math.min(H, Math.ceil(Math.max(start[1], end[1]) + r)); y++) {
      for (let x = Math.max(0, Math.floor(Math.min(start[0], end[0]) - r)); x < Math.min(W, Math.ceil(Math.max(start[0], end[0]) + r)); x++) {
        const dx = end[0] - start[0], dy = end[1] - start[1];
        const t = Math.max(0, Math.min(1, ((x - start[0]) * dx + (y - start[1]) * dy) / (dx * dx + dy * dy || 1)));
        if (Math.hypot(x - start[0] - t * dx, y - start[1] - t * dy) < r && p.person[y * W + x]! > 127) mask[y * W + x] = 1;
      }
    }
  }
  return mask;
}

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
  /** Forearms and hands in front of the garment (0/1). */
  arms: Uint8Array;
}

/** The warped garment placed on the body: alpha and colour at full resolution. */
export async function garmentLayer(person: PersonAnalysis, warped: Float32Array, region: Region, to: Landmarks, protect: Uint8Array, type: ClothesType, t: StageTimer): Promise<GarmentLayer> {
  const { width: W, height: H } = person.image;
  const { sw } = torso(person.pose);
  const { x: rx0, y: ry0, width: rw, height: rh } = region;
  const arms = forearms(person, to, type);
  const near = blur(Float32Array.from(person.person, (v) => (v > 100 ? 1 : 0)), W, H, Math.max(1, Math.round(0.03 * sw)));
  let alpha: Float32Array = new Float32Array(W * H);
  const rgb = new Float32Array(W * H * 3);
  const plane = rw * rh;
  for (let y = 0; y < rh; y++) {
    for (let x = 0; x < rw; x++) {
      const i = (y + ry0) * W + (x + rx0);
      const j = y * rw + x;
      const a = Math.min(1, Math.max(0, warped[3 * plane + j]!));
      if (a <= 0.01 || protect[i] || arms[i] || near[i]! < 0.5) continue;
      alpha[i] = a;
      for (let c = 0; c < 3; c++) rgb[3 * i + c] = warped[c * plane + j]! / Math.max(a, 1e-3);
    }
  }
  alpha = await t.time('composite', () => blur(alpha, W, H, 1));
  return { alpha, rgb, arms };
}

/** The old clothing the new garment leaves uncovered (where it is smaller), filled from around it. */
export async function removeUncovered(inpainter: ModelSession, person: PersonAnalysis, layer: GarmentLayer, protect: Uint8Array, type: ClothesType): Promise<RgbImage> {
  const { image } = person;
  const { width: W, height: H } = image;
  const region = polygonMask(bodyRegion(person.pose, type), W, H);
  const hole = new Uint8Array(W * H);
  for (let i = 0; i < hole.length; i++) if (region[i] && person.person[i]! > 127 && layer.alpha[i]! < 0.5 && !protect[i] && !layer.arms[i]) hole[i] = 1;
  return inpaint(inpainter, image, hole);
}

/** Light: the photo's own shading (luminance over its local mean) carried onto the garment. */
export function shadeAndBlend(photo: RgbImage, base: RgbImage, layer: GarmentLayer, sw: number): RgbImage {
  const { width: W, height: H } = photo;
  const { alpha, rgb } = layer;
  const lum = new Float32Array(W * H);
  for (let i = 0; i < lum.length; i++) lum[i] = 0.299 * photo.data[3 * i]! + 0.587 * photo.data[3 * i + 1]! + 0.114 * photo.data[3 * i + 2]!;
  const mean = blur(lum, W, H, Math.max(2, Math.round(0.08 * sw)));
  const data = Uint8Array.from(base.data);
  for (let i = 0; i < alpha.length; i++) {
    const a = alpha[i]!;
    if (a <= 0) continue;
    const shade = Math.min(1.3, Math.max(0.7, 1 + 0.7 * (lum[i]! / Math.max(mean[i]!, 8) - 1)));
    for (let c = 0; c < 3; c++) data[3 * i + c] = Math.round(data[3 * i + c]! * (1 - a) + Math.min(255, rgb[3 * i + c]! * 255 * shade) * a);
  }
  return { data, width: W, height: H };
}
