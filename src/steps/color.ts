// Step: colour in CIE L*a*b* (D65): conversions, and hair colours as targets: recolouring keeps the rendered hair's own light and
// strand texture as lightness offsets around the target's L*, with the target's a*b* chroma.
import type { HairColor } from '../domain/job.ts';

/**
 * Target colour of each spec colour, as sRGB, and the lightness swing the texture may use: wide
 * enough that strands read as strands (dark gaps, lit fibres), as real hair does at this scale;
 * short hair's shadows go deeper: grey and white towards the dark of unpigmented hair (`depth`),
 * the dyes pink, blue, green and purple darker in their own hue (`dyeShadow`, levels of L*; see
 * shadeRamp; purple since algorithm 67, a little paler to leave room for it: read as hair over the
 * twelve styles on s6-left, s5-top and s6-centre-right 0.41 -> 0.51; the paler, greyer purples and
 * greens that read better, 0.62 and +0.08, fell out of their bands' chroma and lightness on the
 * astronaut's and the development photos' crowns).
 * The dyes' chroma is that of dyed hair, not of paint (algorithm 53): pink 36, blue 41, green 43,
 * purple 41 (they were 45-68) and white a little warm (b* 8, as unpigmented hair yellows): at the
 * full chroma a dyed style read as a costume wig and the face parser labelled it a hat: over the
 * twelve styles on s6-left and s5-top, the share of the solid new hair it labels hair, averaged
 * per colour, purple 0.11 -> 0.35, pink 0.41 -> 0.50, blue 0.43 -> 0.48, green 0.39 -> 0.42, white
 * 0.46 -> 0.54 (the eight styles other than Short Curly, Braided Crown, Bombshell Curls and
 * Lowpoly, whose relief reads as a hat in any dye: 0.53 -> 0.68).
 * Each stays in its colour's band on the development photos' crowns (the least: green's chroma
 * 24 on a Mohawk, from 22). Red likewise (algorithm 56): C* 61.5 -> 49, an auburn, not a
 * fire-engine red (read as hair 0.70 -> 0.77 over the same survey; its crowns' chroma 31.5-40,
 * band from 30); and grey a little warm as white (b* -1 -> 4, algorithm 57: 0.67 -> 0.72).
 */
export const HAIR_COLOR_TARGETS: Readonly<Record<HairColor, { srgb: [number, number, number]; swing: number; depth?: number; dyeShadow?: number }>> = {
  black: { srgb: [28, 24, 23], swing: 12 },
  brown: { srgb: [96, 60, 38], swing: 20 },
  blonde: { srgb: [214, 180, 112], swing: 22 },
  red: { srgb: [156, 64, 42], swing: 19 },
  white: { srgb: [236, 228, 216], swing: 12, depth: 0.5 },
  grey: { srgb: [154, 150, 143], swing: 18, depth: 0.5 },
  pink: { srgb: [219, 136, 168], swing: 17, dyeShadow: 25 },
  blue: { srgb: [78, 93, 161], swing: 19, dyeShadow: 25 },
  green: { srgb: [53, 139, 88], swing: 19, dyeShadow: 25 },
  purple: { srgb: [112, 78, 146], swing: 19, dyeShadow: 25 },
};

const toLinear = (c: number) => {
  const v = c / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
};
// sRGB bytes to linear by table (the same values toLinear gives): srgbToLab runs per pixel over
// large regions (hair colour statistics at 1 MP), where the power function dominated it.
const LINEAR = Float64Array.from({ length: 256 }, (_, c) => toLinear(c));
const linear = (c: number) => (c >= 0 && c <= 255 && (c | 0) === c ? LINEAR[c]! : toLinear(c));
const toGamma = (v: number) => {
  const c = v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055;
  return Math.round(Math.min(1, Math.max(0, c)) * 255);
};
const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (841 / 108) * t + 4 / 29);
const fInv = (t: number) => (t > 6 / 29 ? t * t * t : (108 / 841) * (t - 4 / 29));
const Xn = 0.95047;
const Zn = 1.08883;

