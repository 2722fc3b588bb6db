// Hairstyle rendering (pure: pixels in, pixels out): the new hair drawn from the head alone.
//   drawHair       template -> per-pixel coverage (soft outline broken by fibres, a faded hairline)
//                  shade (strands, light from the face's side, highlight); never on the protected
//                  face (inside the face oval, below the brows)
//   placeHair      behind other people, and the contact shadow it casts
// The old hair's removal and fill are removal.ts's, the compositing composite.ts's: a generative
// ONNX stage can replace drawHair without touching them.
import type { RgbImage } from '../../imaging/image.ts';
import { chamfer, grownMaskBox } from '../../imaging/morphology.ts';
import { giveBack, takeBytes, takePlane } from '../../imaging/scratch.ts';
import { FOREHEAD_WIDTH_BELOW, NATURAL_HAIRLINE, frameBox, frameU, frameV, type Anchors, type Frame } from './frame.ts';
import { SHAVED_SIDES, TEMPLATES, hash2, noise1, noise2, smooth, type Template, type Variant } from './templates.ts';
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
  /** The face's skin colour (sRGB median of the protected face): what counts as skin around a hole. */
  skin: readonly [number, number, number];
  /** The old hair's colour (sRGB median of its confident inside): which of its locks the removal keeps. */
  hairColour: readonly [number, number, number];
}

/** What drawing the hair needs of the analysis: the head, before the photo's own hair is known. */
export type HeadGeometry = Pick<HeadAnalysis, 'image' | 'frame' | 'anchors' | 'protect'>;

export interface HairLayer {
  /** Coverage 0..1 per pixel. */
  alpha: Float32Array;
  /** Shade -1..1 per pixel (where alpha > 0). */
  shade: Float32Array;
  /** Contact shadow 0..1 the hair casts on what is below it. */
  shadow: Float32Array;
  /** Share of the coverage that is shaved stubble (the Mohawk's sides): the person's own colour. */
  stubble: Float32Array;
  /** Per-strand colour variation -1..1 (cooler and paler .. warmer and richer), where alpha > 0. */
  tone: Float32Array;
  /**
   * Specular sheen 0..1: the light reflected off the strands' surface, not dyed by the pigment
   * (so black hair shows its pale highlights, which a ramp of the colour's own lightness cannot).
   */
  sheen: Float32Array;
  /**
   * The box (x1, y1 exclusive) outside which every plane is 0: the rasterizer's drawn pixels, grown
   * by the contact shadow's reach. Compositing walks it, not the photo.
   */
  box: { x0: number; y0: number; x1: number; y1: number };
  /**
   * A short style (TEMPLATES' `short`): its strands stand at a steep angle and the dark between
   * them shows (composite gives grey, white and the dyes their depth there, shadeRamp's `deep`).
   */
  short: boolean;
  /**
   * Shaved sides (the Mohawk's): a lock of her hair kept over the forehead stays in her own colour
   * (the sides are her own colour's stubble), not dyed the strip's (a green streak at each temple);
   * the whole layer's locks, the strip's too (it is narrow: a lock at the midline is rare).
   */
  shaved: boolean;
  /**
   * A long style's crown, in the head's frame: a dye's deeper shadows (shadeRamp's `deep`) on its
   * crown, down to `from` (v), fading out by `to`, the lengths below within the colour's swing
   * (on the whole mass the lengths, which lie mostly on the shade's dark side, lost the colour: a
   * blue Dreadlocks went navy). Null for a short style (deep everywhere).
   */
  crown: { frame: Frame; from: number; to: number } | null;
}

