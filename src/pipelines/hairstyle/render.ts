// Hairstyle rendering, removal and compositing (pure: pixels in, pixels out).
//   renderHair     template -> per-pixel coverage (soft outline broken by fibres, a faded hairline)
//                  shade (strands, light from the face's side, highlight) and contact shadow;
//                  never on the protected face (inside the face oval, below the brows)
//   removalMask    original hair the new style does not cover, dilated to take its halo along
//   fillRemoved    exemplar fill (steps/patch-fill) of the removed hair, per what it hides
//   composite      the filled photo, contact shadow, then the hair recoloured in CIE Lab, grained
import type { HairColor } from '../../domain/job.ts';
import type { RgbImage } from '../../imaging/image.ts';
import { dilate } from '../../imaging/morphology.ts';
import { shadeRamp } from '../../steps/color.ts';
import { patchFill } from '../../steps/patch-fill.ts';
import { frameU, frameV, type Anchors, type Frame } from './frame.ts';
import { SHAVED_SIDES, TEMPLATES, wisp, type Template, type Variant } from './templates.ts';
import type { Hairstyle } from '../../domain/job.ts';

/** What the analysis of the chosen photo gives the renderer. */
export interface HeadAnalysis {
  image: RgbImage;
  frame: Frame;
  anchors: Anchors;
  /** 1 where the face must stay untouched: inside the face oval, below the top of the brows. */
  protect: Uint8Array;
  /** 1 on other people's pixels: never changed by the removal. */
  others: Uint8Array;
  /** The target's original hair, soft 0..255 at full resolution. */
  hair: Uint8Array;
  /** What each hair pixel most likely hides (hair.ts UNDER), and per group where to copy it from. */
  under: Uint8Array;
  sources: Uint8Array[];
  /** Person probability 0..255 (everyone in the photo). */
  person: Uint8Array;
}

export interface HairLayer {
  /** Coverage 0..1 per pixel. */
  alpha: Float32Array;
  /** Shade -1..1 per pixel (where alpha > 0). */
  shade: Float32Array;
  /** Contact shadow 0..1 the hair casts on what is below it. */
  shadow: Float32Array;
  /** Share of the coverage that is shaved stubble (the Mohawk's sides): the person's own colour. */
  stubble: Float32Array;
}

/** How the photo looks, measured on the face: the hair is lit, exposed and grained to match. */
export interface Look {
  /** Light from the image-right (+1) or image-left (-1): the face's lightness difference, scaled. */
  lightSide: number;
  /** Multiplier on the hair's colour ramp: the face's mean lightness against a well-exposed face. */
  exposure: number;
  /** Noise of the photo, in levels (robust estimate on the face). */
  grain: number;
  /** What shaved stubble shows: the scalp through the person's own hair (sRGB, from the face and old hair). */
  natural: readonly [number, number, number];
}

