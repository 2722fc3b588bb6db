// Hairstyle compositing (pure: pixels in, pixels out).
//   composite      the filled photo (removal.ts), the kept locks dyed the new colour, contact
//                  shadow, then the drawn hair (render.ts) recoloured in CIE Lab, grained, its
//                  outline blurred to the photo's focus on a soft photo
import type { HairColor } from '../../domain/job.ts';
import { gaussianBlurInPlace } from '../../imaging/blur.ts';
import { bellNoise } from '../../imaging/grain.ts';
import { copyBytes, type RgbImage } from '../../imaging/image.ts';
import { giveBack, takePlane } from '../../imaging/scratch.ts';
import { HAIR_COLOR_TARGETS, shadeRamp } from '../../steps/color.ts';
import { pullPush } from '../../steps/patch-fill.ts';
import { frameV } from './frame.ts';
import { STUBBLE_HAIR, STUBBLE_SHADE, smooth } from './templates.ts';
import { CROWN_FADE, type HairLayer, type HeadAnalysis, type Look } from './render.ts';
import { fillRemoved, finishLocks, opaqueCover, removal, type KeptLocks } from './removal.ts';
/**
 * The filled photo darkened by the hair's contact shadow, then the recoloured hair over it: the
 * colour ramp (CIE Lab, keeps light and dark strands) mixed per strand towards a warmer or a
 * cooler ramp (layer.tone), scaled to the photo's exposure, with grain of the photo's own
 * strength so the hair is not cleaner than the picture around it; on a soft photo (look.blur at
 * least MIN_BLUR) with its outline blurred alike (blurredComposite), fading over `keep`. With
 * `locks` (finishLocks), the old hair kept over the forehead is dyed first (dyeLocks), except on a
 * layer with shaved sides (the Mohawk).
 */
export function composite(base: RgbImage, layer: HairLayer, color: HairColor, look: Look, seed: number, opts: { inPlace?: boolean; keep?: Uint8Array; locks?: KeptLocks | null } = {}): RgbImage {
  // A long style in a dye with deeper shadows fades from the crown's deep ramps to the lengths'
  // flat ones (deepShare per pixel). Grey and white long styles keep their swing: with the deeper
  // crown they read as hair no better (0.39 -> 0.45 of the solid pixels over three photos) and
  // grey Bombshell Curls worse (0.45 -> 0.04).
  const crown = layer.crown && HAIR_COLOR_TARGETS[color].dyeShadow ? layer.crown : null;
  // The ramps with the colour's deeper shadows (a short style's; a dyed long style's crown) and
  // without (a long style's lengths), each with the ends of the per-strand colour variation (grey
  // and black vary by lightness alone).
  const deepRamps = layer.short || !!crown;
  const ramp = shadeRamp(color, 0, 1, 0, deepRamps), warm = shadeRamp(color, 8, 1.2, -3, deepRamps), cool = shadeRamp(color, -8, 0.8, 3, deepRamps);
  const [flat, flatWarm, flatCool] = crown ? [shadeRamp(color, 0, 1, 0, false), shadeRamp(color, 8, 1.2, -3, false), shadeRamp(color, -8, 0.8, 3, false)] : [ramp, warm, cool];
  const deepShare = (i: number) => {
    if (!crown) return 1;
    const x = i % base.width, y = (i - x) / base.width;
    return CROWN_FADE.depth * (1 - smooth(crown.from, crown.to, frameV(crown.frame, x + 0.5, y + 0.5)));
  };
  // In place for a caller that owns `base` (the pipeline's fill result): a copy of a 1 MP photo is
  // ~9 ms of fresh memory on this project's machines.
  const data = opts.inPlace ? base.data : copyBytes(base.data);
  const noise = bellNoise(seed);
  /** The drawn hair's colour at pixel i into `rgb` (before the photo's grain). */
  const rgb = new Float64Array(3);
  const hairAt = (i: number) => {
    const st = layer.stubble[i]!;
    const tone = layer.tone[i]!;
    const other = tone >= 0 ? warm : cool, flatOther = tone >= 0 ? flatWarm : flatCool;
    const w = deepShare(i);
    const mix = Math.min(1, Math.abs(tone) * 0.7);
    const k = Math.round((layer.shade[i]! + 1) * 127.5);
    // The sheen: towards a pale, slightly tinted highlight (more of it shows on dark hair).
    const gl = Math.min(0.42, 0.42 * layer.sheen[i]!) * (1 - st);
    // The darkest strands darker than the ramp's own swing: real hair's gaps between strands and
    // under the top layer are near black whatever the dye (the ramp alone read as painted); only
    // the darkest, so the mass keeps its colour.
    const sd = layer.shade[i]!;
    const deep = sd < -0.8 ? 1 + 2 * (sd + 0.8) : 1;
    for (let c = 0; c < 3; c++) {
      const deepPig = ramp[3 * k + c]! * (1 - mix) + other[3 * k + c]! * mix;
      const pig = (w === 1 ? deepPig : deepPig * w + (flat[3 * k + c]! * (1 - mix) + flatOther[3 * k + c]! * mix) * (1 - w)) * deep;
      const dyed = pig * (1 - gl) + (0.55 * 225 + 0.45 * Math.min(255, pig * 1.6 + 40)) * gl;
      // The dye's ramp is exposed as the face is; the stubble's colours were measured on the photo,
      // at its exposure already (exposed again, a dark photo's scalp was a dark leather cap).
      rgb[c] = dyed * (1 - st) * look.exposure + look.natural[c]! * (1 + STUBBLE_LIGHT * (layer.shade[i]! - STUBBLE_SHADE)) * st;
    }
    if (look.monochrome) toGrey(rgb);
    return rgb;
  };
  const W = base.width, H = base.height;
  if (opts.locks && !layer.shaved) dyeLocks(data, opts.locks, shadeRamp(color, 0, 1, 0, false), look, noise, HAIR_COLOR_TARGETS[color].swing);
  if (look.blur >= MIN_BLUR) return blurredComposite(data, W, H, layer, look, hairAt, noise, opts.keep);
  const { x0, y0, x1, y1 } = layer.box;
  for (let y = y0; y < y1; y++) for (let i = y * W + x0, e = y * W + x1; i < e; i++) {
    const a = layer.alpha[i]!;
    const sh = layer.shadow[i] ?? 0;
    if (a <= 0 && sh <= 0.004) continue;
    // (Under the shadow alone the hair's colour counts for nothing: not computed.)
    if (a > 0) blendPixel(data, i, a, sh, hairAt(i), 0, look.grain * 1.7 * noise());
    else blendPixel(data, i, 0, sh, NO_HAIR, 0, 0);
  }
  return { data, width: W, height: H };
}

