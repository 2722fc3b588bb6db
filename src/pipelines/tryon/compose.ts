// Try-on compositing: the warped parts layered (torso, pelvis or skirt first, then legs, then
// sleeves, so sleeves lie over the torso where an arm crosses it), each clipped to its body part;
// face, hair and hands stay in front; the edges anti-aliased; old clothing of the target's body
// band that the new garment leaves uncovered replaced by patch-based fill (steps/patch-fill.ts)
// from the background and the target's skin; and the photo's own shading carried onto the garment.
import { boxAtScale, copyBytes, resizedBox, upscaleChanges, type RgbImage } from '../../imaging/image.ts';
import { patchFill, pullPush } from '../../steps/patch-fill.ts';
import { andNot, area, union } from './masks.ts';
import { cuffFade, type Cuff, type PartName } from './parts.ts';
import { eachComponent, open, type Region } from '../../imaging/morphology.ts';
import { giveBack, takeBytes } from '../../imaging/scratch.ts';
import { boxBlur as blur } from '../../imaging/blur.ts';

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

/** How much steeper a warped part's alpha is made about 0.5 (over). */
const EDGE_STEEP = 4;

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
      const raw = Math.min(1, Math.max(0, warped[3 * plane + j]!));
      if (raw <= 1e-4) continue;
      const fade = cuff ? cuffFade(cuff, x + rx0 + 0.5, y + ry0 + 0.5) : 1;
      // The garment's outline is one photo pixel wide; where the warp stretches the garment's edge
      // (a hip that bulges past a T-shirt's straight side) it became a soft ramp tens of pixels
      // wide. Steepened about its middle (the outline), it stays as sharp as the photo's; the
      // layer's 3x3 mean anti-aliases it.
      const a = Math.min(1, Math.max(0, (raw - 0.5) * EDGE_STEEP + 0.5)) * fade;
      if (a <= 0.01) continue;
      // "over": this part on top of what is there (its colour un-premultiplied by the raw alpha).
      const keep = alpha[i]! * (1 - a);
      const na = a + keep;
      for (let c = 0; c < 3; c++) rgb[3 * i + c] = ((warped[c * plane + j]! / raw) * a + rgb[3 * i + c]! * keep) / na;
      alpha[i] = na;
    }
  }
}

/**
 * Layers the warped parts (each clipped) and keeps `front` (face, hair, hands) uncovered; with
 * `specks`, islands of coverage under `maxArea` pixels cleared but beside `seenThrough` (dropSpecks).
 */
export function layerParts(W: number, H: number, parts: Array<{ warped: Float32Array; region: Region; clip: Uint8Array; cuff?: Cuff }>, front: Uint8Array, specks?: { maxArea: number; seenThrough: Uint8Array }): GarmentLayer {
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
  if (specks) dropSpecks(alpha, W, box, specks.seenThrough, specks.maxArea);
  // Anti-aliased edges: a 3x3 mean of the coverage, never onto what stays in front.
  const c = grow(box, 2, W, H), keep = grow(box, 1, W, H);
  const crop = cropOf(alpha, W, c);
  const blurred = blur(crop.data, crop.w, crop.h, 1);
  for (let y = keep.y0; y <= keep.y1; y++) {
    for (let x = keep.x0; x <= keep.x1; x++) {
      const i = y * W + x;
      soft[i] = front[i] ? 0 : blurred[(y - c.y0) * crop.w + (x - c.x0)]!;
      // The edge the mean grows onto (no colour of its own, black): the colour of its covered
      // neighbours, weighted by their coverage, so the anti-aliased edge does not darken.
      if (soft[i]! > 0 && alpha[i] === 0) {
        let r = 0, g = 0, b = 0, n = 0;
        for (let yy = Math.max(0, y - 1); yy <= Math.min(H - 1, y + 1); yy++) {
          for (let xx = Math.max(0, x - 1); xx <= Math.min(W - 1, x + 1); xx++) {
            const k = yy * W + xx, a = alpha[k]!;
            (r += a * rgb[3 * k]!), (g += a * rgb[3 * k + 1]!), (b += a * rgb[3 * k + 2]!), (n += a);
          }
        }
        if (n > 0) (rgb[3 * i] = r / n), (rgb[3 * i + 1] = g / n), (rgb[3 * i + 2] = b / n);
      }
    }
  }
  return { alpha: soft, rgb };
}