/** How the photo looks, measured on the face: the hair is lit, exposed and grained to match. */
export interface Look {
  /** Light from the image-right (+1) or image-left (-1): the face's lightness difference, scaled. */
  lightSide: number;
  /** Multiplier on the hair's colour ramp: the face's mean lightness against a well-exposed face. */
  exposure: number;
  /** Noise of the photo, in levels (robust estimate on the face). */
  grain: number;
  /**
   * How much softer than drawn the hair must be to match the photo (px, a Gaussian's sigma; 0 on a
   * sharp photo): the face's own blur (imaging/blur.ts blurSigma) less the drawing's own softness.
   */
  blur: number;
  /**
   * The photo's own blur (px, a Gaussian's sigma, measured on the face as for `blur`; 1 where the
   * face gives no estimate): how soft an edge between two things is in this photo.
   */
  edgeBlur: number;
  /** What shaved stubble shows: the scalp through the person's own hair (sRGB, from the face and old hair). */
  natural: readonly [number, number, number];
  /**
   * A black-and-white photo (the face without colour: analysis.ts MONOCHROME): the new hair is
   * drawn in grey at the colour's lightness, as the photo would show it (composite.ts).
   */
  monochrome: boolean;
}

/** x^60 and x^14 by squaring: Math.pow was a quarter of the rasterizer's own time (the same values to a few ulps). */
function pow60(x: number): number {
  const x4 = x * x * (x * x), x8 = x4 * x4, x16 = x8 * x8;
  return x16 * x16 * x16 * x8 * x4;
}
function pow14(x: number): number {
  const x2 = x * x, x4 = x2 * x2;
  return x4 * x4 * x4 * x2;
}

/**
 * Draws one template into the layer. Per pixel, in the head frame (u, v; z towards the camera):
 *   outline  the template's SDF pushed in and out by strand clumps (noise across the flow, slow
 *            along it: clumped tips where strands end, straight sides where they run along) and,
 *            near the outline, alpha that follows single strands (the thinner ones end first)
 *   light    the hair's mass as an ellipsoid (Template.bulk) gives the normal; the strand tangent
 *            is the flow lifted onto that surface; wrapped diffuse + Kajiya-Kay highlights (a sharp
 *            primary and a broad secondary, each shifted per strand so the band breaks up), light
 *            from the face's side and from above; occlusion towards the outline and in clump gaps
 *   tone     per-strand colour variation (composite shifts chroma and hue by it)
 * Only 8x8 blocks whose centre lies within reach of the outline are visited (most of the head's
 * bounding box is empty for short styles).
 */
