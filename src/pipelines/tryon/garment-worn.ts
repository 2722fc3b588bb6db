// A garment worn by a person in the garment photo: that person's instance (analysis.ts) without
// face, hair and skin (colours near the face's skin, CIE Lab distance) is the garment; its parts are
// the person's own body parts (parts.ts), so they pair with the target's part by part. How far a
// sleeve, a leg or the hem reaches is measured along the person's skeleton: the last point of the
// limb's axis (or the spine) still on clothing.
import type { ClothesType } from '../../domain/job.ts';
import { labAt, srgbToLab } from '../../steps/color.ts';
import type { PersonAnalysis } from './analysis.ts';
import { add, arm, leg, mid, sub, len, type Body, type P } from './body.ts';
import type { GarmentParts } from './garment.ts';
import { intersect } from './masks.ts';
import { alongPolyline, bodyParts, polylineLength, type PartLengths } from './parts.ts';

/** Clothing pixels of the person: instance minus face, hair and skin-coloured pixels. */
export function clothingMask(p: PersonAnalysis, protect: Uint8Array, skin: [number, number, number] | null): Uint8Array {
  const { data } = p.image;
  const ref = skin ? srgbToLab(skin[0], skin[1], skin[2]) : null;
  const out = new Uint8Array(p.instance.length);
  for (let i = 0; i < out.length; i++) {
    if (!p.instance[i] || protect[i]) continue;
    if (!ref) {
      out[i] = 1;
      continue;
    }
    // labAt: srgbToLab memoized (pow and cbrt per pixel of the instance were most of this).
    const lab = labAt(data, i);
    const dA = lab[1] - ref[1], dB = lab[2] - ref[2];
    // Skin: near the face's colour in chroma, any reasonable lightness (shade). The squared
    // distance, or Math.hypot (as before) within rounding of the threshold.
    const d2 = dA * dA + dB * dB;
    const near = Math.abs(d2 - 121) > 1e-6 ? d2 < 121 : Math.hypot(dA, dB) < 11;
    out[i] = near && Math.abs(lab[0] - ref[0]) < 30 ? 0 : 1;
  }
  return out;
}

/** How far clothing covers a polyline from `start` (pixels of arc), sampled every 2%. */
function coveredLength(cloth: Uint8Array, W: number, H: number, pts: P[], start: number, max: number, r: number): number {
  let last = 0;
  for (let k = 0; k <= 50; k++) {
    const s = start + (k / 50) * max;
    const { p } = alongPolyline(pts, s);
    let on = 0, n = 0;
    for (let dy = -r; dy <= r; dy += Math.max(1, Math.round(r / 2))) {
      for (let dx = -r; dx <= r; dx += Math.max(1, Math.round(r / 2))) {
        const x = Math.round(p[0] + dx), y = Math.round(p[1] + dy);
        if (x < 0 || y < 0 || x >= W || y >= H) continue;
        n++;
        on += cloth[y * W + x]!;
      }
    }
    if (n && on / n >= 0.5) last = (k / 50) * max;
    else if (k > 5 && (k / 50) * max - last > 0.1 * max) break;
  }
  return last;
}

/** The garment's parts on the person wearing it. */
export function wornParts(g: PersonAnalysis, b: Body, cloth: Uint8Array, type: ClothesType): GarmentParts {
  const { W, H } = b;
  const r = Math.max(1, Math.round(0.05 * b.size));
  const lengths: PartLengths = {};
  let skirt = false;
  if (type === 'lower_body') {
    const knees = mid(b.L.knee, b.R.knee);
    const waist = add(b.pelvis, b.down, -0.12 * b.tl);
    const k = Math.round(knees[1]) * W + Math.round(knees[0]);
    skirt = knees[1] < H && knees[0] >= 0 && knees[0] < W && cloth[k] === 1 && len(sub(b.L.knee, b.R.knee)) > 0.2 * b.size;
    if (skirt) lengths.skirt = Math.max(0.5 * b.tl, coveredLength(cloth, W, H, [waist, add(waist, sub(knees, waist), 3)], 0, 2.4 * b.tl, r));
    for (const s of ['L', 'R'] as const) {
      const chain = leg(b, s);
      lengths[`leg${s}`] = coveredLength(cloth, W, H, chain, 0.18 * b.tl, polylineLength(chain), r);
    }
  } else {
    lengths.torso = Math.max(0.6 * b.tl, coveredLength(cloth, W, H, [b.neck, add(b.neck, b.down, 3 * b.tl)], 0.1 * b.tl, (type === 'dresses' ? 2.6 : 1.4) * b.tl, r) + 0.1 * b.tl);
    for (const s of ['L', 'R'] as const) {
      const chain = arm(b, s);
      const l = coveredLength(cloth, W, H, chain, 0.1 * b.size, polylineLength(chain), r);
      if (l > 0.1 * b.size) lengths[`sleeve${s}`] = l + 0.1 * b.size;
    }
  }
  const parts = bodyParts(b, g.instance, type, lengths, { skirtLike: skirt });
  const masks: GarmentParts['masks'] = {};
  for (const [k, clip] of Object.entries(parts.clips)) masks[k as keyof typeof masks] = intersect(clip, cloth);
  return {
    strips: parts.strips,
    masks,
    lengths: lengths as GarmentParts['lengths'],
    width: (type === 'lower_body' ? 0.9 : 1.2) * b.size,
    skirt,
    sleeves: Boolean(lengths.sleeveL || lengths.sleeveR),
  };
}