export function srgbToLab(r: number, g: number, b: number): [number, number, number] {
  const R = linear(r), G = linear(g), B = linear(b);
  const X = (0.4124 * R + 0.3576 * G + 0.1805 * B) / Xn;
  const Y = 0.2126 * R + 0.7152 * G + 0.0722 * B;
  const Z = (0.0193 * R + 0.1192 * G + 0.9505 * B) / Zn;
  const fx = f(X), fy = f(Y), fz = f(Z);
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

// The memo: direct-mapped, 2^17 slots keyed by the colour (0xRRGGBB), in typed arrays. A Map's
// lookups were most of the hair search over a 1 MP photo's person pixels and of the try-on's skin
// test; two colours that share a slot evict each other, which only costs a recomputation.
const LAB_SLOTS = 1 << 17;
const labKeys = new Int32Array(LAB_SLOTS).fill(-1);
const labSlots: Array<[number, number, number]> = new Array(LAB_SLOTS);
/**
 * srgbToLab memoized: a product photo has few distinct colours and a body band a few tens of
 * thousands, each converted once (pow and cbrt per pixel were most of the try-on's garment stage).
 * The same values as srgbToLab. The array returned is shared: read it, never write it.
 */
export function labOf(r: number, g: number, b: number): [number, number, number] {
  const key = (r << 16) | (g << 8) | b;
  const slot = Math.imul(key, 0x9e3779b1) >>> 15;
  if (labKeys[slot] !== key) {
    labKeys[slot] = key;
    labSlots[slot] = srgbToLab(r, g, b);
  }
  return labSlots[slot]!;
}

/** labOf of pixel i of interleaved RGB `data`. */
export const labAt = (data: Uint8Array, i: number): [number, number, number] => labOf(data[3 * i]!, data[3 * i + 1]!, data[3 * i + 2]!);

export function labToSrgb(L: number, a: number, b: number): [number, number, number] {
  const fy = (L + 16) / 116;
  const X = Xn * fInv(fy + a / 500);
  const Y = fInv(fy);
  const Z = Zn * fInv(fy - b / 200);
  const R = 3.2406 * X - 1.5372 * Y - 0.4986 * Z;
  const G = -0.9689 * X + 1.8758 * Y + 0.0415 * Z;
  const B = 0.0557 * X - 0.204 * Y + 1.057 * Z;
  return [toGamma(R), toGamma(G), toGamma(B)];
}

/** Lightness and hue angle (degrees, 0..360) and chroma of an sRGB colour. */
export function lch(r: number, g: number, b: number): { L: number; C: number; h: number } {
  const [L, A, B] = srgbToLab(r, g, b);
  const h = ((Math.atan2(B, A) * 180) / Math.PI + 360) % 360;
  return { L, C: Math.hypot(A, B), h };
}

/**
 * The colour grey and white short hair's shadows fall towards (sRGB): unpigmented hair is
 * translucent, and between its steep lit strands the gaps and the strands below are dark, as a
 * salt-and-pepper crop's are. Within the ramp's swing alone white and grey short hair was an even
 * pale mass that the face parser read as a knitted cap (a grey Buzz Cut on s6-left: 2% hair, with
 * the deeper shadows 95%). Not on long styles: their lengths lie mostly on the shade's dark side
 * (the mass turns from the light), and a white Long Wave's median went to L 55, grey.
 */
const UNPIGMENTED_SHADOW = [38, 30, 26] as const;

/**
 * A lookup from shade (-1..1, 256 steps) to sRGB for one colour: the texture's lightness offsets
 * around the target, chroma eased off in the deepest shadows and brightest highlights; for a
 * colour with a `depth` (grey, white) and `deep` (a short style), the shadows (shade below 0) mixed
 * towards UNPIGMENTED_SHADOW, by up to `depth` at shade -0.5 and below (the lit half is the
 * target's); for a dye with a `dyeShadow` (pink, blue, green, purple) and `deep`, the shadows' lightness
 * lowered by up to `dyeShadow` at shade -0.5 and below, in the same hue. The face parser read
 * these dyes' short styles as a hat within the swing alone (s6-left, s5-right and s6-right, Buzz
 * Cut, Short Hair and Crew Cut in the three dyes: 11% of the solid pixels labelled hair on
 * average; 44% with the deeper shadows; purple, dark already, gained nothing then, and has it
 * since algorithm 67, paler). Optionally
 * toned: hue turned by `dh` degrees, chroma scaled by `kc`, lightness moved by `dL` (the ends of
 * the per-strand colour variation: real hair mixes paler, cooler strands with warmer, richer ones).
 */
export function shadeRamp(color: HairColor, dh = 0, kc = 1, dL = 0, deep = true): Uint8Array {
  const t = HAIR_COLOR_TARGETS[color];
  const [L0, a0, b0] = srgbToLab(...t.srgb);
  const c = Math.cos((dh * Math.PI) / 180), s = Math.sin((dh * Math.PI) / 180);
  const a1 = (a0 * c - b0 * s) * kc, b1 = (a0 * s + b0 * c) * kc;
  const ramp = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const sh = i / 127.5 - 1;
    const lit = Math.min(98, Math.max(2, L0 + dL + sh * t.swing));
    // How far into the deeper shadows (0 on the lit half and for a long style, 1 from shade -0.5).
    const under = deep && sh < 0 ? Math.min(1, -sh / 0.5) : 0;
    // A dye's deeper shadow keeps the hue, its chroma falling with the cube of the lightness lost
    // (dark dyed hair is near black between its strands, not a dark saturated paint).
    const drop = (t.dyeShadow ?? 0) * under;
    const L = Math.max(2, lit - drop);
    const k = (1 - 0.25 * Math.abs(sh) ** 2) * (drop ? (L / lit) ** 3 : 1);
    const rgb = labToSrgb(L, a1 * k, b1 * k);
    const w = (t.depth ?? 0) * under;
    for (let ch = 0; ch < 3; ch++) ramp[3 * i + ch] = w ? Math.round(rgb[ch]! * (1 - w) + UNPIGMENTED_SHADOW[ch]! * w) : rgb[ch]!;
  }
  return ramp;
}