function rasterize(an: HeadGeometry, look: Pick<Look, 'lightSide'>, t: Template, p: Variant, layer: HairLayer, under: boolean): void {
  const { image, frame: f, anchors: a } = an;
  const W = image.width;
  const H = image.height;
  const px = 1 / f.scale;
  // The outer silhouette's antialiasing band; the hairline on the forehead fades over ~3.5% of
  // the face width, so skin shows between the first hairs.
  const edge = Math.max(1.5 * px, 0.005);
  const hairlineFade = 0.035;
  const ctx = { a, p, px, lightSide: look.lightSide };
  // Light: from the side the face is lit from, and from above, towards the camera.
  const l0 = 0.4 * look.lightSide, l1 = -0.7, l2 = 0.75;
  const ln = Math.hypot(l0, l1, l2);
  const Lx = l0 / ln, Ly = l1 / ln, Lz = l2 / ln;
  const hn = Math.hypot(Lx, Ly, Lz + 1);
  const Hx = Lx / hn, Hy = Ly / hn, Hz = (Lz + 1) / hn;
  // Strands per frame unit: at most one per ~2.5 px (no moire on small faces).
  const fibreF = Math.min(260, 0.4 / px);
  const bcy = a.forehead + t.bulk.cy, brx = t.bulk.rx * p.volume, bry = t.bulk.ry * p.volume;
  const reach = 2 * edge + hairlineFade + t.wisps;
  // The forehead's top (the hairline's highest reach) and where the forehead's width is taken
  // above the oval's top: a natural hairline lies above FaceMesh's forehead landmark, across the
  // forehead's width (bareForehead).
  const foreheadTop = a.forehead - 0.08 - (t.naturalHairline ? NATURAL_HAIRLINE : 0);
  const widthAt = t.naturalHairline ? a.forehead + FOREHEAD_WIDTH_BELOW : a.forehead;
  const seed = p.seed;
  // Bounding box of the frame region any template can reach, in pixels.
  const { x0, x1, y0, y1 } = frameBox(f, -1.25, 1.25, a.forehead - 1.2, a.chin + 1.8, W, H);
  const B = 8;
  const blockR = B * 0.75 * px;
  const box = layer.box;
  const drawn = (x: number, y: number) => {
    if (x < box.x0) box.x0 = x;
    if (x >= box.x1) box.x1 = x + 1;
    if (y < box.y0) box.y0 = y;
    if (y >= box.y1) box.y1 = y + 1;
  };
  for (let by = y0; by < y1; by += B) {
    for (let bx = x0; bx < x1; bx += B) {
      const cu = frameU(f, bx + B / 2, by + B / 2), cv = frameV(f, bx + B / 2, by + B / 2);
      // The SDFs are distance bounds (min/max of distances): a block whose centre is farther than
      // its radius plus the widest reach holds no hair.
      if (t.sdf(cu, cv, ctx) > blockR + reach + 0.01) continue;
      const yb = Math.min(y1, by + B), xb = Math.min(x1, bx + B);
      for (let y = by; y < yb; y++) {
        for (let x = bx; x < xb; x++) {
          const i = y * W + x;
          // Never on the face (behind other people: placeHair, once they are known).
          if (an.protect[i]) continue;
          const u = frameU(f, x + 0.5, y + 0.5), v = frameV(f, x + 0.5, y + 0.5);
          const raw = t.sdf(u, v, ctx);
          if (raw > reach) continue;
          const th = t.flow(u, v, ctx);
          let cs = Math.cos(th), sn = Math.sin(th);
          let across = t.stream ? t.stream(u, v, ctx) : u * cs - v * sn;
          const along = u * sn + v * cs;
          if (t.curl) {
            // A strand keeps across + amp*sin(arg) constant: it swings across the flow, its
            // tangent turning with the slope of that swing; each ringlet its own phase.
            const ring = Math.floor(across * 26 + 0.6 * noise1(along * 4, seed + 29));
            let slope: number;
            if (t.curl.irregular) {
              // Kinky hair: the swing follows value noise along the strand, its phase turning with
              // the across coordinate too, so no two neighbouring strands zigzag together (a sine in
              // phase across a ringlet drew a knitted cap's ribs); its slope by a finite difference.
              const q = (2 * along) / t.curl.period + 17.3 * hash2(ring, 0, seed + 31) + 40 * across;
              const n0 = noise1(q, seed + 33), n1 = noise1(q + 0.01, seed + 33);
              const amp = 2.2 * t.curl.amp;
              across += amp * (2 * n0 - 1);
              slope = (2 * amp * (n1 - n0)) / (0.005 * t.curl.period);
            } else {
              const arg = (along * 2 * Math.PI) / t.curl.period + 2 * Math.PI * hash2(ring, 0, seed + 31);
              across += t.curl.amp * Math.sin(arg);
              slope = -((t.curl.amp * 2 * Math.PI) / t.curl.period) * Math.cos(arg);
            }
            const n = Math.sqrt(1 + slope * slope);
            // tangent = along axis (sn, cs) + slope * across axis (cs, -sn), normalised
            const tu = (sn + slope * cs) / n, tv = (cs - slope * sn) / n;
            sn = tu;
            cs = tv;
          }
          // Clumps of strands (about 1/28 of the face width), and single fibres in them.
          let clump: number, fibre: number;
          if (t.strandLength) {
            // Clipped: each fibre (a column across the flow) cut into pieces, the cuts staggered from
            // one fibre to the next; each piece takes its own place in the fibre noise.
            const col = Math.floor(across * fibreF);
            const piece = Math.floor(along / t.strandLength + hash2(col, 1, seed + 41));
            clump = noise2(across * 28, along * 0.25 / t.strandLength, seed + 11) * 2 - 1;
            // A phase per fibre too: neighbouring fibres' pieces would otherwise share one noise
            // value where their cuts line up, blocks several fibres wide.
            fibre = noise1(across * fibreF + 9.7 * piece + 5.3 * col, seed + 13);
          } else {
            clump = noise2(across * 28, along * 2.5, seed + 11) * 2 - 1;
            fibre = noise1(across * fibreF + 3 * noise1(along * 3, seed + 7), seed + 13);
          }
          // On the forehead (inside the face oval, or above its top as wide as the forehead for a
          // natural hairline) near its top the outline is the hairline, where hair grows from: soft, fine hairs. Lower down it is a fringe's ends: clumped like any tips.
          // Short styles' temples and sideburns beside the face are hairline too: hair grows there.
          const onForehead =
            (v < a.forehead + 0.09 && v > foreheadTop && Math.abs(u) < a.ovalHalfWidth(Math.max(v, widthAt), u) + 0.02) ||
            (t.short && v > a.brows - 0.05 && Math.abs(u) < a.ovalHalfWidth(v, u) + 0.12);
          const depthGuess = -raw;
          // The relief (a pure function of the pixel) is taken before the outline only where the
          // outline needs it; elsewhere after it, once the pixel is known to be drawn (about a
          // quarter of the pixels looked at lie outside the clumped outline).
          let relief = t.strands > 0 ? NaN : t.shade(u, v, ctx, depthGuess);
          // Clumped edges follow the strands; where the relief draws its own bundles (curls,
          // ropes) the outline follows those: a ringlet's crease cuts in, its bulge stands out.
          const lump = t.strands > 0 ? 0.75 * clump + 0.25 * (fibre * 2 - 1) : 0.8 * relief + 0.2 * (fibre * 2 - 1);
          const d = onForehead ? raw - 0.01 * (fibre * 2 - 1) : raw - t.wisps * lump;
          const band = onForehead ? hairlineFade : edge;
          if (d > band) continue;
          const ramp = Math.min(1, Math.max(0, 0.5 - d / (2 * band)));
          // Near the outline the strands thin out one by one: alpha follows the fibres there.
          const zone = Math.max(3 * band, 0.5 * t.wisps + edge);
          const presence = (t.wisps === 0 || t.strands === 0) && !onForehead ? 1 : smooth(0, 1, (-d / zone) * 1.5 + fibre - 0.45);
          const cover = ramp * presence * t.opacity;
          if (cover <= 0) continue;
          if (t.strands > 0) relief = t.shade(u, v, ctx, depthGuess);
          const depth = -d;
          // Normal of the hair's mass; below its centre it hangs (a cylinder more than a sphere),
          // and it turns away from the camera towards the outline.
          const ex = u / brx;
          let ey = (v - bcy) / bry;
          if (ey > 0) ey *= 0.3;
          let r2 = ex * ex + ey * ey;
          const k2 = r2 > 0.94 ? Math.sqrt(0.94 / r2) : 1;
          r2 = Math.min(r2, 0.94);
          let nx = ex * k2, ny = ey * k2, nz = Math.sqrt(1 - r2) * (0.35 + 0.65 * smooth(0, 0.08, depth));
          // Math.sqrt, not Math.hypot: hypot guards against overflow these unit-scale values never
          // reach, and costs several times as much in this loop (run per drawn pixel).
          const nn = Math.sqrt(nx * nx + ny * ny + nz * nz);
          nx /= nn;
          ny /= nn;
          nz /= nn;
          // The strand's tangent: the flow lifted onto that surface.
          let tx = sn, ty = cs;
          let tz = -(tx * nx + ty * ny) / Math.max(nz, 0.3);
          const tn = Math.sqrt(tx * tx + ty * ty + tz * tz);
          tx /= tn;
          ty /= tn;
          tz /= tn;
          // Kajiya-Kay: brightest where the tangent is perpendicular to the half vector; the
          // tangent is shifted along the normal per strand so the band breaks into strands.
          const jit = noise1(across * fibreF * 0.3, seed + 17) - 0.5 + 0.3 * clump;
          const th1 = tx * Hx + ty * Hy + tz * Hz;
          const tnH = nx * Hx + ny * Hy + nz * Hz;
          const d1 = th1 + (-0.1 + 0.35 * jit) * tnH;
          const d2 = th1 + (0.2 + 0.35 * jit) * tnH;
          // No highlight on the side turned from the light: the powers (the costliest part of the
          // light) are taken only where the factor that fades it there is not 0.
          const nl = nx * Lx + ny * Ly + nz * Lz;
          const facing = smooth(-0.1, 0.3, nl);
          const spec = facing > 0 ? (pow60(Math.max(0, 1 - d1 * d1)) + 0.35 * pow14(Math.max(0, 1 - d2 * d2))) * facing : 0;
          const tl = tx * Lx + ty * Ly + tz * Lz;
          const wrap = Math.max(0, (nl + 0.5) / 1.5);
          const diffuse = wrap * (0.6 + 0.4 * Math.sqrt(Math.max(0, 1 - tl * tl)));
          // Self-shadowing: thin hair at the outline and next to the face, the gaps between clumps.
          const ao = (0.6 + 0.4 * smooth(0, 0.1, depth)) * (0.86 + 0.14 * clump);
          const strandTex = 0.5 * (fibre * 2 - 1) + 0.3 * clump + 0.2 * (noise2(across * fibreF * 0.45, along * 6, seed + 5) * 2 - 1);
          const gloss = t.gloss * p.shine * spec;
          // Short hair shows its strands more than its mass: each lies over the next at a steep angle,
          // so the dark gaps between them break up the dome (a smooth one reads as a cap).
          const texW = t.short ? 0.75 : 0.45;
          const s = Math.max(-1, Math.min(1, 1.7 * (diffuse * ao - 0.66) + texW * t.strands * strandTex + relief + 0.6 * gloss));
          const tone = 0.6 * (noise1(across * fibreF * 0.2, seed + 19) * 2 - 1) + 0.4 * clump;
          if (under) {
            // Below the main layer: only where that layer leaves room.
            const room = 1 - layer.alpha[i]!;
            const add = cover * room;
            if (add <= 0) continue;
            drawn(x, y);
            layer.shade[i] = (layer.shade[i]! * layer.alpha[i]! + s * add) / (layer.alpha[i]! + add);
            layer.stubble[i] = (layer.stubble[i]! * layer.alpha[i]! + add) / (layer.alpha[i]! + add);
            layer.alpha[i] = layer.alpha[i]! + add;
          } else {
            drawn(x, y);
            layer.alpha[i] = cover;
            layer.shade[i] = s;
            layer.tone[i] = tone;
            // The sheen follows single fibres: some strands catch the light, the next ones not.
            layer.sheen[i] = Math.min(1, gloss * (0.35 + 1.3 * fibre) * ao);
          }
        }
      }
    }
  }
}