const NO_HAIR = new Float64Array(3);

/**
 * The kept locks (finishLocks) dyed: each pixel towards the colour's ramp (`ramp`: a long style's
 * lengths', without the deeper shadows of a short style's or a dyed crown's, nor the per-strand
 * variation: the photo's strands are the lock's own) at the shade its own lightness
 * gives (dL over the colour's swing, so its light and dark keep the photo's), exposed as the new
 * hair is and grained alike, with the lock's coverage; under the new hair (drawn after it).
 */
function dyeLocks(data: Uint8Array, locks: KeptLocks, ramp: Uint8Array, look: Look, noise: () => number, swing: number): void {
  const rgb = new Float64Array(3);
  for (let k = 0; k < locks.at.length; k++) {
    const s = Math.max(-1, Math.min(1, locks.dL[k]! / swing));
    const j = 3 * Math.round((s + 1) * 127.5);
    for (let c = 0; c < 3; c++) rgb[c] = ramp[j + c]! * look.exposure;
    if (look.monochrome) toGrey(rgb);
    blendPixel(data, locks.at[k]!, locks.alpha[k]!, 0, rgb, 0, look.grain * 1.7 * noise());
  }
}

/** An sRGB colour in place as the grey of its Rec. 601 luma: the hair on a black-and-white photo (Look.monochrome). */
function toGrey(rgb: Float64Array): void {
  rgb[0] = rgb[1] = rgb[2] = 0.299 * rgb[0]! + 0.587 * rgb[1]! + 0.114 * rgb[2]!;
}

/**
 * Shaved stubble's colour: the person's natural colour (Look.natural) times 1 + STUBBLE_LIGHT x
 * (its shade - STUBBLE_SHADE): the scalp keeps that colour where the shade is the sides' own
 * (templates.ts), lighter towards the light and darker round the skull's sides.
 */
const STUBBLE_LIGHT = 0.4;

/**
 * One pixel of the composite: the photo darkened by the contact shadow `sh`, and the hair's colour
 * (`src` at `at`, 3 channels) plus grain `g` over it with coverage `a`.
 */
function blendPixel(data: Uint8Array, i: number, a: number, sh: number, src: Float64Array | Float32Array, at: number, g: number): void {
  const dark = 1 - 0.45 * sh;
  for (let c = 0; c < 3; c++) {
    const under = data[3 * i + c]! * dark;
    data[3 * i + c] = Math.max(0, Math.min(255, Math.round(under * (1 - a) + (src[at + c]! + g) * a)));
  }
}

/**
 * Below this (px) the photo counts as sharp and the hair is drawn as rendered: under a pixel of
 * blur the difference does not show.
 */