/**
 * Islands of coverage (4-connected, under `maxArea` pixels, not touching `box`'s edge nor
 * `seenThrough`) cleared: where the arm in front of the torso is cut out of it by its skin
 * (parts.ts armSkin), the skin's gaps (a shadow, a highlight, a fold off the skin's colour) let the
 * garment through as specks on the arm (s5-red-top's upper arm: white dots of a striped T-shirt;
 * around person-standing's hand on her dress, hands MAD 0.59 -> 0.10). A cleared speck shows the
 * photo: the arm. An island beside `seenThrough` (the face and hair: the garment between strands of
 * hair over the chest) is the garment seen through it, and stays. Within `box` (the parts'
 * regions), in place.
 */
function dropSpecks(alpha: Float32Array, W: number, box: Box, seenThrough: Uint8Array, maxArea: number): void {
  const bw = box.x1 - box.x0 + 1, bh = box.y1 - box.y0 + 1;
  const at = (j: number) => (((j / bw) | 0) + box.y0) * W + (j % bw) + box.x0;
  const covered = takeBytes(bw * bh);
  for (let y = 0; y < bh; y++) for (let x = 0, j = y * bw, i = (y + box.y0) * W + box.x0; x < bw; x++, j++, i++) if (alpha[i]! > 0) covered[j] = 1;
  eachComponent(covered, bw, (comp) => {
    if (comp.length >= maxArea) return;
    for (const j of comp) {
      const x = j % bw, y = (j - x) / bw;
      if (x === 0 || y === 0 || x === bw - 1 || y === bh - 1) return;
      // A 4-neighbour seen through (off the box's edge, so inside the photo).
      const i = at(j);
      if (seenThrough[i - 1] || seenThrough[i + 1] || seenThrough[i - W] || seenThrough[i + W]) return;
    }
    for (const j of comp) alpha[at(j)] = 0;
  });
  giveBack(covered);
}

/**
 * The old clothing of the body band that the garment leaves uncovered (`clothing`: not skin, not
 * face or hair), filled by exemplar patches from the background (`background`: nobody's pixels,
 * so a neighbour's dress is never copied onto the target) and the skin around it.
 * Returns the picture and how many pixels were filled.
 */