/**
 * Whether CIE Lab colour `lab` is skin of the face whose colour is `ref` (Lab): chroma within 16,
 * lightness within `lightness` (30: lit and shaded skin alike). Clothing of another colour, a wall,
 * hair fail. (Both pipelines' test of a person's own skin against the face's colour.)
 */
export function skinColoured(lab: readonly number[], ref: readonly number[], lightness = 30): boolean {
  const da = lab[1]! - ref[1]!, db = lab[2]! - ref[2]!;
  return da * da + db * db < 16 * 16 && Math.abs(lab[0]! - ref[0]!) < lightness;
}

/**
 * Whether an sRGB colour lies in the broad YCbCr box where skin of every tone falls (Chai and Ngan's
 * chroma bounds, Cb 77-127 and Cr 133-173, widened a little for warm and dim photos; very dark
 * pixels, where chroma says nothing, are not skin). A coarse test for telling a face from clothes
 * or background, not a segmentation.
 */
export function skinLike(r: number, g: number, b: number): boolean {
  const y = 0.299 * r + 0.587 * g + 0.114 * b;
  const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
  const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
  return y > 30 && cb >= 77 && cb <= 135 && cr >= 133 && cr <= 180;
}

/**
 * The k-th smallest value of `a` (reorders it): the value a sorted copy holds at k, in linear
 * time (Hoare quickselect; sorting the hair's tens of thousands of samples took ~15 ms a channel).
 */
export function kthSmallest(a: Float64Array, k: number): number {
  let lo = 0, hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo, j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

/**
 * The median CIE Lab of colour samples (one array a channel) and their spread: the median distance
 * to it. The arrays are left as they were.
 */
export function labMedians(Ls: Float64Array, As: Float64Array, Bs: Float64Array): { ref: [number, number, number]; spread: number } {
  const n = Ls.length;
  // Medians by selection: the element a sorted copy holds at n >> 1.
  const ref: [number, number, number] = [kthSmallest(Ls.slice(), n >> 1), kthSmallest(As.slice(), n >> 1), kthSmallest(Bs.slice(), n >> 1)];
  const dist = new Float64Array(n);
  for (let k = 0; k < n; k++) dist[k] = Math.hypot(Ls[k]! - ref[0], As[k]! - ref[1], Bs[k]! - ref[2]);
  return { ref, spread: kthSmallest(dist, n >> 1) };
}

/** CIE Lab samples gathered pixel by pixel (one list a channel), for labMedians. */
export class LabSamples {
  private readonly L: number[] = [];
  private readonly A: number[] = [];
  private readonly B: number[] = [];
  get count(): number {
    return this.L.length;
  }
  add(data: Uint8Array, i: number): void {
    const lab = labAt(data, i);
    this.L.push(lab[0]), this.A.push(lab[1]), this.B.push(lab[2]);
  }
  medians(): { ref: [number, number, number]; spread: number } {
    return labMedians(Float64Array.from(this.L), Float64Array.from(this.A), Float64Array.from(this.B));
  }
}
