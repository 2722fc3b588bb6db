// Hairstyle rendering and compositing (pure: pixels in, pixels out; the removal's inpainting is the
// shared steps/inpaint.ts).
//   renderHair     template -> per-pixel coverage (antialiased over ~1 px) and shade, never on the
//                  protected face (inside the face oval, below the brows)
//   removalMask    original hair the new style does not cover, dilated to take its halo along
//   (steps/inpaint) push-pull ONNX graph: fills the removed hair from its surroundings
//   composite      the filled photo, then the hair recoloured in CIE Lab over it
import type { HairColor } from '../../domain/job.ts';
import type { RgbImage } from '../../imaging/image.ts';
import { dilate } from '../../imaging/morphology.ts';
import { shadeRamp } from '../../steps/color.ts';
import { toFrame, type Anchors, type Frame } from './frame.ts';
import { SHAVED_SIDES, TEMPLATES, wisp, type Template, type Variant } from './templates.ts';
import type { Hairstyle } from '../../domain/job.ts';

/** What the analysis of the chosen photo gives the renderer. */
export interface HeadAnalysis {
  image: RgbImage;
  frame: Frame;
  anchors: Anchors;
  /** 1 where the face must stay untouched: inside the face oval, below the top of the brows. */
  protect: Uint8Array;
  /** Original hair, soft 0..255 at full resolution. */
  hair: Uint8Array;
}

export interface HairLayer {
  /** Coverage 0..1 per pixel. */
  alpha: Float32Array;
  /** Shade -1..1 per pixel (where alpha > 0). */
  shade: Float32Array;
}

function rasterize(an: HeadAnalysis, t: Template, p: Variant, layer: HairLayer, under: boolean): void {
  const { image, frame: f, anchors: a } = an;
  const W = image.width;
  const H = image.height;
  const aa = 1.1 / f.scale; // edge width: about one pixel
  const ctx = { a, p };
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
      if (an.protect[i]) continue;
      const [u, v] = toFrame(f, x + 0.5, y + 0.5);
      const raw = t.sdf(u, v, ctx);
      if (raw > aa + 0.03) continue;
      const d = raw + wisp(t, u, v, p.seed);
      if (d > aa) continue;
      const cover = Math.min(1, Math.max(0, 0.5 - d / (2 * aa))) * t.opacity;
      if (cover <= 0) continue;
      const s = Math.max(-1, Math.min(1, t.shade(u, v, ctx, -d)));
      if (under) {
        // Below the main layer: only where that layer leaves room.
        const room = 1 - layer.alpha[i]!;
        const add = cover * room;
        if (add <= 0) continue;
        layer.shade[i] = (layer.shade[i]! * layer.alpha[i]! + s * add) / (layer.alpha[i]! + add);
        layer.alpha[i] = layer.alpha[i]! + add;
      } else {
        layer.alpha[i] = cover;
        layer.shade[i] = s;
      }
    }
  }
}

/** Draws a template for one variant. */
export function renderHair(an: HeadAnalysis, style: Hairstyle, p: Variant): HairLayer {
  const n = an.image.width * an.image.height;
  const layer: HairLayer = { alpha: new Float32Array(n), shade: new Float32Array(n) };
  rasterize(an, TEMPLATES[style], p, layer, false);
  if (style === 'Mohawk') rasterize(an, SHAVED_SIDES, p, layer, true);
  return layer;
}

/**
 * Where the photo must be filled: original hair (soft mask above 30%) the new hair does not
 * cover opaquely, grown by ~1.5% of the face width so no fringe of old hair survives; never the
 * protected face.
 */
export function removalMask(an: HeadAnalysis, layer: HairLayer): Uint8Array {
  const { width: W, height: H } = an.image;
  const raw = new Uint8Array(W * H);
  for (let i = 0; i < raw.length; i++) raw[i] = an.hair[i]! > 77 && layer.alpha[i]! < 0.95 ? 1 : 0;
  const grown = dilate(raw, W, H, Math.max(1, Math.round(an.frame.scale * 0.015)));
  for (let i = 0; i < grown.length; i++) if (an.protect[i]) grown[i] = 0;
  return grown;
}

/** The recoloured hair over the filled photo. */
export function composite(base: RgbImage, layer: HairLayer, color: HairColor): RgbImage {
  const ramp = shadeRamp(color);
  const data = Uint8Array.from(base.data);
  for (let i = 0; i < layer.alpha.length; i++) {
    const a = layer.alpha[i]!;
    if (a <= 0) continue;
    const k = Math.round((layer.shade[i]! + 1) * 127.5);
    for (let c = 0; c < 3; c++) data[3 * i + c] = Math.round(data[3 * i + c]! * (1 - a) + ramp[3 * k + c]! * a);
  }
  return { data, width: base.width, height: base.height };
}

/** The layer's coverage as an 8-bit mask. */
export function alphaMask(layer: HairLayer): Uint8Array {
  return Uint8Array.from(layer.alpha, (a) => Math.round(a * 255));
}
