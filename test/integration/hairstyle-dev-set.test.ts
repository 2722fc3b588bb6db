// The hairstyle version on the development photos (scripts/lib/dev-photos.ts: every person of
// face-api's sample5 and sample6, cropped around them with their neighbours in frame, plus rotated,
// mirrored and rescaled variants, and a footballer from opencv-doc's samples), through the real runner and graphs, PNG output (no re-encoding
// noise). Each photo gets one short and one long style; styles and colours rotate over the set.
// Everything is judged on INDEPENDENT references computed on the input (and the output):
//   - the face-landmarks version (its own detector + FaceMesh): the target's face oval below the
//     brows, the other people's face ovals, the target's head frame (eye line, face width);
//   - the face-parsing version (BiSeNet on its own crop): old hair, and hair left on the output;
//   - the person-segmentation-meet version: where the background is (the pipeline uses Selfie);
// never the pipeline's own masks or targets. Issue 11's points:
//   1 other people's faces and the background away from the target (beyond any style's reach,
//     not the target's own old hair): MAD <= 2 levels
//   2 rotated variants (roll -39 to +43 degrees) run like the rest; beyond 45 degrees: refused by name
//   3 face below the brows: MAD <= 3; landmarks there move less than 2% of the face width (median)
//   4 short styles: of the input's hair near the face and below the nose (not over the face
//     below the brows, which point 3 keeps), < 15% is still hair
//   5 soft edges: the new hair's alpha has a transition band wider than 1.2 px on average
//   6 colour: the median CIE LCh on the crown (a patch above the reference forehead) in the colour's band
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { HAIR_COLORS, type HairColor, type Hairstyle } from '../../src/domain/job.ts';
import { decodeImage, type RgbImage } from '../../src/imaging/image.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { PIPELINES } from '../../src/pipelines/index.ts';
import { labAt, lch, skinColoured, skinLike } from '../../src/steps/color.ts';
import { CLASS } from '../../src/steps/face-parsing.ts';
import { targetScore } from '../../src/steps/target-face.ts';
import { HAIR_OTHER_PHOTOS, HAIR_PHOTOS, HAIR_SMALL_VARIANTS, HAIR_VARIANTS, facePhoto, hairPhoto, type DevPhoto } from '../helpers/dev-photos.ts';
import { belowBrows, bodyReference, referenceFaces, referenceParsing, releaseReferences, type ReferenceFace } from '../helpers/references.ts';
import { ovalMask } from '../../src/steps/face-mesh.ts';
import { dilate } from '../../src/imaging/morphology.ts';
import { polygonMask } from '../../src/imaging/polygon.ts';
import { blurSigma, boxBlur } from '../../src/imaging/blur.ts';
import sharp from 'sharp';
import { modelThreadGraphs } from '../../src/pipelines/index.ts';

const registry = loadRegistry(path.resolve('models'));
const version = registry.byName(process.env.HAIR_VERSION ?? 'hairstyle-bisenet')!;
const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: () => {}, modelThread: modelThreadGraphs(registry) });
afterAll(async () => {
  await sessions.releaseAll();
  await releaseReferences();
});

const SHORT: Hairstyle[] = ['Short Hair', 'Buzz Cut', 'Crew Cut', 'Bowl Cut', 'Mohawk', 'Short Curly', 'Braided Crown'];
const LONG: Hairstyle[] = ['Long Wave', 'Long Layers', 'Bombshell Curls', 'Dreadlocks', 'Lowpoly'];
/** The styles that show the forehead up to the natural hairline, above FaceMesh's forehead landmark. */
const SHOWS_HAIRLINE: Hairstyle[] = ['Buzz Cut', 'Crew Cut', 'Braided Crown', 'Mohawk'];

/** Perceptual bands (CIE LCh of the median new-hair pixel) a colour must fall in. */
const BANDS: Record<HairColor, { L: [number, number]; h?: [number, number]; C?: [number, number] }> = {
  black: { L: [0, 30] },
  brown: { L: [15, 55], h: [30, 85], C: [8, 80] },
  blonde: { L: [50, 92], h: [55, 100], C: [15, 80] },
  red: { L: [22, 60], h: [15, 60], C: [30, 100] },
  white: { L: [72, 100], C: [0, 15] },
  grey: { L: [38, 80], C: [0, 12] },
  pink: { L: [45, 85], h: [325, 375], C: [25, 100] },
  blue: { L: [20, 60], h: [250, 310], C: [25, 100] },
  green: { L: [30, 70], h: [125, 180], C: [22, 100] },
  purple: { L: [18, 56], h: [285, 340], C: [25, 100] },
};

interface Run {
  photo: string;
  style: Hairstyle;
  short: boolean;
  color: HairColor;
  /** Issue 11's figures for the closing note and the README. */
  figures: Record<string, number>;
}

async function runHairstyle(bytes: Uint8Array, style: Hairstyle, color: HairColor, v = version) {
  return (await runPictures(bytes, style, color, 1, v))[0]!;
}

/** The pipeline's `outputs` pictures (PNG) with their hair masks (0..255). */
async function runPictures(bytes: Uint8Array, style: Hairstyle, color: HairColor, outputs: number, v = version) {
  const ctx = { params: v.manifest.params, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 };
  const input = { image_files: ['http://dev-set/photo.jpg'], hairstyle: style, hair_color: color, num_outputs: outputs, output_format: 'png' };
  const r = await PIPELINES.hairstyle!.run(ctx, input, { image_files: [bytes] });
  return Promise.all(
    Array.from({ length: outputs }, async (_, k) => {
      const pic = r.files.find((f) => f.name === `result-${k + 1}.png`)!;
      const alpha = await decodeImage(r.files.find((f) => f.name === `hair-mask-${k + 1}.png`)!.data, { maxPixels: 4e7 });
      return { out: await decodeImage(pic.data, { maxPixels: 4e7 }), pngBytes: pic.data, alpha: Uint8Array.from({ length: alpha.width * alpha.height }, (_, i) => alpha.data[3 * i]!) };
    }),
  );
}

/** Mean absolute difference (levels, over RGB) where mask is 1; NaN on an empty mask. */
function mad(a: RgbImage, b: RgbImage, mask: Uint8Array): number {
  let d = 0, n = 0;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    for (let k = 0; k < 3; k++) d += Math.abs(a.data[3 * i + k]! - b.data[3 * i + k]!);
    n += 3;
  }
  return n ? d / n : NaN;
}

/** A box x0, y0, x1, y1 (end exclusive). */
type Box4 = [number, number, number, number];

/** The blur a box's edges show (imaging/blur.ts blurSigma on its CIE lightness, px). */
function sigmaOf(img: RgbImage, [x0, y0, x1, y1]: Box4): number {
  const w = x1 - x0, h = y1 - y0;
  const grey = new Float32Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) grey[y * w + x] = lch(...([0, 1, 2].map((c) => img.data[3 * ((y + y0) * img.width + x + x0) + c]!) as [number, number, number])).L;
  return blurSigma(grey, w, h, new Uint8Array(w * h).fill(1));
}

/** The median CIE Lab over a box. */
function medianLab(img: RgbImage, [x0, y0, x1, y1]: Box4): number[] {
  const ch: number[][] = [[], [], []];
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) labAt(img.data, y * img.width + x).forEach((v, k) => ch[k]!.push(v));
  return ch.map((c) => c.sort((a, b) => a - b)[c.length >> 1]!);
}

/** The q-quantile over a box of a picture's fine detail: |luma less its 5x5 mean| (Rec. 601 luma, 0..255). */
function detailPercentile(img: RgbImage, [x0, y0, x1, y1]: Box4, q: number): number {
  const { width: W, data } = img;
  const luma = (x: number, y: number) => 0.299 * data[3 * (y * W + x)]! + 0.587 * data[3 * (y * W + x) + 1]! + 0.114 * data[3 * (y * W + x) + 2]!;
  const d: number[] = [];
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      let sum = 0;
      for (let dy = -2; dy <= 2; dy++) for (let dx = -2; dx <= 2; dx++) sum += luma(x + dx, y + dy);
      d.push(Math.abs(luma(x, y) - sum / 25));
    }
  }
  return d.sort((a, b) => a - b)[Math.floor(q * d.length)]!;
}

const pixelChanged = (a: RgbImage, b: RgbImage, i: number) => a.data[3 * i] !== b.data[3 * i] || a.data[3 * i + 1] !== b.data[3 * i + 1] || a.data[3 * i + 2] !== b.data[3 * i + 2];

/** The reference head frame: origin between the eyes, u along the eye line, unit = face width. */
function referenceFrame(lm: ReferenceFace['landmarks']) {
  const mid = (ids: number[]) => [ids.reduce((s, i) => s + lm[i]![0], 0) / ids.length, ids.reduce((s, i) => s + lm[i]![1], 0) / ids.length] as const;
  const [rx, ry] = mid([33, 133]);
  const [lx, ly] = mid([362, 263]);
  const d = Math.hypot(lx - rx, ly - ry);
  const ux = (lx - rx) / d, uy = (ly - ry) / d;
  const scale = Math.hypot(lm[454]![0] - lm[234]![0], lm[454]![1] - lm[234]![1], lm[454]![2] - lm[234]![2]);
  const ox = (rx + lx) / 2, oy = (ry + ly) / 2;
  return { scale, uv: (x: number, y: number) => [((x - ox) * ux + (y - oy) * uy) / scale, (-(x - ox) * uy + (y - oy) * ux) / scale] as const };
}

/**
 * Point 4's count: the input's hair (reference parser) near the face (within 1.2 face widths of
 * the eyes' midpoint) and below the nose, off the face below the brows (point 3 keeps hair lying
 * over it) and off what `skip` excludes; `still`: of those, labelled hair on the output.
 */
function longHairLeft(labelsIn: Uint8Array, labelsOut: Uint8Array, face: Uint8Array, frame: ReturnType<typeof referenceFrame>, noseV: number, W: number, H: number, skip?: (x: number, y: number) => boolean) {
  let was = 0, still = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      if (labelsIn[i] !== CLASS.hair || face[i]) continue;
      const [u, v] = frame.uv(x + 0.5, y + 0.5);
      if (v < noseV || Math.hypot(u, v) > 1.2 || skip?.(x + 0.5, y + 0.5)) continue;
      was++;
      if (labelsOut[i] === CLASS.hair) still++;
    }
  }
  return { was, still };
}

/**
 * Whether a pixel lies nearer another reference face than the target's (by face box centres, in
 * each face's widths): a neighbour's hair is not the target's to remove (point 1 keeps it).
 */
function nearerAnotherFace(me: ReferenceFace, others: ReferenceFace[]): (x: number, y: number) => boolean {
  const centre = (f: ReferenceFace) => [f.box.x + f.box.width / 2, f.box.y + f.box.height / 2, f.box.width] as const;
  const mine = centre(me), theirs = others.map(centre);
  return (x, y) => {
    const d = Math.hypot(x - mine[0], y - mine[1]) / mine[2];
    return theirs.some(([cx, cy, w]) => Math.hypot(x - cx, y - cy) / w < d);
  };
}

const target = (faces: ReferenceFace[], W: number, H: number) =>
  [...faces].sort((a, b) => targetScore({ box: b.box } as never, W, H) - targetScore({ box: a.box } as never, W, H))[0]!;

/**
 * Point 5's count: of the new hair's solid pixels (alpha >= 200) near the head (within 1.1 face
 * widths of a point 0.35 above the eyes), off the face, how many (`solid`) and the share the face
 * parser labels hair on the output (`labels`).
 */