export function removeUncovered(image: RgbImage, layer: GarmentLayer, band: Uint8Array, clothing: Uint8Array, background: Uint8Array, skinLike: Uint8Array): { image: RgbImage; filled: number; hole: Uint8Array } {
  const W = image.width, H = image.height;
  // Slivers (under 5 pixels across) between the garment's edge and the arms or the hair stay as
  // they are: filled from the background they drew a dotted white outline along the garment.
  const hole = open(uncovered(band, clothing, layer.alpha), W, H, 2);
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

/** The old clothing's contrast (luminance spread over mean) at which its shading is carried at half strength. */
const PATTERN_CONTRAST = 0.3;

/**
 * The photo's light on the garment, a factor on its colour: `crease`, the luminance of a grid
 * cell (1% of the body) over the fold scale's (a plain old garment's creases only), `fold`, the
 * luminance at a fold's scale (3%) over its neighbourhood's (12%; damped on a patterned old
 * garment), and `body`, that neighbourhood's over the whole garment's (the body's shaded side, the
 * shadow below the chest), each `gain` times the photo's ratio, clamped. A gain of 0.6 and neither
 * the body nor the crease term (before stop 35) left a plain dress nearly flat where the photo's
 * dress was lit on one side, shaded on the other and creased across the waist.
 */
const SHADE = { crease: { gain: 0.8, min: 0.8, max: 1.15 }, fold: { gain: 1, min: 0.6, max: 1.2 }, body: { gain: 0.7, min: 0.7, max: 1.15 } };

/** The old clothing's contrast at the fold scale above which its creases are not carried (a steep cut-off at about this value). */
const PLAIN_CONTRAST = 0.12;

/** One of SHADE's terms: 1 plus `gain` (times `damp`) times the photo's relative light `ratio` (0: as bright as its reference), clamped. */
const lightTerm = (t: { gain: number; min: number; max: number }, ratio: number, damp = 1) => Math.min(t.max, Math.max(t.min, 1 + t.gain * damp * ratio));

/**
 * A two-tone print of the old clothing under the garment (the photo's luminance where the layer
 * covers it more than half): Otsu's split of its log-luminance histogram, kept where it is a print
 * and not light and shade on one cloth: the two classes' means at least PRINT.ratio apart and the
 * split explaining at least PRINT.eta of the variance (a plain garment's folds and shaded side
 * make one broad mode, 0.40-0.77 of it on the development photos), the smaller class at least
 * PRINT.share of the pixels.
 * Returns the threshold and each class's mean luminance relative to the pixels' mean, or null.
 */
export function printAlbedos(photo: RgbImage, alpha: Float32Array, box: Box): { threshold: number; dark: number; light: number } | null {
  const W = photo.width, BINS = PRINT_BINS, d = photo.data;
  const hist = new Float64Array(BINS), sum = new Float64Array(BINS);
  const binOf = printBins();
  for (let y = box.y0; y <= box.y1; y++) {
    for (let x = box.x0, i = y * W + box.x0; x <= box.x1; x++, i++) {
      if (alpha[i]! <= 0.5) continue;
      // The luminance in thousandths of a level, an integer: its bin from the table.
      const key = 299 * d[3 * i]! + 587 * d[3 * i + 1]! + 114 * d[3 * i + 2]!;
      const b = binOf[key]!;
      hist[b]! += 1;
      sum[b]! += key / 1000;
    }
  }
  let n = 0, total = 0, sq = 0;
  for (let b = 0; b < BINS; b++) (n += hist[b]!), (total += sum[b]!);
  if (n < 1000) return null;
  // Otsu on the log luminance (bin centres): the split with the largest between-class variance.
  const centre = (b: number) => b + 0.5;
  let mu = 0;
  for (let b = 0; b < BINS; b++) mu += hist[b]! * centre(b);
  mu /= n;
  for (let b = 0; b < BINS; b++) sq += hist[b]! * (centre(b) - mu) ** 2;
  let best = -1, cut = 0, w0 = 0, m0 = 0;
  for (let b = 0; b < BINS - 1; b++) {
    w0 += hist[b]!;
    m0 += hist[b]! * centre(b);
    const w1 = n - w0;
    if (w0 < 1 || w1 < 1) continue;
    const between = (w0 * w1 * (m0 / w0 - (mu * n - m0) / w1) ** 2) / (n * n);
    if (between > best) (best = between), (cut = b + 1);
  }
  let c0 = 0, s0 = 0;
  for (let b = 0; b < cut; b++) (c0 += hist[b]!), (s0 += sum[b]!);
  const c1 = n - c0, s1 = total - s0;
  const eta = sq > 0 ? best / (sq / n) : 0;
  if (Math.min(c0, c1) < PRINT.share * n || eta < PRINT.eta) return null;
  const dark = s0 / c0, light = s1 / c1, mean = total / n;
  if (light < PRINT.ratio * Math.max(dark, 1)) return null;
  return { threshold: Math.expm1((cut / BINS) * Math.log(256)), dark: dark / mean, light: light / mean };
}

/** printAlbedos's histogram: bins of the log luminance, log1p(l) / log(256) in 64 steps. */
const PRINT_BINS = 64;
let PRINT_BIN_OF: Uint8Array | null = null;
/**
 * The bin of every luminance in thousandths of a level (299 r + 587 g + 114 b, 0..255000), made
 * once: a logarithm per pixel was half of printAlbedos's time (~6 ms on a garment's box at 1 MP).
 */
function printBins(): Uint8Array {
  if (PRINT_BIN_OF) return PRINT_BIN_OF;
  const t = new Uint8Array(255_001);
  for (let k = 0; k < t.length; k++) t[k] = Math.min(PRINT_BINS - 1, Math.floor((Math.log1p(k / 1000) / Math.log(256)) * PRINT_BINS));
  return (PRINT_BIN_OF = t);
}

/** printAlbedos's bounds: the classes' mean luminance ratio, Otsu's explained variance, the smaller class's share. */
const PRINT = { ratio: 2.5, eta: 0.8, share: 0.1 };

/** Where the highlights' shoulder starts (levels): above it a level rolls off towards 255 instead of clipping. */
const KNEE = 215;
/**
 * A film's shoulder, as the factor it takes level `v` down by: levels up to KNEE as they are (1),
 * above it compressed smoothly towards 255 (never reached). A white or pale garment's lit folds
 * (light above 1) were clipped to one flat 255, and its shading showed only on the shaded side: a
 * pasted-on print.
 */
function shoulder(v: number): number {
  if (v <= KNEE) return 1;
  const room = 255 - KNEE;
  return (KNEE + room * (1 - Math.exp(-(v - KNEE) / room))) / v;
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
  // Both averages are taken over what the garment covers only (weighted by its alpha: blur(L a) /
  // blur(a)): the background beside the body is no part of its light, and a bright wall or window
  // there lit the garment's outline as a pale rim, a dark one shaded it. Light this smooth needs no
  // full-resolution maps: they are made on a grid of s x s cells (cell means; the blur radii divided
  // by s, r / s >= 3 cells) over the box grown by R, and the shade is read back bilinearly (four
  // full-frame blurs of a 1 MP photo's garment box were a tenth of the whole try-on).
  const s = Math.max(1, Math.floor(r / 3));
  const c = grow(box, R, W, H);
  const gw = Math.ceil((c.x1 - c.x0 + 1) / s), gh = Math.ceil((c.y1 - c.y0 + 1) / s);
  // The old clothing's print: its luminance's two albedos where it is a two-tone print (stripes,
  // dots). Each pixel's light is then judged against its own albedo (ratios of sums: the light at
  // a cell is its luminance over what the print alone would give there), so the print's density
  // does not read as light and shade.
  const print = printAlbedos(photo, alpha, box);
  const la = new Float32Array(gw * gh), aa = new Float32Array(gw * gh), qa = new Float32Array(gw * gh);
  // The albedo model's sums: ma (its luminance, relative to the mean albedo), lm (luminance times
  // it) and mm (its square). One albedo: ma = aa, lm = la, mm = aa.
  const ma = print ? new Float32Array(gw * gh) : aa, lm = print ? new Float32Array(gw * gh) : la, mm = print ? new Float32Array(gw * gh) : aa;
  for (let y = c.y0; y <= c.y1; y++) {
    const row = Math.floor((y - c.y0) / s) * gw;
    for (let x = c.x0, i = y * W + c.x0; x <= c.x1; x++, i++) {
      const j = row + Math.floor((x - c.x0) / s);
      const a = alpha[i]!;
      if (a <= 0) continue;
      const l = 0.299 * photo.data[3 * i]! + 0.587 * photo.data[3 * i + 1]! + 0.114 * photo.data[3 * i + 2]!;
      la[j]! += a * l;
      qa[j]! += a * l * l;
      aa[j]! += a;
      if (print) {
        const m = l < print.threshold ? print.dark : print.light;
        ma[j]! += a * m;
        lm[j]! += a * l * m;
        mm[j]! += a * m * m;
      }
    }
  }
  // Cell means: every cell is s x s pixels but the last row's and column's (cut by the box).
  const cw = (gx: number) => Math.min(s, c.x1 - c.x0 + 1 - gx * s), ch = (gy: number) => Math.min(s, c.y1 - c.y0 + 1 - gy * s);
  const sums = print ? [la, aa, qa, ma, lm, mm] : [la, aa, qa];
  for (let gy = 0, j = 0; gy < gh; gy++) for (let gx = 0; gx < gw; gx++, j++) {
    const n = cw(gx) * ch(gy);
    for (const g of sums) g[j]! /= n;
  }
  const rs = Math.max(1, Math.round(r / s)), Rs = Math.max(1, Math.round(R / s));
  // One box pass of the fine scale (the contrast below reads it), then the second. The light at a
  // scale is the luminance's sum over the albedo model's (ma; the coverage where one albedo).
  const once = (g: Float32Array) => blur(g, gw, gh, rs);
  const la1 = once(la), aa1 = once(aa), ma1 = print ? once(ma) : aa1;
  const fine = once(la1), fineW = once(ma1);
  const mean = blur(la, gw, gh, Rs), meanW = blur(ma, gw, gh, Rs);
  // The old clothing's own contrast at the fold's scale: the luminance's spread about the albedo
  // model lit by the window's light, over its mean (for one albedo its plain spread). A print as
  // wide as a fold that the albedos do not explain (s6-stripes's jumpsuit, black and white bands
  // of ~5% of the body size, before the albedos were told apart) passed the blur and was painted
  // onto the skirt as dark stripes. The shading is damped where that contrast is high,
  // 1 / (1 + (contrast / PATTERN_CONTRAST)^2): a plain garment's folds (contrast ~0.1) keep nearly
  // all of it, unexplained black-and-white bands (~0.6) a tenth.
  const spreadQ = once(qa), lm1 = print ? once(lm) : la1, mm1 = print ? once(mm) : aa1;
  // The body's light beyond a fold's scale: the wide mean over the garment's own mean. Without it
  // the garment was as bright at the body's shaded side and below the chest as in its light, a
  // flat print pasted on (the try-on test's shading figure, the luminance averaged under the garment
  // against the photo's: -0.31 to 0.64 with the folds alone at gain 0.6; 0.50 to 0.97 now).
  let gl = 0, ga = 0;
  for (let j = 0; j < la.length; j++) (gl += la[j]!), (ga += ma[j]!);
  const whole = gl / Math.max(ga, 1e-3);
  const shade = new Float32Array(gw * gh);
  for (let j = 0; j < shade.length; j++) {
    const lFine = fine[j]! / Math.max(fineW[j]!, 1e-3), lMean = mean[j]! / Math.max(meanW[j]!, 1e-3);
    const w = Math.max(aa1[j]!, 1e-3), m = la1[j]! / w;
    // The window's light (rho) times the albedo model, against the luminance: its residual spread.
    const rho = la1[j]! / Math.max(ma1[j]!, 1e-3);
    const residual = (spreadQ[j]! - 2 * rho * lm1[j]! + rho * rho * mm1[j]!) / w;
    const contrast = Math.sqrt(Math.max(0, residual)) / Math.max(m, 8);
    const k = 1 / (1 + (contrast / PATTERN_CONTRAST) ** 2);
    const fold = lightTerm(SHADE.fold, lFine / Math.max(lMean, 8) - 1, k);
    const body = lightTerm(SHADE.body, lMean / Math.max(whole, 8) - 1);
    // Creases: the grid cell's own luminance (its side is a third of the fold scale) over the
    // fold scale's, on a plain old garment only (PLAIN_CONTRAST, a steep cut-off: at the fold's
    // damping the jumpsuit's black and white bands came through a skirt as orange stripes).
    // Judged on the luminance's plain spread: at a cell's scale the albedos' split is not to be
    // trusted (the print's edges, half one albedo and half the other, drew its stripes as creases).
    const spread = print ? Math.sqrt(Math.max(0, spreadQ[j]! / w - m * m)) / Math.max(m, 8) : contrast;
    const plain = 1 / (1 + (spread / PLAIN_CONTRAST) ** 4);
    const crease = aa[j]! > 1e-3 ? lightTerm(SHADE.crease, la[j]! / ma[j]! / Math.max(lFine, 8) - 1, plain) : 1;
    shade[j] = fold * body * crease;
  }
  for (let y = box.y0; y <= box.y1; y++) {
    // Cell centres at (k + 0.5) s: the pixel's position on the grid, clamped to its edge cells.
    const v = Math.min(gh - 1, Math.max(0, (y - c.y0 + 0.5) / s - 0.5));
    const v0 = Math.min(gh - 2, Math.floor(v)), fv = gh > 1 ? v - v0 : 0;
    for (let x = box.x0; x <= box.x1; x++) {
      const i = y * W + x;
      const a = alpha[i]!;
      if (a <= 0) continue;
      const u = Math.min(gw - 1, Math.max(0, (x - c.x0 + 0.5) / s - 0.5));
      const u0 = Math.min(gw - 2, Math.floor(u)), fu = gw > 1 ? u - u0 : 0;
      const j = Math.max(0, v0) * gw + Math.max(0, u0);
      const jr = gw > 1 ? j + 1 : j, jd = gh > 1 ? gw : 0;
      const sh = (shade[j]! * (1 - fu) + shade[jr]! * fu) * (1 - fv) + (shade[j + jd]! * (1 - fu) + shade[jr + jd]! * fu) * fv;
      // The shoulder on the brightest channel, the same factor on all three: the hue and the
      // channels' ratios are kept (per channel, a yellow's red rolled off and its hue moved).
      const top = Math.max(rgb[3 * i]!, rgb[3 * i + 1]!, rgb[3 * i + 2]!) * 255 * sh;
      const f = shoulder(top) * 255 * sh;
      for (let k = 0; k < 3; k++) data[3 * i + k] = Math.round(data[3 * i + k]! * (1 - a) + rgb[3 * i + k]! * f * a);
    }
  }
  return { data, width: W, height: H };
}

/**
 * A try-on worked on at a smaller scale put back at the photo's resolution (`full`, the photo's
 * pixels of what `work` is): the photo with its old clothing's fill (`under`, the work picture
 * before the garment) scaled up where it changed, and over it the garment: its colour (`result`
 * where it is solid, carried past its edge by pull-push so the outline takes no background)
 * scaled up, with its coverage (`alpha`) scaled up and its ramp steepened by the scale, so the
 * edge is as wide in the photo's pixels as it was drawn in the work picture's (scaled up with the
 * picture it was 3.6 px at 0.72 of the scale, 2.5 at the work size). Returns the picture and the
 * garment mask (0..255) at `full`'s size.
 */
export async function garmentAtScale(full: RgbImage, work: RgbImage, under: RgbImage, result: RgbImage, alpha: Float32Array): Promise<{ data: Uint8Array; mask: Uint8Array }> {
  const { width: w, height: h } = work;
  const { width: W, height: H } = full;
  const base = await upscaleChanges(full, work, under, 0, 1);
  const mask = new Uint8Array(W * H);
  // The garment's box in the work picture: only its part of the photo is scaled up and walked.
  let x0 = w, x1 = -1, y0 = h, y1 = -1;
  const val = new Float32Array(3 * w * h), wt = new Float32Array(w * h), a8 = new Uint8Array(w * h);
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i++) {
      if (alpha[i]! <= 0) continue;
      a8[i] = Math.round(alpha[i]! * 255);
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      y1 = y;
      if (alpha[i]! < SOLID) continue;
      wt[i] = 1;
      for (let c = 0; c < 3; c++) val[3 * i + c] = result.data[3 * i + c]!;
    }
  }
  if (x1 < 0) return { data: base, mask };
  pullPush(w, h, val, wt);
  const colour = new Uint8Array(3 * w * h);
  for (let k = 0; k < colour.length; k++) colour[k] = Math.max(0, Math.min(255, Math.round(val[k]!)));
  const box = boxAtScale({ x0, y0, x1, y1 }, w, h, W, H);
  const bx0 = box.x, by0 = box.y;
  const [up, A] = await Promise.all([resizedBox(colour, w, h, 3, W, H, box, 'cubic'), resizedBox(a8, w, h, 1, W, H, box, 'linear')]);
  const s = Math.max(W / w, H / h);
  for (let y = 0; y < box.height; y++) {
    for (let x = 0, j = y * box.width, i = (y + by0) * W + bx0; x < box.width; x++, j++, i++) {
      if (!A[j]) continue;
      const a = Math.min(1, Math.max(0, (A[j]! / 255 - 0.5) * s + 0.5));
      mask[i] = Math.round(a * 255);
      if (a <= 0) continue;
      for (let c = 0; c < 3; c++) base[3 * i + c] = Math.round(base[3 * i + c]! * (1 - a) + up[3 * j + c]! * a);
    }
  }
  return { data: base, mask };
}

/** Coverage from which a garment pixel's colour is its own (garmentAtScale): below it the edge's blend with what lies under it. */
const SOLID = 0.98;