/**
 * Contact shadow: the hair's coverage blurred (a box of ~4% of the face width) and moved ~2.5%
 * towards the chin, minus the hair itself: the shade the hair casts on the forehead, temples
 * and neck just below it, fading out towards the kept face (SHADOW_FADE). Computed in the hair's
 * bounding box (grown by the blur and the shift).
 */
function castShadow(an: HeadAnalysis, layer: HairLayer): Float32Array {
  const { width: W, height: H } = an.image;
  const f = an.frame;
  const r = Math.max(1, Math.round(0.04 * f.scale));
  const sx = Math.round(-0.025 * f.scale * -f.uy), sy = Math.round(-0.025 * f.scale * f.ux);
  // The drawn pixels' box (the rasterizer's): where alpha > 0.
  const { x0: bx0, y0: by0 } = layer.box;
  const bx1 = layer.box.x1 - 1, by1 = layer.box.y1 - 1;
  const out = takePlane(W * H);
  if (bx1 < 0) return out;
  const m = r + Math.abs(sx) + Math.abs(sy) + 1;
  const X0 = Math.max(0, bx0 - m), X1 = Math.min(W, bx1 + m + 1), Y0 = Math.max(0, by0 - m), Y1 = Math.min(H, by1 + m + 1);
  const BW = X1 - X0, BH = Y1 - Y0;
  // The shadow reaches no farther than this box: the layer's box grows to it.
  layer.box = { x0: X0, y0: Y0, x1: X1, y1: Y1 };
  // Integral image of alpha over the box.
  const S = new Float64Array((BW + 1) * (BH + 1));
  for (let y = 0; y < BH; y++) {
    let row = 0;
    for (let x = 0; x < BW; x++) {
      row += layer.alpha[(y + Y0) * W + x + X0]!;
      S[(y + 1) * (BW + 1) + x + 1] = S[y * (BW + 1) + x + 1]! + row;
    }
  }
  const box = (cx: number, cy: number) => {
    const xa = Math.max(0, Math.min(BW, cx - r)), xb = Math.max(0, Math.min(BW, cx + r + 1));
    const ya = Math.max(0, Math.min(BH, cy - r)), yb = Math.max(0, Math.min(BH, cy + r + 1));
    if (xb <= xa || yb <= ya) return 0;
    return (S[yb * (BW + 1) + xb]! - S[ya * (BW + 1) + xb]! - S[yb * (BW + 1) + xa]! + S[ya * (BW + 1) + xa]!) / ((2 * r + 1) * (2 * r + 1));
  };
  const fade = shadowFade(an);
  // The shadow at p comes from the hair at p - shift (shift: towards the chin, along v); none on
  // other people (they are in front of or beside the target, not under the hair), none on the
  // protected face below the brows (kept exactly as it was), and fading out towards it.
  for (let y = Y0; y < Y1; y++) {
    for (let x = X0; x < X1; x++) {
      const i = y * W + x;
      const a = layer.alpha[i]!;
      if (a >= 0.99 || an.others[i] || an.protect[i]) continue;
      const b = box(x - X0 + sx, y - Y0 + sy);
      if (b <= a) continue;
      out[i] = (b - a) * fade(x, y);
    }
  }
  return out;
}