function readsAsHair(alpha: Uint8Array, face: Uint8Array, frame: ReturnType<typeof referenceFrame>, labels: Uint8Array, W: number, H: number) {
  let solid = 0, asHair = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      if (alpha[i]! < 200 || face[i]) continue;
      const [u, v] = frame.uv(x + 0.5, y + 0.5);
      if (Math.hypot(u, v + 0.35) > 1.1) continue;
      solid++;
      if (labels[i] === CLASS.hair) asHair++;
    }
  }
  return { solid, share: solid ? asHair / solid : 0 };
}

/** An ear the parser sees: 5 thousandths of the face width squared (a whole one is about 25-40). */
const EAR_SEEN = 5;

/**
 * Ears the face parser sees beside the face (labels l_ear, r_ear), per side of the reference frame
 * (image-left, image-right), in thousandths of the face width squared: beside the face's widest
 * point, from above the eyes to below the nose, where long hair hides them and a short style
 * shows them.
 */
function earsSeen(labels: Uint8Array, frame: ReturnType<typeof referenceFrame>, W: number, H: number): [number, number] {
  const seen = [0, 0];
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const l = labels[y * W + x];
      if (l !== CLASS.l_ear && l !== CLASS.r_ear) continue;
      const [u, v] = frame.uv(x + 0.5, y + 0.5);
      if (Math.abs(u) < 0.3 || Math.abs(u) > 0.9 || v < -0.3 || v > 0.5) continue;
      seen[u < 0 ? 0 : 1]! += 1;
    }
  }
  const unit = 1000 / (frame.scale * frame.scale);
  return [seen[0]! * unit, seen[1]! * unit];
}

/**
 * A development photo as the hand-checked tests read it: its bytes and decoded input, the
 * reference target face (face-landmarks version) and its frame, and `v` of a landmark in it.
 */
async function onReferences(name: string) {
  const ph = await hairPhoto(name);
  const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
  const me = target((await referenceFaces(ph.bytes)).faces, input.width, input.height);
  const frame = referenceFrame(me.landmarks);
  const vOf = (k: number) => frame.uv(me.landmarks[k]![0], me.landmarks[k]![1])[1];
  return { ph, input, W: input.width, H: input.height, me, frame, vOf };
}

/**
 * The least chroma of the skin a short style's removal shows, as a share of the face's (CIE Lab,
 * medians; see the 'fillSkin' check): the development photos' fills measure 0.69-1.48 (algorithm
 * 51); a neck toned by a necklace's grey glint or a top's colour measured 0.59-0.62 before it
 * (s5-right, s6-centre-left rotated -35 degrees), one filled with the wall 0.11-0.23 (KNOWN).
 * Since algorithm 55 (the tone taken clear of the hair's shaded rim) they measure 0.77-1.49
 * (s5-right 0.68 -> 0.80): the bound is 0.74.
 */
const FILL_CHROMA = 0.74;

/**
 * Criteria a development photo still misses, by `photo|check`, with why (asserted to fail, so a
 * fix must remove its entry). Listed in the README and the closing note.
 */
const KNOWN: Record<string, string> = {
  // (s6-right mirrored, Braided Crown pink: judged on someone else's hair, the neighbour's face cut
  // by the photo's edge and not found by the reference FaceMesh, her hair beside the target's cheek
  // counted as the target's; the parser's labels on it flicker with changes elsewhere in the photo,
  // 0.12 to 0.16 across stop 23's commits, 0.097 with algorithm 65's flatter braid.)
  // s5-back's long hair hanging behind her shoulder on the image's left stays on the picture
  // (README); the parser's count of it flickers with changes elsewhere in the photo: 0.192 before
  // stop 42's skin fill, 0.138 after it, 0.194 with algorithm 53's paler pink on her Bowl Cut.
  's5-back|longHair': "Bowl Cut, pink: her long strands hanging behind her shoulder on the image's left stay (the parser's count of them flickers around the bound: 0.14-0.20)",
  // The body below the chin was modelled upright in the photo whatever the head's roll, and on the
  // turned photos her neck and shoulder under the hair were filled with the wall (0.23 and 0.11).
  // Since stop 42 the model turns with a head rolled past 20 degrees: her neck and chest are skin,
  // but the hair between her cheek and her shoulder is the wall (and on -15 the red top continued
  // up her shoulder), which the parser labels neck (0.16 and 0.11); s6-centre-left rotated -35's
  // shoulder under the hair is skin now where it was the blinds, of the face's pale tone, which
  // reads greyer than the face (0.97 -> 0.62).
  's5-right-rot-15|fillSkin': 'Mohawk, blonde: the hair between her cheek and her shoulder is filled with the white wall and her red top continued up the shoulder, which the parser labels neck',
  's5-right-rot50|fillSkin': 'Short Curly, white: the hair beside her cheek is filled with the grey-white wall, which the parser labels neck',
  's6-centre-left-rot-35|fillSkin': "Bowl Cut, black: her shoulder under the hair is filled as skin (the blinds before stop 42) in the face's pale tone, greyer than her face by the parser's skin",
  // New hair the face parser does not read as hair (the 'flat cap or plastic wig'): short
  // domes, braids, ropes, facets and a dyed colour; the long straight and wavy styles read as hair.
  's5-front|readsAsHair-long': "Lowpoly, purple: Lowpoly's facets read as a hat to the face parser (the style is a stylisation by name; in purple 0.00-0.02 still with algorithm 66's strands under them, which took its 8 colours on 3 photos from 0.02 to 0.34)",
  's5-front|readsAsHair-short': "Mohawk, green: the green strip reads as a hat or background to the face parser on this dark photo (0.00; until algorithm 70 the shaved sides counted as solid hair too, 10-16%)",
  // (Bombshell Curls in grey read as a hat or cloth on s5-right, rotated 50 and at 0.6 scale until
  // algorithm 65's looser curls with lighter creases: 0.78, 0.71, 0.90.)
  // (s5-right rotated -15, Mohawk blonde: 29% read as hair while the hair mask counted the shaved
  // sides, scalp tinted by stubble, as solid hair; 0.61 since algorithm 70 counts them at the
  // stubble's hair share.)
  // (s5-right rotated -15: her hair between her cheek and her neighbour's shoulder read as hair
  // left, 0.13-0.18, until stop 42 turned the body model with her head: 0.016.)
  's5-right-rot50|readsAsHair-short': "Short Curly, white: the short curly dome reads as a knitted cap to the face parser",
  's5-top-x1.6|readsAsHair-long': "Lowpoly, purple: Lowpoly's facets read as a hat to the face parser (the style is a stylisation by name; in purple 0.00-0.02 still with algorithm 66's strands under them, which took its 8 colours on 3 photos from 0.02 to 0.34)",
  's5-top-x1.6|readsAsHair-short': "Short Hair, green: dyed (green) short hair reads as a hat to the face parser (0.23 at the paint-like chroma before algorithm 53, 0.48 with it)",
  's6-centre-left-rot15|readsAsHair-long': "Lowpoly, purple: Lowpoly's facets read as a hat to the face parser (the style is a stylisation by name; in purple 0.00-0.02 still with algorithm 66's strands under them, which took its 8 colours on 3 photos from 0.02 to 0.34)",
  // (s6-left's pink Buzz Cut read as a cap, 0.09-0.40, until algorithm 55's skin tone for her
  // filled forehead: 0.51.)
  // (s6-left's and s6-right mirrored's blue Dreadlocks read as a hat, 0.16-0.46 and 0-0.60, until
  // algorithm 69's background fill took the tone of the wall beside it: 0.74 and 0.51.)
  's6-right-mirror|readsAsHair-short': "Braided Crown, pink: the braided crown reads as a beret to the face parser",
  // The crops at 0.6 scale (faces ~100 px wide, as on a whole group photo of ~1 MP; stop 45): the
  // geometry's checks hold on all three (other people, far background, face, landmarks); the look's
  // fail as on the full-size photos, by style and colour.
  's5-left-x0.6|readsAsHair-short': 'Bowl Cut, white: the white bowl reads as a hat to the face parser (0.26) at this size',
  's6-right-x0.6|longHair': "Mohawk, pink: as on s6-right mirrored, the reference FaceMesh finds one face in this crop (the neighbour's, cut by its edge, is not found), and her hair beside the target's cheek counts as the target's (0.22)",
  's6-right-x0.6|readsAsHair-long': 'Dreadlocks, blue: blue locks read as a hat to the face parser (0.09), as they did on s6-left and s6-right mirrored until algorithm 69',
  // Ears the old hair hid, drawn since algorithm 45 (ears.ts), that the parser does not see: on these
  // heads, turned 20-25 degrees, the near ear lies behind the lock kept over the cheek (point 3
  // keeps the face below the brows, hair on it too) and the far one is hidden by the turn.
  's5-right|ears': 'Crew Cut, white: the near ear is drawn behind the strand kept over her cheek; the far one is hidden by the turn (yaw -25 degrees)',
  's5-right-rot-15|ears': 'Mohawk, blonde: the near ear is drawn behind the strand kept over her cheek; the far one is hidden by the turn (yaw -25 degrees)',
  's5-right-rot50|ears': 'Short Curly, white: the near ear is drawn behind the strand kept over her cheek; the far one is hidden by the turn (yaw -25 degrees)',
  's6-centre-left|ears': 'Short Hair, white: the near ear is drawn behind the black lock kept over her cheek; the far one is hidden by the turn (yaw -20 degrees)',
  // (s6-centre-right, Braided Crown blonde: the ear drawn below the braid, in her shaded cheek's
  // tone, read as skin and background to the parser, 2 thousandths at stop 39, 5.2 with stop 40's
  // forehead, 4.6 once the skin fill beside it met the lit skin, 5.4 since algorithm 71's background
  // sources: the parser's reading of it moves with its context.)
  // Algorithm 71 takes the background in other faces' shares of the photo as the fill's source
  // (hair.ts sourcesOf). On these three what changed is the fill beside the head and neck, not the
  // new hair or the ear drawn (looked at, with a map of the pixels changed by over 30 levels), and
  // the parser's reading moved with that context: s6-right at 0.6 Mohawk pink 0.53 -> 0.24
  // read as hair, s6-right mirrored Dreadlocks blue 0.508 -> 0.496 (bound 0.5), s5-left at 0.6
  // Bowl Cut white's ear 6.5 -> 1.3 thousandths (the murky brown blob beside her neck is the
  // stairs now).
  's6-right-x0.6|readsAsHair-short': "Mohawk, pink: the thin pink strip reads as hair to the parser at 0.24 (0.53 before algorithm 71's fill beside her head; the strip's pixels unchanged)",
  's6-right-mirror|readsAsHair-long': 'Dreadlocks, blue: blue locks read as a hat to the face parser at 0.496 (bound 0.5; 0.508 before algorithm 71 changed the fill beside her neck)',
  's5-left-x0.6|ears': "Bowl Cut, white: the ear drawn at the bowl's edge reads as skin or background to the parser since algorithm 71 filled the stairs beside her neck (6.5 -> 1.3 thousandths; the fill beside her head and neck changed, not the ear)",
  's6-centre-left-rot-35|ears': 'Bowl Cut, black: the near ear is drawn behind the black lock kept over her cheek; the far one is hidden by the turn (yaw -20 degrees)',
  // The ear drawn on his image-left is the same pixels with and without algorithm 69's background
  // tone beside his head (looked at, 3x), but the parser's reading of it moved with that context
  // (7.9 -> 0.36 thousandths), as s6-centre-right's did with her skin fill's.
  'messi|ears': "Buzz Cut, black: the ear drawn on his image-left reads as skin or background to the parser since the background fill beside his head took the crowd's tone (7.9 -> 0.36 thousandths; the ear's own pixels unchanged)",
};

const photos: Array<{ base: string; variant: object }> = [...HAIR_PHOTOS.map((base) => ({ base, variant: {} })), ...HAIR_VARIANTS, ...HAIR_OTHER_PHOTOS.map((base) => ({ base, variant: {} })), ...HAIR_SMALL_VARIANTS];
const runs: Run[] = [];