function rasterize(an: HeadAnalysis, look: Look, t: Template, p: Variant, layer: HairLayer, under: boolean): void {
  const { image, frame: f, anchors: a } = an;
  const W = image.width;
  const H = image.height;
  const px = 1 / f.scale;
  // Edges: the outer silhouette over ~2 px plus fibres breaking it; the hairline on the forehead
  // fades over ~3% of the face width, so skin shows between the first hairs.
  const edge = Math.max(2.2 * px, 0.008);
  const hairlineFade = 0.03;
  const ctx = { a, p, px, lightSide: look.lightSide };
  // Bounding box of the frame region any template can reach, in pixels.
  const corners = [
    [-1.25, a.forehead - 1.2],
    [1.25, a.forehead - 1.2],
    [-1.25, a.chin + 1.8],
    [1.25, a.chin + 1.8],
  ].map(([u, v]) => [f.ox + f.scale * (u! * f.ux - v! * f.uy), f.oy + f.scale * (u! * f.uy + v! * f.ux)]);
  const x0 = Math.max(0, Math.floor(Math.min(...corners.map((c) => c[0]!))));
  const x1 = Math.min(W, Math.ceil(Math.max(...corners.map((c) => c[0]!))));
  const y0 = Math.max(0, Math.floor(Math.min(...corners.map((c) => c[1]!))));
  const y1 = Math.min(H, Math.ceil(Math.max(...corners.map((c) => c[1]!))));
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = y * W + x;
      // Never on the face; behind other people (their pixels, nearer their face than the target's).
      if (an.protect[i] || (an.others[i] && an.person[i]! > 128)) continue;
      const u = frameU(f, x + 0.5, y + 0.5), v = frameV(f, x + 0.5, y + 0.5);
      const raw = t.sdf(u, v, ctx);
      if (raw > 3 * edge + 0.03) continue;
      // On the forehead (inside the face oval) the outline is the hairline: soft, no wisps.
      const onForehead = Math.abs(u) < a.ovalHalfWidth(Math.max(v, a.forehead), u) + 0.02 && v > a.forehead - 0.08;
      const d = onForehead ? raw : raw + wisp(t, u, v, p.seed);
      const band = onForehead ? hairlineFade : edge;
      if (d > band) continue;
      const ramp = Math.min(1, Math.max(0, 0.5 - d / (2 * band)));
      const s = Math.max(-1, Math.min(1, t.shade(u, v, ctx, -d)));
      // Near the outline, darker strands thin out first: the edge breaks up along the strands.
      const near = 1 - Math.min(1, Math.max(0, -d / (4 * band)));
      const fibres = 1 - near * 0.6 * Math.max(0, -s);
      const cover = ramp * fibres * t.opacity;
      if (cover <= 0) continue;
      if (under) {
        // Below the main layer: only where that layer leaves room.
        const room = 1 - layer.alpha[i]!;
        const add = cover * room;
        if (add <= 0) continue;
        layer.shade[i] = (layer.shade[i]! * layer.alpha[i]! + s * add) / (layer.alpha[i]! + add);
        layer.stubble[i] = (layer.stubble[i]! * layer.alpha[i]! + add) / (layer.alpha[i]! + add);
        layer.alpha[i] = layer.alpha[i]! + add;
      } else {
        layer.alpha[i] = cover;
        layer.shade[i] = s;
      }
    }
  }
}

/**
 * Contact shadow: the hair's coverage blurred (a box of ~4% of the face width) and moved ~2.5%
 * towards the chin, minus the hair itself: the shade the hair casts on the forehead, temples
 * and neck just below it.
 */
function castShadow(an: HeadAnalysis, layer: HairLayer): Float32Array {
  const { width: W, height: H } = an.image;
  const f = an.frame;
  const r = Math.max(1, Math.round(0.04 * f.scale));
  // Integral image of alpha.
  const S = new Float64Array((W + 1) * (H + 1));
  for (let y = 0; y < H; y++) {
    let row = 0;
    for (let x = 0; x < W; x++) {
      row += layer.alpha[y * W + x]!;
      S[(y + 1) * (W + 1) + x + 1] = S[y * (W + 1) + x + 1]! + row;
    }
  }
  const box = (cx: number, cy: number) => {
    const xa = Math.max(0, Math.min(W, cx - r)), xb = Math.max(0, Math.min(W, cx + r + 1));
    const ya = Math.max(0, Math.min(H, cy - r)), yb = Math.max(0, Math.min(H, cy + r + 1));
    const n = (xb - xa) * (yb - ya);
    if (n <= 0) return 0;
    return (S[yb * (W + 1) + xb]! - S[ya * (W + 1) + xb]! - S[yb * (W + 1) + xa]! + S[ya * (W + 1) + xa]!) / ((2 * r + 1) * (2 * r + 1));
  };
  // The shadow at p comes from the hair at p - shift (shift: towards the chin, along v).
  const sx = Math.round(-0.025 * f.scale * -f.uy), sy = Math.round(-0.025 * f.scale * f.ux);
  const out = new Float32Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const a = layer.alpha[i]!;
      if (a >= 0.99) continue;
      const b = box(x + sx, y + sy);
      if (b > a) out[i] = b - a;
    }
  }
  return out;
}