/**
 * The contact shadow fades out over this many face widths towards the protected face (smoothly,
 * to none at its edge). Cut off at the face's edge, the fringe's shadow on the forehead ended in a
 * straight step along the brows: a flat darker bar between the new fringe and the brows. Over 8%
 * the fade was gentler still, but the reference face parser's readings of two development runs
 * moved past their bounds with it (s5-back's blue Dreadlocks read as hair 0.70 -> 0.49).
 */
const SHADOW_FADE = 0.04;

/**
 * The contact shadow's fade (SHADOW_FADE) at each pixel, 0 at the protected face's edge to 1 past
 * the fade: a smoothstep of the chamfer distance to the face, computed on the face's box grown by
 * twice the fade (past it: 1). The same for every picture of a task: kept per protected mask.
 */
function shadowFade(an: Pick<HeadAnalysis, 'image' | 'protect' | 'frame'>): (x: number, y: number) => number {
  const known = FADES.get(an.protect);
  if (known) return known;
  const { width: W, height: H } = an.image;
  const D = Math.max(2, Math.round(SHADOW_FADE * an.frame.scale));
  const box = grownMaskBox(an.protect, W, H, 2 * D);
  const x0 = box?.x0 ?? 0, y0 = box?.y0 ?? 0, bw = box ? box.x1 - x0 : 0, bh = box ? box.y1 - y0 : 0;
  const face = takeBytes(bw * bh);
  for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) face[y * bw + x] = an.protect[(y + y0) * W + x + x0]!;
  const toFace = chamfer(face, bw, bh);
  giveBack(face);
  const made = (x: number, y: number) => {
    const fx = x - x0, fy = y - y0;
    if (fx < 0 || fy < 0 || fx >= bw || fy >= bh) return 1;
    const t = Math.min(1, toFace[fy * bw + fx]! / (3 * D));
    return t * t * (3 - 2 * t);
  };
  FADES.set(an.protect, made);
  return made;
}