describe('hairstyle on the development photos (issue 11, independent references)', () => {
  const loaded = new Map<string, DevPhoto>();
  beforeAll(async () => {
    for (const p of photos) {
      const ph = await hairPhoto(p.base, p.variant);
      loaded.set(ph.name, ph);
    }
  }, 120_000);

  it.each(photos.map((p, k) => ({ ...p, k })))('$base $variant: target only, face kept, old hair gone, soft edges, colour', async ({ base, variant, k }) => {
    const ph = [...loaded.values()][k]!;
    expect(ph.name.startsWith(base)).toBe(true);
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const { width: W, height: H } = input;
    const ref = await referenceFaces(ph.bytes);
    const me = target(ref.faces, W, H);
    const others = ref.faces.filter((f) => f !== me);
    const frame = referenceFrame(me.landmarks);
    const face = belowBrows(me.landmarks, W, H);
    const parsedIn = await referenceParsing(ph.bytes);
    const body = await bodyReference(ph.bytes);
    for (const [j, short] of [true, false].entries()) {
      const style = short ? SHORT[k % SHORT.length]! : LONG[k % LONG.length]!;
      const color = HAIR_COLORS[(2 * k + j) % HAIR_COLORS.length]!;
      const { out, pngBytes, alpha } = await runHairstyle(ph.bytes, style, color);
      const figures: Record<string, number> = {};
      // 1. Other people's faces unchanged; the background away from the target unchanged.
      let worstOther = 0;
      for (const o of others) worstOther = Math.max(worstOther, mad(input, out, ovalMask(o.landmarks, W, H)) || 0);
      // Far: the background (not a person by the Meet reference, grown by 3% of the face width)
      // beyond any style's reach (1.25 face widths beside, 1.7 above the eye line, in the
      // reference frame) with a margin. The target's own long hair, wherever it reaches, is a
      // person pixel: its removal is allowed.
      const far = new Uint8Array(W * H);
      const people = dilate(Uint8Array.from(body.person, (p) => (p > 64 ? 1 : 0)), W, H, Math.round(0.03 * frame.scale));
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const [u, v] = frame.uv(x + 0.5, y + 0.5);
          if ((Math.abs(u) > 1.8 || v < -1.9) && !people[y * W + x]) far[y * W + x] = 1;
        }
      }
      figures.othersMad = worstOther;
      figures.farMad = mad(input, out, far) || 0;
      // 3. The face below the brows, and its landmarks on the output.
      figures.faceMad = mad(input, out, face);
      const refOut = await referenceFaces(pngBytes);
      const meOut = target(refOut.faces, W, H);
      const moved: number[] = [];
      for (let i = 0; i < 468; i++) {
        const [x, y] = me.landmarks[i]!;
        if (!face[Math.min(H - 1, Math.max(0, Math.round(y))) * W + Math.min(W - 1, Math.max(0, Math.round(x)))]) continue;
        moved.push(Math.hypot(meOut.landmarks[i]![0] - x, meOut.landmarks[i]![1] - y) / frame.scale);
      }
      // The median over the landmarks below the brows (a re-run of FaceMesh jitters a few points).
      figures.landmarkShift = [...moved].sort((a, b) => a - b)[moved.length >> 1]!;
      // 4. Short styles: the input's hair near the face and below the nose is gone.
      const parsedOut = await referenceParsing(pngBytes);
      if (short) {
        const noseV = frame.uv(me.landmarks[4]![0], me.landmarks[4]![1])[1];
        // Other people's hair is not the target's to remove (point 1 keeps it): a pixel nearer
        // another reference face (by face box centres, in face widths) does not count. The parser's
        // labels on a neighbour's hair beside the face flicker with changes elsewhere in the photo.
        const nearer = nearerAnotherFace(me, others);
        const { was, still } = longHairLeft(parsedIn.labels, parsedOut.labels, face, frame, noseV, W, H, nearer);
        figures.longHairLeft = was ? still / was : 0;
        // The bare skin the removal shows (the parser's hair on the input, its skin or neck on the
        // output, off the face) against the face's own skin (its skin below the brows on the input):
        // the ratio of their median CIE Lab chroma.
        const fillC: number[] = [], faceC: number[] = [];
        for (let i = 0; i < W * H; i++) {
          const o = parsedOut.labels[i];
          if (face[i] && parsedIn.labels[i] === CLASS.skin) faceC.push(lch(input.data[3 * i]!, input.data[3 * i + 1]!, input.data[3 * i + 2]!).C);
          else if (!face[i] && parsedIn.labels[i] === CLASS.hair && (o === CLASS.skin || o === CLASS.neck)) fillC.push(lch(out.data[3 * i]!, out.data[3 * i + 1]!, out.data[3 * i + 2]!).C);
        }
        const medC = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] ?? NaN;
        figures.fillSkinPixels = fillC.length;
        figures.fillChroma = medC(fillC) / medC(faceC);
        const [inL, inR] = earsSeen(parsedIn.labels, frame, W, H);
        const [outL, outR] = earsSeen(parsedOut.labels, frame, W, H);
        Object.assign(figures, { earsInL: inL, earsInR: inR, earsOutL: outL, earsOutR: outR });
      }
      // 5. Reads as hair: of the new hair's solid pixels (alpha >= 200: a buzz cut is 0.9 opaque) near the head (inside the reference
      // parser's crop, off the face), the share the face parser, trained on real photos, labels
      // hair on the output (a flat cap or a plastic wig parses as hat, cloth or background).
      const { solid, share } = readsAsHair(alpha, face, frame, parsedOut.labels, W, H);
      figures.readsAsHair = share;
      // 5. Soft edges: partial-alpha pixels per outline pixel.
      let partial = 0, outline = 0;
      for (let y = 1; y < H - 1; y++) {
        for (let x = 1; x < W - 1; x++) {
          const i = y * W + x;
          const a = alpha[i]!;
          if (a > 12 && a < 243) partial++;
          if (a > 127 && (alpha[i - 1]! <= 127 || alpha[i + 1]! <= 127 || alpha[i - W]! <= 127 || alpha[i + W]! <= 127)) outline++;
        }
      }
      figures.edgeBand = outline ? partial / outline : 0;
      // 6. Colour: on the crown, where every style has hair: a patch above the reference forehead
      // top (landmark 10), 0.06 face widths either side of the centre line (inside the Mohawk's
      // strip): 0.06-0.2 face widths above it, or 0.15-0.3 for the styles that show the natural
      // hairline (SHOWS_HAIRLINE: it lies above the landmark, its fine hairs fading into the skin).
      const forehead = frame.uv(me.landmarks[10]![0], me.landmarks[10]![1])[1];
      const crownPatch: [number, number] = SHOWS_HAIRLINE.includes(style) ? [0.15, 0.3] : [0.06, 0.2];
      const Ls: number[] = [], Cs: number[] = [], hs: number[] = [];
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const [u, v] = frame.uv(x + 0.5, y + 0.5);
          if (Math.abs(u) > 0.06 || v < forehead - crownPatch[1] || v > forehead - crownPatch[0]) continue;
          const i = y * W + x;
          const { L, C, h } = lch(out.data[3 * i]!, out.data[3 * i + 1]!, out.data[3 * i + 2]!);
          Ls.push(L);
          Cs.push(C);
          hs.push(h);
        }
      }
      const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] ?? NaN;
      // Hue: the circular median is close enough as the median of hues unwrapped around the band.
      const band = BANDS[color];
      const hue = band.h ? med(hs.map((h) => (h < band.h![0] - 60 ? h + 360 : h))) : NaN;
      figures.hairPixels = Ls.length;
      figures.L = med(Ls);
      figures.C = med(Cs);
      figures.h = hue;
      runs.push({ photo: ph.name, style, short, color, figures });
      const what = `${ph.name} ${style} ${color}: ${JSON.stringify(figures, (_, v) => (typeof v === 'number' ? Math.round(v * 1000) / 1000 : v))}`;
      const checks: Array<[string, boolean]> = [
        ['others', worstOther <= 2],
        ['far', figures.farMad <= 2],
        ['face', figures.faceMad <= 3],
        ['landmarks', figures.landmarkShift < 0.02],
        ['edges', figures.edgeBand > 1.2],
        [`readsAsHair-${short ? 'short' : 'long'}`, solid > 100 && figures.readsAsHair >= 0.5],
        ['colour', Ls.length > 50 && figures.L >= band.L[0] && figures.L <= band.L[1] && (!band.C || (figures.C >= band.C[0] && figures.C <= band.C[1])) && (!band.h || (hue >= band.h[0] && hue <= band.h[1]))],
      ];
      if (short) checks.push(['longHair', (figures.longHairLeft ?? 1) < 0.15]);
      // The bare skin the removal shows reads as her skin: where enough of it is seen, its chroma at
      // least FILL_CHROMA of the face's (a neck toned by a necklace's grey glint or a top's colour,
      // or filled with the wall, is greyer).
      if (short && figures.fillSkinPixels! >= 500) checks.push(['fillSkin', figures.fillChroma! >= FILL_CHROMA]);
      // Ears: where the old hair hid both (the parser sees none on the input), a short style shows
      // at least one (a face ending at its own oval, the wall beside the cheek, is a mask under a cap).
      if (short && figures.earsInL! < EAR_SEEN && figures.earsInR! < EAR_SEEN) checks.push(['ears', Math.max(figures.earsOutL!, figures.earsOutR!) >= EAR_SEEN]);
      for (const [check, ok] of checks) {
        const known = KNOWN[`${ph.name}|${check}`];
        // A known defect must still fail: when it is fixed, its entry goes.
        // Soft: every check of both styles runs (and its figures are printed) whatever failed first.
        if (known) expect.soft(ok, `${what}: known (${known}) but now passes: remove it from KNOWN`).toBe(false);
        else expect.soft(ok, `${what}: ${check}`).toBe(true);
      }
    }
  }, 120_000);

  it('removes on every picture of a task the old hair its own new hair leaves uncovered (4 outputs share one removal; reference FaceMesh and parser)', async () => {
    // The removal is made once per task, of the old hair any picture leaves uncovered: judged per
    // picture on the references run on the input, the parser's hair outside the face below the
    // brows, near the head (within 1.2 face widths of its centre, not nearer a neighbour's face),
    // off that picture's new hair (its mask under 5%) but under another picture's (over 95%):
    // changed by more than 30 levels (filled) on nearly all of it. Dreadlocks: the gaps between the
    // locks move from picture to picture. (A removal of the first picture's gaps only: 0.52, 0.79
    // and 0.90 on pictures 2-4; the shared one 0.96-0.99.)
    const { ph, input, W, H, me, frame } = await onReferences('s6-centre-left');
    const parsedIn = await referenceParsing(ph.bytes);
    const face = belowBrows(me.landmarks, W, H);
    // A neighbour's hair (nearer another reference face, as the dev-set's long-hair check) stays.
    const nearer = nearerAnotherFace(me, (await referenceFaces(ph.bytes)).faces.filter((f) => f.box.x !== me.box.x));
    const pictures = await runPictures(ph.bytes, 'Dreadlocks', 'blonde', 4);
    for (const [k, { out, alpha }] of pictures.entries()) {
      let n = 0, filled = 0;
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const i = y * W + x;
          // Only where another picture's new hair covers it (a removal sized to that picture would leave it).
          if (parsedIn.labels[i] !== CLASS.hair || face[i] || alpha[i]! >= 13 || !pictures.some((p, j) => j !== k && p.alpha[i]! >= 242)) continue;
          const [u, v] = frame.uv(x + 0.5, y + 0.5);
          if (Math.hypot(u, v) > 1.2 || nearer(x + 0.5, y + 0.5)) continue;
          n++;
          const d = Math.abs(input.data[3 * i]! - out.data[3 * i]!) + Math.abs(input.data[3 * i + 1]! - out.data[3 * i + 1]!) + Math.abs(input.data[3 * i + 2]! - out.data[3 * i + 2]!);
          if (d > 3 * 30) filled++;
        }
      }
      console.log(`s6-centre-left Dreadlocks, picture ${k + 1} of 4: ${n} px of old hair off its new hair, ${(filled / Math.max(1, n)).toFixed(3)} filled`);
      expect(n).toBeGreaterThan(2000);
      expect(filled / n).toBeGreaterThan(0.93);
    }
  }, 120_000);

  /** The slants (face widths across per face width down) a lock over the forehead is followed at. */
  const SLANTS = [0, -0.25, 0.25, -0.5, 0.5];
  it('continues a lock lying over the face up to the new hair, in its colour above the brows: no filled band of forehead cuts it at the brows (reference FaceMesh and parser)', async () => {
    // Hair lying over the face below the brows stays (point 3); above the brows it was removed and
    // filled, so the lock ended in a straight cut at the brow line under a band of forehead. Judged
    // on the references run on the input: forehead pixels (between the reference brows and the
    // forehead's top, landmark 10, inside the face's width) from which a line straight down or
    // slanted (SLANTS: side-swept hair crosses the brows at a slant) is hair to the reference parser
    // halfway to the brows, at them and 0.06 and 0.12 face widths below them (the lock's inside): on
    // the output they must be the input's own pixels (but for the new hair's contact shadow), under
    // the new hair (its mask), or hair to the reference parser run on the output (the lock dyed the
    // new colour above the brows since stop 40), not filled. Before stop 35 only straight locks were kept:
    // s6-centre-left 30% filled, s6-left 34% (a flat band of forehead at each temple). Well above
    // the brows (0.12 face widths and more) and off the new hair, the lock must read in the new
    // colour's band (BANDS: the brown the test asks for).
    for (const [name, style] of [['s6-centre-left', 'Buzz Cut'], ['s6-left', 'Crew Cut'], ['s5-back', 'Crew Cut']] as Array<[string, Hairstyle]>) {
      const { ph, input, W, H, me, frame } = await onReferences(name);
      const parsedIn = await referenceParsing(ph.bytes);
      const lm = me.landmarks;
      const brows = Math.min(...[70, 63, 105, 66, 107, 300, 293, 334, 296, 336].map((i) => frame.uv(lm[i]![0], lm[i]![1])[1]));
      const top = frame.uv(lm[10]![0], lm[10]![1])[1];
      // Pixel at frame (u, v): the inverse of frame.uv, by its two unit steps.
      const [ox, oy] = [(lm[33]![0] + lm[133]![0] + lm[362]![0] + lm[263]![0]) / 4, (lm[33]![1] + lm[133]![1] + lm[362]![1] + lm[263]![1]) / 4];
      const [u0, v0] = frame.uv(ox, oy), [u1] = frame.uv(ox + 1, oy), [, v1] = frame.uv(ox, oy + 1), [u2, v2] = [frame.uv(ox, oy + 1)[0], frame.uv(ox + 1, oy)[1]];
      const det = (u1 - u0) * (v1 - v0) - (u2 - u0) * (v2 - v0);
      const at = (u: number, v: number) => {
        const du = u - u0, dv = v - v0;
        const x = Math.floor(ox + ((v1 - v0) * du - (u2 - u0) * dv) / det), y = Math.floor(oy + (-(v2 - v0) * du + (u1 - u0) * dv) / det);
        return x >= 0 && y >= 0 && x < W && y < H ? y * W + x : -1;
      };
      const { out, alpha, pngBytes } = await runHairstyle(ph.bytes, style, 'brown');
      // The lock above the brows may take the new colour (dyed with the new hair): still hair to
      // the reference parser run on the output, not filled.
      const parsedOut = await referenceParsing(pngBytes);
      // The locks' inside only (2% of the face width in from their edges): a thin strand at the
      // face's edge is where the two parsers' crops disagree.
      const notHair = dilate(Uint8Array.from(parsedIn.labels, (l) => (l === CLASS.hair ? 0 : 1)), W, H, Math.max(2, Math.round(0.02 * frame.scale)));
      let n = 0, filled = 0;
      // The lock's pixels well above the brows and off the new hair, and those in brown's band
      // (BANDS) on the input and on the output.
      let high = 0, brownIn = 0, brownOut = 0;
      const inBand = (img: RgbImage, i: number) => {
        const { L, C, h } = lch(img.data[3 * i]!, img.data[3 * i + 1]!, img.data[3 * i + 2]!);
        const b = BANDS.brown;
        return L >= b.L[0] && L <= b.L[1] && C >= b.C![0] && C <= b.C![1] && h >= b.h![0] && h <= b.h![1];
      };
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const i = y * W + x;
          if (notHair[i]) continue;
          const [u, v] = frame.uv(x + 0.5, y + 0.5);
          if (v < top || v >= brows || Math.abs(u) > 0.45) continue;
          if (!SLANTS.some((sl) => [(v + brows) / 2, brows, brows + 0.06, brows + 0.12].every((bv) => parsedIn.labels[at(u + sl * (bv - v), bv)] === CLASS.hair))) continue;
          n++;
          if (v < brows - 0.12 && alpha[i]! < 128) (high++, (brownIn += inBand(input, i) ? 1 : 0), (brownOut += inBand(out, i) ? 1 : 0));
          // Filled: off the new hair, changed by more than its contact shadow can (which darkens
          // the lock a little below the new hair), and no longer hair to the reference parser.
          const d = Math.abs(input.data[3 * i]! - out.data[3 * i]!) + Math.abs(input.data[3 * i + 1]! - out.data[3 * i + 1]!) + Math.abs(input.data[3 * i + 2]! - out.data[3 * i + 2]!);
          if (alpha[i]! < 128 && d > 3 * 30 && parsedOut.labels[i] !== CLASS.hair) filled++;
        }
      }
      console.log(`lock over the forehead ${name}, ${style}: ${n} px, filled ${(filled / Math.max(1, n)).toFixed(3)}; ${high} px well above the brows, brown ${(brownIn / Math.max(1, high)).toFixed(2)} -> ${(brownOut / Math.max(1, high)).toFixed(2)}`);
      expect(n, name).toBeGreaterThan(150);
      expect(filled / n, name).toBeLessThan(0.25);
      // Well above the brows the kept lock takes the new hair's colour (stop 40): before, a black
      // lock under a brown cut stayed black (s6-centre-left 0.04 of it brown, s6-left 0.01).
      expect(high, name).toBeGreaterThan(100);
      expect(brownOut / high, name).toBeGreaterThanOrEqual(0.8);
    }
  }, 120_000);

  it('shows the forehead up to its natural hairline under a Crew Cut, a Buzz Cut, a Braided Crown or a Mohawk, not a fringe down to mid-forehead (reference FaceMesh and parser)', async () => {
    // FaceMesh's top landmark (10) lies on the forehead, below the hairline: the reference parser
    // reads skin 0.15-0.35 face widths above it at the midline on the development photos whose
    // forehead shows. Until stop 40 these styles came down to the landmark (a fringe, a bowl cut).
    // On those photos (skin on the input at the midline 0.1 above the landmark), the new hair
    // (its mask) must cover under a fifth of the forehead band from the landmark to 0.06 above
    // it, within 0.15 face widths of the midline: each style (SHOWS_HAIRLINE) on two photos.
    let photosTried = 0;
    for (const name of HAIR_PHOTOS) {
      const { ph, W, H, me, frame } = await onReferences(name);
      const parsedIn = await referenceParsing(ph.bytes);
      const [u10, v10] = frame.uv(me.landmarks[10]![0], me.landmarks[10]![1]);
      // The input's forehead at the midline, 0.1 above the landmark: skin, or this photo is not one.
      let skin = 0, looked = 0;
      const band: number[] = [];
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const [u, v] = frame.uv(x + 0.5, y + 0.5);
          if (Math.abs(u - u10) > 0.15) continue;
          if (Math.abs(u - u10) < 0.05 && Math.abs(v - (v10 - 0.1)) < 0.01) (looked++, (skin += parsedIn.labels[y * W + x] === CLASS.skin ? 1 : 0));
          if (v <= v10 && v > v10 - 0.06) band.push(y * W + x);
        }
      }
      if (!looked || skin / looked < 0.8) continue;
      // Four such photos are enough (the first four in the set's order).
      if (++photosTried > 4) break;
      for (const style of [SHOWS_HAIRLINE[photosTried - 1]!, SHOWS_HAIRLINE[photosTried % SHOWS_HAIRLINE.length]!]) {
        const { alpha } = await runHairstyle(ph.bytes, style, 'black');
        const covered = band.filter((i) => alpha[i]! >= 128).length / band.length;
        console.log(`forehead shown ${name}, ${style}: ${(covered * 100).toFixed(0)}% of the band above the landmark under the new hair`);
        expect(covered, `${name} ${style}`).toBeLessThan(0.2);
      }
    }
    expect(photosTried).toBeGreaterThanOrEqual(4);
  }, 180_000);

  it('without the face parser (hairstyle-selfie) removes the long hair and fills it beside the head with the background, not a skin-coloured hood (reference FaceMesh and parser)', async () => {
    // The Selfie version's person mask holds the hair itself, and every hair pixel was taken to
    // hide skin: the fill painted a tan hood over the blinds around the head. Judged on the
    // references run on the input: the input's hair (reference parser) beside the head above the
    // chin and below the brows (more than 0.6 face widths from the centre line, in the reference
    // frame), not under the new hair (its mask); against blinds and a white wall there, few output
    // pixels may be skin-coloured. (Above the brows s6-left's hair hid a golden wood panel, which
    // the fill rightly continues and this colour test cannot tell from skin.)
    const selfie = registry.byName('hairstyle-selfie')!;
    for (const name of ['s6-left', 's6-centre-left']) {
      const { ph, W, H, me, frame, vOf } = await onReferences(name);
      const chin = vOf(152), brows = vOf(9);
      const parsedIn = await referenceParsing(ph.bytes);
      const { out, alpha, pngBytes } = await runHairstyle(ph.bytes, 'Buzz Cut', 'black', selfie);
      let n = 0, skin = 0;
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const i = y * W + x;
          if (parsedIn.labels[i] !== CLASS.hair || alpha[i]! > 25) continue;
          const [u, v] = frame.uv(x + 0.5, y + 0.5);
          if (v > chin || v < brows || Math.abs(u) < 0.6) continue;
          n++;
          if (skinLike(out.data[3 * i]!, out.data[3 * i + 1]!, out.data[3 * i + 2]!)) skin++;
        }
      }
      // And its long hair gone (point 4's check): of the input's hair beside the face below the
      // nose (off the reference face), what the parser still calls hair on the output. Found by a
      // patch's colour above the forehead, 99% of s6-centre-left's long black hair was left.
      const parsedOut = await referenceParsing(pngBytes);
      const nose = frame.uv(me.landmarks[4]![0], me.landmarks[4]![1])[1];
      const { was, still } = longHairLeft(parsedIn.labels, parsedOut.labels, belowBrows(me.landmarks, W, H), frame, nose, W, H);
      console.log(`selfie version, hair beside the head ${name}: ${n} px, skin-coloured ${(skin / Math.max(1, n)).toFixed(3)}; long hair left ${(still / Math.max(1, was)).toFixed(3)} of ${was} px`);
      expect(n, name).toBeGreaterThan(500);
      expect(skin / n, name).toBeLessThan(0.15);
      expect(was, name).toBeGreaterThan(500);
      expect(still / was, name).toBeLessThan(0.15);
    }
  }, 120_000);

  it('fills the hair beside the head in the tone of the background around it, not a pale hood (reference FaceMesh and parser)', async () => {
    // Hair over blinds and wood panels was filled from the few whole patches left at the fill's
    // coarsest level, in the region's corners: a white hood the texture around it does not have.
    // Judged on the references run on the input: its hair (reference parser) beside the head above
    // the chin (more than 0.6 face widths off the centre line), not under the new hair; the
    // output's mean CIE Lab there against the mean of the input's background (reference parser)
    // within 0.25 face widths of that hair, each side of the head on its own. s6-left's left side:
    // dE 15.6 (L* +11.6) before stop 29, 5.0 after. Photos where a neighbour's hair lies beside the
    // target's head (s6-right, s6-centre-left: the parser does not say whose hair it is) or where
    // the hair hid how far a wood panel reaches (s6-centre-right) cannot be judged this way.
    for (const name of ['s6-left', 's5-right', 's5-back']) {
      const { ph, input, W, H, frame, vOf } = await onReferences(name);
      const chin = vOf(152);
      const { labels } = await referenceParsing(ph.bytes);
      const { out, alpha } = await runHairstyle(ph.bytes, 'Buzz Cut', 'black');
      const beside = new Uint8Array(W * H);
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const i = y * W + x;
          if (labels[i] !== CLASS.hair || alpha[i]! > 25) continue;
          const [u, v] = frame.uv(x + 0.5, y + 0.5);
          if (v <= chin && Math.abs(u) > 0.6) beside[i] = 1;
        }
      }
      // Each side of the head on its own: a wood panel on one side and blinds on the other.
      for (const side of [-1, 1]) {
        const part = beside.map((b, i) => (b && Math.sign(frame.uv((i % W) + 0.5, Math.floor(i / W) + 0.5)[0]) === side ? 1 : 0));
        const near = dilate(part, W, H, Math.round(0.25 * frame.scale));
        const fill = [0, 0, 0], ring = [0, 0, 0];
        let nf = 0, nr = 0;
        for (let i = 0; i < W * H; i++) {
          if (part[i]) {
            const lab = labAt(out.data, i);
            for (let c = 0; c < 3; c++) fill[c] = fill[c]! + lab[c]!;
            nf++;
          } else if (near[i] && !beside[i] && labels[i] === CLASS.background) {
            const lab = labAt(input.data, i);
            for (let c = 0; c < 3; c++) ring[c] = ring[c]! + lab[c]!;
            nr++;
          }
        }
        if (nf < 2000) continue;
        const dE = Math.hypot(...fill.map((v, c) => v / nf - ring[c]! / nr));
        const dL = fill[0]! / nf - ring[0]! / nr;
        console.log(`fill beside the head ${name}, ${side < 0 ? 'left' : 'right'}: ${nf} px, background around ${nr} px, mean dE ${dE.toFixed(1)}, dL ${dL.toFixed(1)}`);
        expect(nr, name).toBeGreaterThan(2000);
        expect(dE, name).toBeLessThan(8);
      }
    }
  }, 120_000);

  it("removes the footballer's own hair beside his raised shoulder (hand-annotated box), not taken for a neighbour's", async () => {
    // Hand-annotated on the input (messi crop, 720x720): the hair curling down above his ear on the
    // image's right, beside his collar, which his raised shoulder reaches at the face's height. His
    // shoulder beside the head was taken for a neighbour's face cut by the edge (BiSeNet calls it
    // background, Selfie person), and everything nearer it than his head, this hair included, was
    // left alone as that neighbour's: 46% of the box changed with a Bowl Cut. A face is mostly skin;
    // his football shirt is 9% skin-like.
    const ph = await hairPhoto('messi');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const W = input.width;
    for (const style of ['Bowl Cut', 'Short Hair'] as Hairstyle[]) {
      const { out } = await runHairstyle(ph.bytes, style, 'blonde');
      let n = 0, changed = 0;
      for (let y = 140; y < 207; y++) {
        for (let x = 323; x < 342; x++) {
          const i = y * W + x;
          n++;
          if (pixelChanged(input, out, i)) changed++;
        }
      }
      expect(changed / n, style).toBeGreaterThan(0.75);
    }
  }, 60_000);

  it("splits the hair between the target and a neighbour where their hair meets, not on a straight line between their faces (hand-annotated regions)", async () => {
    // Hand-annotated on the input (s6-centre-right, 782x782): A, her own hair hanging beside her
    // cheek towards the neighbour on the image's right, past the straight line that split the photo
    // between the two faces by distance (x ~556 there); B, the neighbour's hair beside her own face.
    // Before stop 32 A was left standing as the neighbour's (unchanged with a short style: a
    // column of filled background beside the cheek, ended by that line through dark hair).
    const ph = await hairPhoto('s6-centre-right');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const W = input.width;
    const A = polygonMask([[558, 250], [575, 250], [585, 400], [560, 400]], W, input.height);
    for (const style of ['Short Hair', 'Buzz Cut'] as Hairstyle[]) {
      const { out } = await runHairstyle(ph.bytes, style, 'brown');
      let n = 0, changed = 0;
      for (let i = 0; i < A.length; i++) if (A[i]) (n++, pixelChanged(input, out, i) && changed++);
      const b = new Uint8Array(input.width * input.height);
      for (let y = 170; y < 300; y++) b.fill(1, y * W + 592, y * W + 605);
      console.log(`s6-centre-right ${style}: her hair past the distance split ${((100 * changed) / n).toFixed(1)}% changed; the neighbour's hair MAD ${mad(input, out, b).toFixed(2)}`);
      expect(changed / n, style).toBeGreaterThan(0.25);
      expect(mad(input, out, b), style).toBeLessThanOrEqual(2);
    }
  }, 60_000);

  /**
   * With each style, the output's median CIE Lab over box `a` (x0, y0, x1, y1) within `bound` of
   * the input's over the reference box `b` (hand-annotated boxes).
   */
  async function expectFilledLike(photo: string, a: Box4, b: Box4, bound: number, what: string): Promise<void> {
    const ph = await hairPhoto(photo);
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const ref = medianLab(input, b);
    for (const style of ['Short Hair', 'Bowl Cut'] as Hairstyle[]) {
      const { out } = await runHairstyle(ph.bytes, style, 'black');
      const got = medianLab(out, a);
      const dE = Math.hypot(got[0]! - ref[0]!, got[1]! - ref[1]!, got[2]! - ref[2]!);
      console.log(`${photo} ${style}: ${what} ${got.map((v) => v.toFixed(1)).join('/')} against ${ref.map((v) => v.toFixed(1)).join('/')}: dE ${dE.toFixed(1)}`);
      expect(dE, style).toBeLessThan(bound);
    }
  }

  it("fills the hair lying over a raised shoulder with the shoulder's skin, not the wall behind (hand-annotated boxes)", async () => {
    // Hand-annotated on the input (s5-left, 677x677): A, her shoulder under the long hair on the
    // image's left (the hair lies over it, the shoulder's outline runs on under it towards the
    // neck); B, the same shoulder's bare skin beside it. The body model's shoulder line, a fixed
    // drop below the chin, put A beside the body, and the stairs behind her were copied there: a
    // brown blob inside the shoulder (dE 56.3). A must now be filled in the skin's colour.
    await expectFilledLike('s5-left', [190, 370, 240, 420], [150, 430, 190, 470], 15, 'the shoulder under the hair');
  }, 60_000);

  it("fills the narrow band between a new style's outline and her old hair's above s6-left's head in the wall's tone beside it, not the blinds' white (hand-annotated boxes)", async () => {
    // Hand-annotated on the input (s6-left, 696x748): three boxes along the band Lowpoly's outline
    // leaves between itself and her old hair on the image's upper left (old hair on the input,
    // filled on the output), each with a box of the yellow wall just outside her hair beside it.
    // The exemplar fill took the band's structure from the rest of the hole, over the blinds: a
    // white rim against the wall (CIE Lab dE of the medians to the wall beside it 46 at the first
    // box), issue 11's halo, until algorithm 69's background fill met the background beside it in
    // tone (30-35: paler than the wall still, the correction fading across the band).
    const ph = await hairPhoto('s6-left');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const { out } = await runHairstyle(ph.bytes, 'Lowpoly', 'brown');
    const boxes: Array<[Box4, Box4]> = [
      [[232, 44, 246, 52], [195, 35, 207, 43]],
      [[210, 66, 220, 74], [180, 62, 190, 72]],
      [[190, 96, 200, 104], [165, 92, 175, 102]],
    ];
    for (const [a, b] of boxes) {
      const got = medianLab(out, a), ref = medianLab(input, b), was = medianLab(input, a);
      const dE = Math.hypot(got[0]! - ref[0]!, got[1]! - ref[1]!, got[2]! - ref[2]!);
      console.log(`s6-left Lowpoly: the band at ${a.join(',')} ${got.map((v) => v.toFixed(1)).join('/')} (her hair ${was.map((v) => v.toFixed(1)).join('/')}) against the wall ${ref.map((v) => v.toFixed(1)).join('/')}: dE ${dE.toFixed(1)}`);
      // The band was her hair on the input: it is filled, not left.
      expect(was[0]!, a.join(',')).toBeLessThan(35);
      expect(dE, a.join(',')).toBeLessThan(38);
    }
  }, 60_000);

  it('fills the forehead at the temple under a removed lock with skin, not the wall (hand-annotated boxes)', async () => {
    // Hand-annotated on the input (s6-left, 696x748): A, her forehead near the image-left temple
    // under the lock that crosses it (removed under a dyed short cut: the lock is kept only under a
    // cut of her own colour), just below FaceMesh's forehead landmark, where the landmarks' oval
    // rounds in towards its top; B, her bare forehead below the lock. That corner was given to the
    // wall, and the blinds were copied into the forehead: a white wedge (CIE Lab 81.9/-3.6/1.3
    // under a pink Buzz Cut, 79.2/-3.5/-0.9 under a white one, against the forehead's
    // 72.3/3.1/23.9). A must be in the forehead's colour now, lit or shaded (skinColoured).
    const ph = await hairPhoto('s6-left');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const ref = medianLab(input, [320, 180, 360, 195]);
    for (const [style, color] of [['Buzz Cut', 'pink'], ['Crew Cut', 'pink'], ['Buzz Cut', 'white']] as Array<[Hairstyle, HairColor]>) {
      const { out } = await runHairstyle(ph.bytes, style, color);
      const got = medianLab(out, [270, 176, 290, 190]);
      console.log(`s6-left ${style} ${color}: the forehead at the temple ${got.map((v) => v.toFixed(1)).join('/')} against ${ref.map((v) => v.toFixed(1)).join('/')}`);
      expect(skinColoured(got, ref), `${style} ${color}`).toBe(true);
    }
  }, 60_000);

  it('ends her fringe lying across the brows in a taper, not a straight cut along the brow line (hand-annotated box)', async () => {
    // Hand-annotated on the input (s5-left, 677x677): a box 32 px wide across the brow line where
    // her side-swept fringe crosses it over her image-right brow, from the forehead above the fringe
    // down to it. Below the brows the fringe stays (the face is kept), above it is removed under a
    // short cut: the column-mean lightness (CIE L*) stepped by 23-33 within two rows at the brow
    // line, a straight cut. Her own fringe's edges step by 5.6 there. Tapered, the step is under
    // 18 (10-14), and the fringe above the brows is still removed: four rows below the box's top,
    // L* over 20 (the fill, 29-42 as the new hair's shade falls), not the fringe's 10-11.
    const ph = await hairPhoto('s5-left');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const profile = (img: RgbImage) => Array.from({ length: 28 }, (_, k) => {
      let s = 0;
      for (let x = 318; x < 350; x++) s += labAt(img.data, (176 + k) * img.width + x)[0];
      return s / 32;
    });
    const step = (p: number[]) => Math.max(...p.slice(2).map((v, k) => Math.abs(v - p[k]!)));
    const own = step(profile(input));
    for (const [style, color] of [['Buzz Cut', 'pink'], ['Crew Cut', 'blonde'], ['Buzz Cut', 'black']] as Array<[Hairstyle, HairColor]>) {
      const { out } = await runHairstyle(ph.bytes, style, color);
      const p = profile(out);
      console.log(`s5-left ${style} ${color}: the fringe's end across the brows steps by ${step(p).toFixed(1)} L* in two rows (her own fringe's edges ${own.toFixed(1)}), the forehead above ${p[4]!.toFixed(1)}`);
      expect(step(p), `${style} ${color}`).toBeLessThan(18);
      expect(p[4], `${style} ${color}`).toBeGreaterThan(20);
    }
  }, 60_000);

  it("fills the hair hanging beside a shoulder with the wall behind it, not the clothing (hand-annotated boxes)", async () => {
    // Hand-annotated on the input (s6-right, 664x840): A, the wall beside her shoulder on the
    // image's right where the tips of her hair hang over it; B, the same wall beside them. The body
    // model's shoulder, wider than hers, gave the tips to the body, and her top's white strap was
    // copied there: a white triangle on the wall (dE 30.7). A must now be filled in the wall's colour.
    await expectFilledLike('s6-right', [530, 600, 548, 640], [570, 600, 600, 640], 10, 'the wall under the tips');
  }, 60_000);

  it("fills long hair lying over her top below the parser's crop with the top, not a skin-coloured smear (hand-annotated boxes)", async () => {
    // Hand-annotated on the input (s5-right, 724x724): A, a clump of her dark hair lying over her
    // red top below the parser's crop (the top's neckline runs from her left shoulder strap down
    // across the chest above it); B, the top where it shows below the hair. With no parser labels
    // there, the fill's flood took the neck's skin down over the whole chest: a blurred brown
    // blob (dE 29.4 from the top). The body past the crop is now known by colour, her top the
    // clothing piece most present in her central column. Copied from the top beside the hair, in
    // its shadow and crossed by stray strands, the fill was darker (dE 14.6); the clothing's
    // sources now keep clear of the old hair (10.2).
    await expectFilledLike('s5-right', [360, 600, 400, 630], [290, 640, 340, 690], 12, 'the top under the hair');
  }, 60_000);

  it('fills long hair lying over a plain top without a mosaic of lighter and darker squares (hand-annotated boxes)', async () => {
    // Hand-annotated on the input (s5-right, 724x724): C, the clump of her dark hair lying over her
    // plain red top (its lower part, below the parser's crop); B, the top where it shows. The
    // measure: the texture at the scale of the fill's copied blocks, the RMS of the difference
    // between a pixel's mean CIE lightness over 5x5 and over 17x17 pixels (the top's own weave is
    // finer, its folds broader). The copy took the top's folds block by block: over C 0.65, 3.3
    // times the top's own (0.20 on B); 0.37 with the blocks dropped. Under 2.8 times.
    const ph = await hairPhoto('s5-right');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const W = input.width, H = input.height;
    const blockTexture = (img: RgbImage, [x0, y0, x1, y1]: Box4) => {
      const L = new Float32Array(W * H);
      for (let i = 0; i < W * H; i++) L[i] = lch(img.data[3 * i]!, img.data[3 * i + 1]!, img.data[3 * i + 2]!).L;
      const fine = boxBlur(L, W, H, 2), coarse = boxBlur(L, W, H, 8);
      let e = 0, n = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) (e += (fine[y * W + x]! - coarse[y * W + x]!) ** 2), n++;
      return Math.sqrt(e / n);
    };
    const top = blockTexture(input, [290, 640, 340, 690]);
    const { out } = await runHairstyle(ph.bytes, 'Short Hair', 'brown');
    const fill = blockTexture(out, [380, 560, 470, 640]);
    console.log(`s5-right Short Hair: the fill over the top ${fill.toFixed(2)} at the blocks' scale, the top's own ${top.toFixed(2)}`);
    expect(fill).toBeLessThan(2.8 * top);
  }, 60_000);

  it('fills long hair lying over a top below the parser\'s crop with texture, not one flat colour (hand-annotated boxes)', async () => {
    // Hand-annotated on the input (s6-left, 696x748): a box of her wavy hair lying over her green
    // top at the image's right, below the face parser's crop, and a box of that top where it shows
    // (below and left of the hair). With only the parser's few cloth pixels to copy, the fill there
    // was one flat colour (lightness spread 0.4 against the top's 4.8): a painted block.
    const ph = await hairPhoto('s6-left');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const W = input.width;
    const spread = (img: RgbImage, x0: number, x1: number, y0: number, y1: number) => {
      const Ls: number[] = [];
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) Ls.push(lch(img.data[3 * (y * W + x)]!, img.data[3 * (y * W + x) + 1]!, img.data[3 * (y * W + x) + 2]!).L);
      const mean = Ls.reduce((a, b) => a + b, 0) / Ls.length;
      return Math.sqrt(Ls.reduce((a, b) => a + (b - mean) ** 2, 0) / Ls.length);
    };
    const top = spread(input, 450, 540, 690, 740);
    const { out } = await runHairstyle(ph.bytes, 'Buzz Cut', 'brown');
    expect(spread(out, 560, 650, 630, 680)).toBeGreaterThan(0.35 * top);
  }, 60_000);

  it('fills the removed hair beside an out-of-focus background as soft as that background, not in sharp blocks (reference parser, hand-annotated box)', async () => {
    // On s5-top (558x558), every short style removes her ponytail hanging beside her neck over the
    // stairs. The fill there: the pixels the reference parser reads as hair on the input and not
    // on the output, image-left of the reference face (her hair beside the head). The stairs:
    // a hand-annotated box of them beside it (out of focus). The measure is blurSigma
    // (imaging/blur.ts: the blur a region's edges show, px), which reads grain as sharpness: the
    // fill carries the photo's grain back (matchSharpness), so a fill as soft as the stairs reads
    // below them. The exemplar fill copied pixels at full sharpness and stitched them in blocks:
    // 0.91-1.02 px over the fill against the stairs' 2.13, four colours (0.43-0.48 of the stairs);
    // with the fill's blur matched to its sources 1.19-2.16 (stop 39's code), 1.25-1.36 (stop 40's).
    // Until stop 40 the fill was a hand-annotated 28x65 box beside her neck, mostly flat, where the
    // grain alone set the measure (1.0-2.3 px with the blur matched, as the fill's draws went).
    const { ph, input, W, H, me } = await onReferences('s5-top');
    const lum = (img: RgbImage) => Float32Array.from({ length: W * H }, (_, i) => labAt(img.data, i)[0]);
    const box = new Uint8Array(W * H);
    for (let y = 160; y < 260; y++) for (let x = 40; x < 130; x++) box[y * W + x] = 1;
    const stairs = blurSigma(lum(input), W, H, box);
    const { out, pngBytes } = await runHairstyle(ph.bytes, 'Buzz Cut', 'red');
    const [parsedIn, parsedOut] = await Promise.all([referenceParsing(ph.bytes), referenceParsing(pngBytes)]);
    const removed = new Uint8Array(W * H);
    let n = 0;
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < me.box.x; x++) {
        const i = y * W + x;
        if (parsedIn.labels[i] === CLASS.hair && parsedOut.labels[i] !== CLASS.hair) (removed[i] = 1), n++;
      }
    }
    const fill = blurSigma(lum(out), W, H, removed);
    console.log(`s5-top Buzz Cut: the fill beside her head (${n} px) ${fill.toFixed(2)} px of blur, the stairs beside it ${stairs.toFixed(2)}`);
    expect(n).toBeGreaterThan(3000);
    expect(stairs).toBeGreaterThan(1.5);
    expect(fill).toBeGreaterThan(0.53 * stairs);
    expect(fill).toBeLessThan(1.5 * stairs);
  }, 60_000);

  it('softens the seams of the fill like the photo\'s own edges, not cut along the pixel grid (hand-annotated boxes)', async () => {
    // Hand-annotated on the inputs: a box across the seam where the filled neck meets the filled
    // wall under the removed hair (s6-right 664x840, the neck's image-left side below the jaw;
    // s5-right 724x724, the neck's image-right side), and a box of the photo's own edges on the
    // face (her lips, eyes). The measure is blurSigma (imaging/blur.ts: the blur a region's edges
    // show, px). The fill's groups were cut along the pixel grid: a razor-sharp staircase on a soft
    // photo, 0.53 and 0.50 px against the lips' 1.13 and 0.75 (a neck cut out like a sticker).
    for (const [photo, seamBox, faceBox] of [
      ['s6-right', [225, 380, 265, 440], [255, 345, 345, 395]],
      ['s5-right', [460, 380, 510, 440], [295, 335, 385, 380]],
    ] as Array<[string, Box4, Box4]>) {
      const ph = await hairPhoto(photo);
      const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
      const face = sigmaOf(input, faceBox);
      const { out } = await runHairstyle(ph.bytes, 'Short Hair', 'black');
      const seam = sigmaOf(out, seamBox);
      console.log(`${photo} Short Hair: the fill's seam ${seam.toFixed(2)} px of blur, the face's own edges ${face.toFixed(2)}`);
      expect(seam, photo).toBeGreaterThan(0.8 * face);
      expect(seam, photo).toBeLessThan(2 * face);
    }
  }, 60_000);

  it("fades the fringe's shadow out above the brows, without a step where the kept face begins (reference FaceMesh and parser)", async () => {
    // Bowl Cut (a fringe) on s6-left and s6-right. Judged where the input's skin (reference parser)
    // shows between the new hair (its mask 0) and the brows (reference FaceMesh: from a tenth of the
    // face width above the brows' upper landmarks to 0.05 below them), between the brows' outer
    // ends: per column, the change the output makes to the photo's lightness (output less input,
    // luma) and its largest jump between two vertically adjacent such pixels, on the median column.
    // The contact shadow stopped where the face the pipeline keeps begins, along the brows: a darker
    // bar between the fringe and the brows with a straight lower edge (17.3 and 18.8 levels; 8.1 and
    // 9.9 with the shadow faded out over 4% of the face width; over 8%, 4.2 and 5.3, but the face
    // parser's readings of two other runs moved past their bounds).
    for (const name of ['s6-left', 's6-right']) {
      const { ph, input, W, me, frame } = await onReferences(name);
      const { labels } = await referenceParsing(ph.bytes);
      const { out, alpha } = await runHairstyle(ph.bytes, 'Bowl Cut', 'blue');
      const brows = [70, 63, 105, 66, 107, 336, 296, 334, 293, 300].map((k) => frame.uv(me.landmarks[k]![0], me.landmarks[k]![1]));
      const u0 = Math.min(...brows.map((b) => b[0])), u1 = Math.max(...brows.map((b) => b[0])), top = Math.min(...brows.map((b) => b[1]));
      const luma = (img: RgbImage, i: number) => 0.299 * img.data[3 * i]! + 0.587 * img.data[3 * i + 1]! + 0.114 * img.data[3 * i + 2]!;
      const within = (i: number) => {
        const [u, v] = frame.uv((i % W) + 0.5, Math.floor(i / W) + 0.5);
        return labels[i] === CLASS.skin && alpha[i] === 0 && u >= u0 && u <= u1 && v >= top - 0.1 && v <= top + 0.05;
      };
      // Per column its largest jump; judged on the median column (a removed strand's filled patch
      // meets the photo along its own edge in a few columns).
      const perColumn = new Map<number, number>();
      let n = 0;
      for (let i = 0; i + W < W * input.height; i++) {
        if (!within(i) || !within(i + W)) continue;
        const d = Math.abs(luma(out, i + W) - luma(input, i + W) - (luma(out, i) - luma(input, i)));
        perColumn.set(i % W, Math.max(perColumn.get(i % W) ?? 0, d));
        n++;
      }
      const jumps = [...perColumn.values()].sort((x, y) => x - y);
      const jump = jumps[Math.floor(jumps.length / 2)] ?? 0;
      console.log(`${name} Bowl Cut: ${n} pixel pairs in ${jumps.length} columns above the brows, the median column's largest jump of the change ${jump.toFixed(1)} levels`);
      expect(n, name).toBeGreaterThan(200);
      expect(jump, name).toBeLessThan(12);
    }
  }, 60_000);

  it("removes a strand of her ponytail beside her neck, not left as the neighbour's below (hand-annotated box)", async () => {
    // Hand-annotated on the input (s5-top, 558x558): a box on a strand of her dark ponytail hanging
    // beside her neck, above the head of the neighbour below her, whose hair is as dark. The
    // contested hair between the two was split by colour, and the strand, an island of the
    // neighbour's colour inside hers, went to the neighbour: left as it was, a dark wedge in the
    // filled stairs (median CIE L 16.4 in the output against 15.1 in the input). The neighbour now
    // keeps below the chin only what joins her own hair, and the strand is filled (48.3).
    const ph = await hairPhoto('s5-top');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const box: Box4 = [175, 342, 195, 360];
    const { out } = await runHairstyle(ph.bytes, 'Crew Cut', 'brown');
    const before = medianLab(input, box)[0]!, after = medianLab(out, box)[0]!;
    console.log(`s5-top Crew Cut: the strand beside her neck, median L ${before.toFixed(1)} in the input, ${after.toFixed(1)} in the output`);
    expect(before).toBeLessThan(25);
    expect(after).toBeGreaterThan(before + 15);
  }, 60_000);

  it('draws grey hair with dark depths under its lit strands: the face parser reads it as hair, not a knitted cap (reference parser)', async () => {
    // s6-left, Buzz Cut, grey: an even pale mass within the ramp's swing read as a cap (2% of its
    // solid pixels labelled hair); with its shadows falling towards the dark of unpigmented hair, 93%.
    const { ph, W, H, me, frame } = await onReferences('s6-left');
    const { alpha, pngBytes } = await runHairstyle(ph.bytes, 'Buzz Cut', 'grey');
    const { solid, share } = readsAsHair(alpha, belowBrows(me.landmarks, W, H), frame, (await referenceParsing(pngBytes)).labels, W, H);
    console.log(`s6-left Buzz Cut grey: ${solid} solid pixels, ${(100 * share).toFixed(1)}% read as hair`);
    expect(solid).toBeGreaterThan(1000);
    expect(share).toBeGreaterThan(0.5);
  }, 60_000);

  it("draws Lowpoly's facets over strands, Bombshell Curls' loose curls and Short Curly's kinks: the face parser reads them as hair, not a helmet, a poodle wig or a knitted cap (reference parser)", async () => {
    // Before algorithms 65-68 (stop 47): Lowpoly's flat-shaded facets alone read as a hat or a
    // helmet in every colour (blonde on s6-left 0.00), Bombshell Curls' tight crimps with deep
    // creases in pink on s6-left as a hat (0.00), Short Curly's in-phase zigzag in grey on s5-top
    // as a knitted cap (0.03); 0.97, 0.79 and 0.93 with them.
    for (const [name, style, color] of [['s6-left', 'Lowpoly', 'blonde'], ['s6-left', 'Bombshell Curls', 'pink'], ['s5-top', 'Short Curly', 'grey']] as const) {
      const { ph, W, H, me, frame } = await onReferences(name);
      const { alpha, pngBytes } = await runHairstyle(ph.bytes, style, color);
      const { solid, share } = readsAsHair(alpha, belowBrows(me.landmarks, W, H), frame, (await referenceParsing(pngBytes)).labels, W, H);
      console.log(`${name} ${style} ${color}: ${solid} solid pixels, ${(100 * share).toFixed(1)}% read as hair`);
      expect(solid, style).toBeGreaterThan(1000);
      expect(share, style).toBeGreaterThan(0.5);
    }
  }, 120_000);

  it("draws the Mohawk's shaved sides as a scalp, not a felt cap: the face parser reads them as skin or hair, not a hat (reference FaceMesh and parser)", async () => {
    // The sides: 0.16-0.36 face widths either side of the reference centre line (off the strip),
    // 0.03-0.22 above the reference forehead top (landmark 10), where the style is shaved on
    // every development photo that shows the top of the head. A strong bristle texture in a
    // 60/40 skin-and-hair colour drew a brown felt: 45%, 21% and 44% read as a hat on these three.
    for (const name of ['s6-centre-left', 's6-right', 's6-left']) {
      const { ph, W, H, frame, vOf } = await onReferences(name);
      const forehead = vOf(10);
      const { pngBytes } = await runHairstyle(ph.bytes, 'Mohawk', 'black');
      const { labels } = await referenceParsing(pngBytes);
      let n = 0, hat = 0, scalp = 0;
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const [u, v] = frame.uv(x + 0.5, y + 0.5);
          if (Math.abs(u) < 0.16 || Math.abs(u) > 0.36 || v > forehead - 0.03 || v < forehead - 0.22) continue;
          const c = labels[y * W + x]!;
          n++;
          if (c === CLASS.hat) hat++;
          else if (c === CLASS.skin || c === CLASS.hair) scalp++;
        }
      }
      console.log(`${name} Mohawk sides: ${n} px, hat ${(hat / n).toFixed(2)}, skin or hair ${(scalp / n).toFixed(2)}`);
      expect(hat / n).toBeLessThan(0.15);
      expect(scalp / n).toBeGreaterThan(0.6);
    }
  }, 120_000);

  it("removes long hair's grey tips lying over her top below the parser's crop (hand-annotated box)", async () => {
    // Hand-annotated on the input (s6-centre-left, 823x823): a box of the greyish tips of her long
    // black hair over her maroon top, at the image's bottom edge (83% of it is grey: CIE LCh chroma
    // under 20; the top's chroma is ~45). They lie outside the hair's own colour spread and stayed
    // as a dark streak under every short style; removed, the box shows the top again.
    const ph = await hairPhoto('s6-centre-left');
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const grey = (img: RgbImage) => {
      let n = 0, g = 0;
      for (let y = 760; y < 823; y++) {
        for (let x = 360; x < 420; x++) {
          const i = y * img.width + x;
          n++;
          if (lch(img.data[3 * i]!, img.data[3 * i + 1]!, img.data[3 * i + 2]!).C < 20) g++;
        }
      }
      return g / n;
    };
    expect(grey(input)).toBeGreaterThan(0.6);
    const { out } = await runHairstyle(ph.bytes, 'Crew Cut', 'black');
    console.log(`grey tips over the top, s6-centre-left Crew Cut: ${grey(input).toFixed(3)} -> ${grey(out).toFixed(3)}`);
    expect(grey(out)).toBeLessThan(0.15);
  }, 60_000);

  it("draws the hair's outline as soft as a soft photo's own edges (issue 11 point 5: blur matched)", async () => {
    // The development photo blurred by a Gaussian of 3 px (an out-of-focus or enlarged photo). The
    // softness is measured the same way on both sides: on the input, over the reference face below
    // the brows; on the output, over a band around the new hair's outline (the hair mask's partial
    // alpha grown by 3 px, off that face). The measure (imaging/blur.ts blurSigma: the drop of the
    // gradient energy under a further blur) is the one the pipeline applies to the face; the
    // regions are the references' and the output's. Drawn sharp, the outline measured 0.66 px
    // against the face's 2.43; matched, 1.95. (A Bowl Cut: its outline is long and clean; on a
    // Short Hair the crisp strands inside the band weigh more.)
    const ph = await hairPhoto('s6-centre-left');
    const bytes = await sharp(ph.bytes).blur(3).jpeg({ quality: 95 }).toBuffer();
    const input = await decodeImage(bytes, { maxPixels: 4e7 });
    const { width: W, height: H } = input;
    const { out, alpha } = await runHairstyle(bytes, 'Bowl Cut', 'brown');
    const ref = await referenceFaces(bytes);
    const face = belowBrows(target(ref.faces, W, H).landmarks, W, H);
    const edge = new Uint8Array(W * H);
    for (let i = 0; i < edge.length; i++) edge[i] = alpha[i]! > 25 && alpha[i]! < 230 ? 1 : 0;
    const band = dilate(edge, W, H, 3);
    for (let i = 0; i < band.length; i++) if (face[i]) band[i] = 0;
    const grey = (im: RgbImage) => Float32Array.from({ length: W * H }, (_, i) => 0.299 * im.data[3 * i]! + 0.587 * im.data[3 * i + 1]! + 0.114 * im.data[3 * i + 2]!);
    const faceSigma = blurSigma(grey(input), W, H, face), outlineSigma = blurSigma(grey(out), W, H, band);
    console.log(`soft photo: face ${faceSigma.toFixed(2)} px, new hair's outline ${outlineSigma.toFixed(2)} px`);
    expect(faceSigma).toBeGreaterThan(1.5);
    expect(outlineSigma).toBeGreaterThan(0.6 * faceSigma);
  }, 60_000);

  it("works on the target's part of a whole group photo and pastes it back: nothing else changes", async () => {
    // face-api's sample5 as it is (1920x1398, five women on stairs): the target's face is 14% of
    // the short side, so the pipeline works on the part a style can reach (about half the photo;
    // its note says which) and pastes it back. The reference face-landmarks version finds no face
    // this small on the whole photo (its detector is a short-range one), so this is judged around
    // the face the job reports: every pixel farther than 5 face sizes from it unchanged to the byte
    // (PNG output; no style reaches that far), and around the head the picture changed.
    const bytes = Uint8Array.from(await facePhoto('sample5'));
    const input = await decodeImage(bytes, { maxPixels: 4e7 });
    const { width: W, height: H } = input;
    const ctx = { params: version.manifest.params, session: (g: string) => sessions.get(version.id, g), maxPixels: 4e7 };
    const r = await PIPELINES.hairstyle!.run(ctx, { image_files: ['http://dev-set/sample5.jpg'], hairstyle: 'Long Wave', hair_color: 'red', num_outputs: 1, output_format: 'png' }, { image_files: [bytes] });
    const out = await decodeImage(r.files.find((f) => f.name === 'result-1.png')!.data, { maxPixels: 4e7 });
    expect([out.width, out.height]).toEqual([W, H]);
    expect(r.notes.join(' ')).toMatch(/worked on \d+x\d+ px of the photo around the face/);
    const box = JSON.parse(Buffer.from(r.files.find((f) => f.name === 'hairstyle.json')!.data).toString()).face as ReferenceFace['box'];
    const cx = box.x + box.width / 2, cy = box.y + box.height / 2, size = Math.max(box.width, box.height);
    let far = 0, changedFar = 0, near = 0, changedNear = 0;
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        const d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy) / size;
        const changed = pixelChanged(input, out, i);
        if (d > 5) {
          far++;
          if (changed) changedFar++;
        } else if (d > 0.6 && d < 1.2) {
          near++;
          if (changed) changedNear++;
        }
      }
    }
    expect(far).toBeGreaterThan(0.1 * W * H);
    expect(changedFar).toBe(0);
    expect(changedNear / near).toBeGreaterThan(0.3);
  }, 60_000);

  it("fills the bare arm under her removed hair in the whole group photo with skin, not her black top (hand-annotated boxes)", async () => {
    // Hand-annotated on face-api's sample5 as it is (1920x1398; the target is s5-left): A, her bare
    // upper arm below the shoulder on the image-left, under the edge of the old hair's mask; B, the
    // same arm's skin beside it, clear of any hair. On the whole photo (not on the s5-left crop)
    // the parser called a 40-pixel shadow between her hair and her neck cloth, the fill's flood
    // carried that over the arm, and her black top was copied there: a black plate (CIE Lab
    // 7.1/3.4/2.9 against the arm's 50.4/16.5/39.4). A must be in the arm's colour.
    const bytes = Uint8Array.from(await facePhoto('sample5'));
    const input = await decodeImage(bytes, { maxPixels: 4e7 });
    const ref = medianLab(input, [425, 765, 460, 790]);
    for (const [style, color] of [['Buzz Cut', 'black'], ['Bowl Cut', 'blonde']] as Array<[Hairstyle, HairColor]>) {
      const { out } = await runHairstyle(bytes, style, color);
      const got = medianLab(out, [505, 745, 545, 770]);
      console.log(`sample5 ${style} ${color}: her arm under the hair ${got.map((v) => v.toFixed(1)).join('/')} against ${ref.map((v) => v.toFixed(1)).join('/')}`);
      expect(skinColoured(got, ref), `${style} ${color}`).toBe(true);
    }
  }, 60_000);

  it("draws the new hair over the whole top of her head where a neighbour's face is nearer, and leaves the neighbour's face (hand-annotated boxes)", async () => {
    // face-api's sample5 resized to 1150 px wide (~1 MP, as users upload a group photo). The target
    // (s5-left) sits a step below the woman in the red top, whose chin comes down near the target's
    // crown: split by the faces' distances, the right of the crown went to the neighbour and its
    // old dark hair stayed, a notch in every new style. Hand-annotated: C, the top of the target's
    // head right of its middle (input L* ~34, that notch under a blonde Bowl Cut 36.9); N, the
    // neighbour's face (not one pixel of it may change: PNG output).
    const bytes = Uint8Array.from(await sharp(await facePhoto('sample5')).resize({ width: 1150 }).png().toBuffer());
    const input = await decodeImage(bytes, { maxPixels: 4e7 });
    const { out } = await runHairstyle(bytes, 'Bowl Cut', 'blonde');
    const crown = medianLab(out, [426, 218, 444, 234]);
    const n = new Uint8Array(input.width * input.height);
    for (let y = 60; y < 170; y++) n.fill(1, y * input.width + 490, y * input.width + 570);
    const neighbour = mad(input, out, n);
    console.log(`sample5 at 1150 px, Bowl Cut blonde: the crown's median L* ${crown[0]!.toFixed(1)} (input ${medianLab(input, [426, 218, 444, 234])[0]!.toFixed(1)}), the neighbour's face MAD ${neighbour.toFixed(2)}`);
    expect(crown[0]).toBeGreaterThan(50);
    expect(neighbour).toBe(0);
  }, 60_000);

  it('fills the hair hanging over the stairs beside her face with the stairs, not a flat blob (hand-annotated boxes)', async () => {
    // face-api's sample5 resized to 1150 px wide and saved as a JPEG (quality 92), as users upload a
    // group photo. Her long hair hangs left of her cheek over the stairs and the railing behind her.
    // The split of the photo by face centres gives most of the stairs around her to the other
    // women's faces, and until algorithm 71 no background there was a source for the fill: the
    // hair was filled from the sliver of stairs left in her own share, a flat dark-brown blob (its
    // horizontal detail 1.1 levels, the stairs' 4.1). Hand-annotated: B, the old hair left of her
    // cheek above her shoulder, with the stairs behind it; S, the stairs and a railing bar beside it,
    // clear of any hair. B's horizontal detail (mean absolute difference of neighbouring pixels) must
    // be at least half S's on the input.
    const bytes = Uint8Array.from(await sharp(await facePhoto('sample5')).resize({ width: 1150 }).jpeg({ quality: 92 }).toBuffer());
    const input = await decodeImage(bytes, { maxPixels: 4e7 });
    const detail = (img: RgbImage, [x0, y0, x1, y1]: number[]) => {
      let g = 0, n = 0;
      for (let y = y0!; y < y1!; y++) {
        for (let x = x0!; x < x1! - 1; x++, n++) {
          const i = 3 * (y * img.width + x);
          for (let k = 0; k < 3; k++) g += Math.abs(img.data[i + k]! - img.data[i + 3 + k]!) / 3;
        }
      }
      return g / n;
    };
    const stairs = detail(input, [215, 250, 265, 330]);
    for (const [style, color] of [['Bowl Cut', 'blonde'], ['Buzz Cut', 'black']] as Array<[Hairstyle, HairColor]>) {
      const { out } = await runHairstyle(bytes, style, color);
      const filled = detail(out, [290, 320, 335, 385]);
      console.log(`sample5 at 1150 px (JPEG), ${style} ${color}: the filled hair's horizontal detail ${filled.toFixed(2)}, the stairs' ${stairs.toFixed(2)}`);
      expect(filled, `${style} ${color}`).toBeGreaterThan(0.5 * stairs);
    }
  }, 60_000);

  it('fills a neck under removed long hair without the stripes of the strands it was copied between (hand-annotated boxes)', async () => {
    // face-api's sample6 resized to 1150 px wide (~1 MP). Her neck shows between strands of her
    // long black hair; the skin fill copies patches from there, and the strands came with them: a
    // neck woven with thin dark stripes. Hand-annotated: F, the side of her neck and shoulder under
    // the removed hair (hair in the input); S, her chin's skin. The fill's fine detail (luma less
    // its 5x5 mean) at the 99th percentile must be no stronger than her own skin's (9.7; the fill's was 14.8).
    const bytes = Uint8Array.from(await sharp(await facePhoto('sample6')).resize({ width: 1150 }).png().toBuffer());
    const input = await decodeImage(bytes, { maxPixels: 4e7 });
    const skin = detailPercentile(input, [450, 355, 470, 368], 0.99);
    for (const [style, color] of [['Buzz Cut', 'blonde'], ['Crew Cut', 'black']] as Array<[Hairstyle, HairColor]>) {
      const { out } = await runHairstyle(bytes, style, color);
      const fill = detailPercentile(out, [410, 434, 436, 450], 0.99);
      console.log(`sample6 at 1150 px, ${style} ${color}: the filled neck's fine detail (p99) ${fill.toFixed(1)} levels, her chin's ${skin.toFixed(1)}`);
      expect(fill, `${style} ${color}`).toBeLessThanOrEqual(skin);
    }
  }, 60_000);

  it('works a face larger than the version\'s work size at a smaller scale and scales back only what changed (reference FaceMesh, parser and person mask)', async () => {
    // s6-centre-left enlarged 2.5 times (2058 px square, her face ~620 px wide: a phone portrait).
    // At its own resolution the removal, the drawing and the masks cost per pixel of the head (an
    // 11 MP portrait took 24 s on this machine); the version works on a face of at most
    // max_work_face px and scales the picture's changes back up. Judged as every development
    // photo: the face below the brows (reference FaceMesh on the input) kept, the background
    // beyond any style's reach unchanged to the byte (PNG), her long hair gone under a short
    // style (reference parser), the new hair read as hair and in its colour's band.
    const ph = await hairPhoto('s6-centre-left', { scale: 2.5 });
    const input = await decodeImage(ph.bytes, { maxPixels: 4e7 });
    const { width: W, height: H } = input;
    const ref = await referenceFaces(ph.bytes);
    const me = target(ref.faces, W, H);
    const frame = referenceFrame(me.landmarks);
    const face = belowBrows(me.landmarks, W, H);
    const body = await bodyReference(ph.bytes);
    const parsedIn = await referenceParsing(ph.bytes);
    const ctx = { params: version.manifest.params, session: (g: string) => sessions.get(version.id, g), maxPixels: 4e7 };
    const r = await PIPELINES.hairstyle!.run(ctx, { image_files: ['http://dev-set/portrait.jpg'], hairstyle: 'Buzz Cut', hair_color: 'blonde', num_outputs: 1, output_format: 'png' }, { image_files: [ph.bytes] });
    const out = await decodeImage(r.files.find((f) => f.name === 'result-1.png')!.data, { maxPixels: 4e7 });
    const maskPng = await decodeImage(r.files.find((f) => f.name === 'hair-mask-1.png')!.data, { maxPixels: 4e7 });
    expect([out.width, out.height, maskPng.width, maskPng.height]).toEqual([W, H, W, H]);
    const json = JSON.parse(Buffer.from(r.files.find((f) => f.name === 'hairstyle.json')!.data).toString());
    expect(json.work_scale).toBeGreaterThan(0.3);
    expect(json.work_scale).toBeLessThan(0.8);
    expect(r.notes.join(' ')).toMatch(/worked at \d+x\d+ px, 0\.\d\d of the photo's scale/);
    const alpha = Uint8Array.from({ length: W * H }, (_, i) => maskPng.data[3 * i]!);
    const faceMad = mad(input, out, face);
    let far = 0, changedFar = 0;
    const people = dilate(Uint8Array.from(body.person, (p) => (p > 64 ? 1 : 0)), W, H, Math.round(0.03 * frame.scale));
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const [u, v] = frame.uv(x + 0.5, y + 0.5);
        if ((Math.abs(u) > 1.8 || v < -1.9) && !people[y * W + x]) {
          far++;
          if (pixelChanged(input, out, y * W + x)) changedFar++;
        }
      }
    }
    const parsedOut = await referenceParsing(r.files.find((f) => f.name === 'result-1.png')!.data);
    const noseV = frame.uv(me.landmarks[4]![0], me.landmarks[4]![1])[1];
    const { was, still } = longHairLeft(parsedIn.labels, parsedOut.labels, face, frame, noseV, W, H, nearerAnotherFace(me, ref.faces.filter((f) => f !== me)));
    const { share } = readsAsHair(alpha, face, frame, parsedOut.labels, W, H);
    const hair: number[][] = [[], [], []];
    for (let i = 0; i < W * H; i++) {
      if (alpha[i]! < 200 || face[i]) continue;
      const p = lch(out.data[3 * i]!, out.data[3 * i + 1]!, out.data[3 * i + 2]!);
      hair[0]!.push(p.L), hair[1]!.push(p.C), hair[2]!.push(p.h);
    }
    const [L, C, h] = hair.map((a) => a.sort((x, y) => x - y)[a.length >> 1]!);
    console.log(`s6-centre-left x2.5 (${W}x${H}), Buzz Cut blonde at work scale ${json.work_scale.toFixed(2)}: face MAD ${faceMad.toFixed(2)}, far background ${changedFar} of ${far} px changed, long hair left ${(still / was).toFixed(3)}, reads as hair ${share.toFixed(2)}, LCh ${L!.toFixed(1)} ${C!.toFixed(1)} ${h!.toFixed(1)}`);
    expect(faceMad).toBeLessThanOrEqual(3);
    expect(far).toBeGreaterThan(0.05 * W * H);
    expect(changedFar).toBe(0);
    expect(still / was).toBeLessThan(0.15);
    expect(share).toBeGreaterThan(0.5);
    expect(L).toBeGreaterThanOrEqual(BANDS.blonde.L[0]);
    expect(L).toBeLessThanOrEqual(BANDS.blonde.L[1]);
    expect(h).toBeGreaterThanOrEqual(BANDS.blonde.h![0]);
    expect(h).toBeLessThanOrEqual(BANDS.blonde.h![1]);
  }, 120_000);

  it('refuses a roll beyond 45 degrees by name, with the angle', async () => {
    const ph = await hairPhoto('s5-right', { rotate: -40 });
    const err = await runHairstyle(ph.bytes, 'Short Hair', 'black').catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^the face in the image is tilted (4[6-9]|5\d) degrees; at most 45 are accepted$/);
  }, 60_000);

  afterAll(() => {
    // The per-photo figures, for the closing note (one line per run).
    if (process.env.HAIR_FIGURES) for (const r of runs) console.log(`figures ${r.photo} | ${r.style} | ${r.color} | ${JSON.stringify(r.figures, (_, v) => (typeof v === 'number' ? Math.round(v * 1000) / 1000 : v))}`);
  });
});