const MIN_BLUR = 1;

/**
 * composite for a soft photo: the drawn hair's coverage blurred by look.blur, so its outline is as
 * soft as the photo's own edges (a crisp outline on an out-of-focus head read as pasted on); its
 * strands and shading as drawn. Blurring the strands as much made the face parser read the hair as
 * a hat or skin (a pink Bowl Cut 0.55 -> 0 reads as hair, a Long Wave 0.62 -> 0.20), and by half
 * as much it read more of the old hair below the nose as hair left (s5-back 0.055 -> 0.16). The
 * colour is carried past the drawn edge first (pull-push), so the outline's blur has the hair's
 * colour to show, not a dark rim. The contact shadow, and the face kept (`keep`, where nothing is
 * drawn), are blurred alike, so neither leaves a sharp edge under the soft hair (the shadow's cut
 * along the brows showed as a dotted line).
 */
function blurredComposite(data: Uint8Array, W: number, H: number, layer: HairLayer, look: Look, hairAt: (i: number) => Float64Array, noise: () => number, keep: Uint8Array | undefined): RgbImage {
  const m = Math.ceil(3 * look.blur);
  const bx0 = Math.max(0, layer.box.x0 - m), by0 = Math.max(0, layer.box.y0 - m);
  const bx1 = Math.min(W, layer.box.x1 + m), by1 = Math.min(H, layer.box.y1 + m);
  const bw = bx1 - bx0, bh = by1 - by0;
  if (bw <= 0 || bh <= 0) return { data, width: W, height: H };
  const n = bw * bh;
  // Planes from the thread's pool (fresh memory costs more here than the blur): given back below.
  const A = takePlane(n), S = takePlane(n), rgb = takePlane(3 * n), wt = takePlane(n);
  const K = keep ? takePlane(n) : undefined;
  for (let y = 0; y < bh; y++) {
    for (let x = 0, j = y * bw, i = (by0 + y) * W + bx0; x < bw; x++, j++, i++) {
      const a = layer.alpha[i]!;
      A[j] = a;
      S[j] = layer.shadow[i] ?? 0;
      if (K) K[j] = keep![i]!;
      if (a <= 0) continue;
      const hair = hairAt(i);
      rgb[3 * j] = hair[0]!;
      rgb[3 * j + 1] = hair[1]!;
      rgb[3 * j + 2] = hair[2]!;
      wt[j] = 1;
    }
  }
  pullPush(bw, bh, rgb, wt);
  gaussianBlurInPlace(K ? [A, S, K] : [A, S], bw, bh, look.blur, { halfRes: true });
  for (let y = 0; y < bh; y++) {
    for (let x = 0, j = y * bw, i = (by0 + y) * W + bx0; x < bw; x++, j++, i++) {
      const fade = K ? 1 - Math.min(1, K[j]!) : 1;
      const a = Math.min(1, A[j]!) * fade;
      const sh = S[j]! * fade;
      if (a <= 1e-3 && sh <= 0.004) continue;
      blendPixel(data, i, a, sh, rgb, 3 * j, a > 1e-3 ? look.grain * 1.7 * noise() : 0);
    }
  }
  giveBack(A, S, rgb, wt, ...(K ? [K] : []));
  return { data, width: W, height: H };
}

/**
 * One picture from one drawn layer, the pipeline's steps for a single picture: the removal of the
 * old hair it leaves, the fill, the kept locks dyed, the hair composited (the demo's sheets).
 */
export function pictureOf(an: HeadAnalysis, layer: HairLayer, color: HairColor, look: Look, seed: number): { picture: RgbImage; hole: Uint8Array; filled: RgbImage } {
  const { hole, locks } = removal(an, opaqueCover(layer), color);
  const filled = fillRemoved(an, hole, seed, look);
  const kept = finishLocks(an, filled, hole, locks);
  const picture = composite(filled, layer, color, look, seed, { keep: an.protect, locks: kept });
  return { picture, hole, filled };
}

/**
 * The layer's hair as an 8-bit mask: its coverage, shaved stubble counted at its hair's share
 * (STUBBLE_HAIR; the rest of a shaved pixel is scalp). The Mohawk's shaved sides were solid hair in
 * the mask, 80% of whose colour is the face's skin: a mask for recolouring or compositing the hair
 * took the scalp with it.
 */
export function alphaMask(layer: HairLayer): Uint8Array {
  const out = new Uint8Array(layer.alpha.length);
  const scalp = 1 - STUBBLE_HAIR;
  for (let i = 0; i < out.length; i++) out[i] = Math.round(layer.alpha[i]! * (1 - scalp * layer.stubble[i]!) * 255);
  return out;
}