/** shadowFade's result per protected mask (a task's pictures share one; dropped with the mask). */
const FADES = new WeakMap<Uint8Array, (x: number, y: number) => number>();

/**
 * Draws a template for one variant: the hair as drawn, in front of everything but the face (no
 * contact shadow yet). Needs only the head (HeadGeometry), so the pipeline draws its first picture
 * while the models still look for the photo's own hair and its people; placeHair finishes it.
 */
export function drawHair(an: HeadGeometry, look: Pick<Look, 'lightSide'>, style: Hairstyle, p: Variant): HairLayer {
  const n = an.image.width * an.image.height;
  // Planes from the thread's pool (imaging/scratch.ts): the pipeline gives them back (releaseLayer)
  // once a picture is encoded.
  const layer: HairLayer = { alpha: takePlane(n), shade: takePlane(n), shadow: new Float32Array(0), stubble: takePlane(n), tone: takePlane(n), sheen: takePlane(n), box: { x0: an.image.width, y0: an.image.height, x1: 0, y1: 0 }, short: TEMPLATES[style].short, shaved: false, crown: TEMPLATES[style].short ? null : { frame: an.frame, from: an.anchors.ears - CROWN_FADE.above, to: an.anchors.ears + CROWN_FADE.below } };
  rasterize(an, look, TEMPLATES[style], p, layer, false);
  if (style === 'Mohawk') {
    rasterize(an, look, SHAVED_SIDES, p, layer, true);
    layer.shaved = true;
  }
  return layer;
}