/** Draws a template for one variant. */
export function renderHair(an: HeadAnalysis, look: Look, style: Hairstyle, p: Variant): HairLayer {
  const n = an.image.width * an.image.height;
  const layer: HairLayer = { alpha: new Float32Array(n), shade: new Float32Array(n), shadow: new Float32Array(0), stubble: new Float32Array(n) };
  rasterize(an, look, TEMPLATES[style], p, layer, false);
  if (style === 'Mohawk') rasterize(an, look, SHAVED_SIDES, p, layer, true);
  layer.shadow = castShadow(an, layer);
  return layer;
}

/**
 * Where the photo must be filled: original hair (soft mask above 30%) the new hair does not
 * cover opaquely, grown by ~1.5% of the face width so no fringe of old hair survives; never the
 * protected face, never another person.
 */
export function removalMask(an: HeadAnalysis, layer: HairLayer): Uint8Array {
  const { width: W, height: H } = an.image;
  const raw = new Uint8Array(W * H);
  for (let i = 0; i < raw.length; i++) raw[i] = an.hair[i]! > 77 && layer.alpha[i]! < 0.95 ? 1 : 0;
  const grown = dilate(raw, W, H, Math.max(1, Math.round(an.frame.scale * 0.015)));
  for (let i = 0; i < grown.length; i++) if (an.protect[i] || an.others[i]) grown[i] = 0;
  return grown;
}

/**
 * Fills the removed hair with what it most likely hides: each fill group (background, skin,
 * clothing) by exemplar patches of that group only, so a wall is continued with wall and a neck
 * with skin, never with a face or hair.
 */
export function fillRemoved(an: HeadAnalysis, hole: Uint8Array, seed: number): RgbImage {
  const n = hole.length;
  let img = an.image;
  for (let g = 1; g < an.sources.length; g++) {
    const part = new Uint8Array(n);
    let any = 0;
    for (let i = 0; i < n; i++) if (hole[i] && (an.under[i] || 1) === g) any = part[i] = 1;
    if (!any) continue;
    const src = new Uint8Array(n);
    for (let i = 0; i < n; i++) src[i] = an.sources[g]![i] && !hole[i] ? 1 : 0;
    img = patchFill(img, part, { source: src, seed: seed + g });
  }
  return img;
}

/**
 * The filled photo darkened by the hair's contact shadow, then the recoloured hair over it: the
 * colour ramp (CIE Lab, keeps light and dark strands) scaled to the photo's exposure, with grain
 * of the photo's own strength so the hair is not cleaner than the picture around it.
 */
export function composite(base: RgbImage, layer: HairLayer, color: HairColor, look: Look, seed: number): RgbImage {
  const ramp = shadeRamp(color);
  const data = Uint8Array.from(base.data);
  let h = seed >>> 0;
  const noise = () => {
    // Two xorshift draws, summed: a cheap bell-shaped noise in about -1..1.
    h ^= h << 13;
    h ^= h >>> 17;
    h ^= h << 5;
    const a = (h >>> 0) / 4294967296;
    h ^= h << 13;
    h ^= h >>> 17;
    h ^= h << 5;
    return a + (h >>> 0) / 4294967296 - 1;
  };
  for (let i = 0; i < layer.alpha.length; i++) {
    const a = layer.alpha[i]!;
    const sh = layer.shadow[i] ?? 0;
    if (a <= 0 && sh <= 0.004) continue;
    const dark = 1 - 0.45 * sh;
    const k = Math.round((layer.shade[i]! + 1) * 127.5);
    const g = a > 0 ? look.grain * 1.7 * noise() : 0;
    const st = layer.stubble[i]!;
    for (let c = 0; c < 3; c++) {
      const under = data[3 * i + c]! * dark;
      const hair = (ramp[3 * k + c]! * (1 - st) + look.natural[c]! * (1 + 0.3 * layer.shade[i]!) * st) * look.exposure + g;
      data[3 * i + c] = Math.max(0, Math.min(255, Math.round(under * (1 - a) + hair * a)));
    }
  }
  return { data, width: base.width, height: base.height };
}

/** The layer's coverage as an 8-bit mask. */
export function alphaMask(layer: HairLayer): Uint8Array {
  const out = new Uint8Array(layer.alpha.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(layer.alpha[i]! * 255);
  return out;
}