/**
 * Where a long style's deeper crown shadows fade into its lengths (face widths about the ears'
 * height), and how much of the deep ramp the crown takes. Faded over 0.45 face widths, a dark
 * crown over bright lengths reads as dyed hair with darker roots; switched at one height it drew a
 * seam across the hair at the ears. A dye's long style read as a hat to the face parser (s6-left,
 * s5-right and s5-back, Dreadlocks, Long Wave and Long Layers in pink, blue and green: 17% of the
 * solid pixels labelled hair); with the deep ramp on the crown 49%, with 70% of it 46%: the whole
 * of it took the astronaut's Dreadlocks, mostly crown, just out of their colour bands (pink's
 * chroma 29 against 30, blue's and green's lightness 27 and 37 against 28 and 38).
 */
export const CROWN_FADE = { above: 0.15, below: 0.3, depth: 0.7 };

/**
 * A drawn layer put into the photo: behind other people (their pixels, nearer their face than the
 * target's, where the person mask holds them), its box shrunk to what is left drawn, and the
 * contact shadow it casts. Per pixel the same as drawing behind them in the first place: the
 * rasterizer's pixels are independent of each other (the Mohawk's second pass fills only room the
 * first left, on pixels cleared here alike).
 */
export function placeHair(an: HeadAnalysis, layer: HairLayer): HairLayer {
  const W = an.image.width;
  const { x0, y0, x1, y1 } = layer.box;
  const box = { x0: W, y0: an.image.height, x1: 0, y1: 0 };
  for (let y = y0; y < y1; y++) {
    for (let x = x0, i = y * W + x0; x < x1; x++, i++) {
      if (an.others[i] && an.person[i]! > 128) {
        layer.alpha[i] = layer.shade[i] = layer.stubble[i] = layer.tone[i] = layer.sheen[i] = 0;
        continue;
      }
      if (layer.alpha[i]! <= 0) continue;
      if (x < box.x0) box.x0 = x;
      if (x >= box.x1) box.x1 = x + 1;
      if (y < box.y0) box.y0 = y;
      if (y >= box.y1) box.y1 = y + 1;
    }
  }
  layer.box = box;
  layer.shadow = castShadow(an, layer);
  return layer;
}

/** drawHair, then placeHair: a layer in one step, once the analysis is complete. */
export function renderHair(an: HeadAnalysis, look: Look, style: Hairstyle, p: Variant): HairLayer {
  return placeHair(an, drawHair(an, look, style, p));
}

/** Gives a layer's planes back to the thread's pool: the layer must not be read afterwards. */
export function releaseLayer(layer: HairLayer): void {
  giveBack(layer.alpha, layer.shade, layer.shadow, layer.stubble, layer.tone, layer.sheen);
}

