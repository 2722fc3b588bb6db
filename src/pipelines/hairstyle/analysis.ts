// Analysis of the hairstyle photos: the best photo and its target face (steps/photo-choice), FaceMesh
// landmarks and the face frame, the face region to keep (inside the oval, below the brows), and the
// photo's own hair (hair.ts). Everything the renderer and the removal need, computed once per task.
import { cropRgb, scaledRgb, type RgbImage } from '../../imaging/image.ts';
import type { Face } from '../../steps/face-detection.ts';
import { numberParam, stringParam } from '../../models/params.ts';
import type { StageTimer } from '../../domain/stage-timer.ts';
import { meshFromFace, ovalMask } from '../../steps/face-mesh.ts';
import { readParsingParams } from '../../steps/face-parsing.ts';
import { chooseBestPhoto, type Candidate, type PhotoRules } from '../../steps/photo-choice.ts';
import { othersMask } from '../../steps/target-face.ts';
import type { PipelineContext } from '../types.ts';
import { anchorsOf, frameU, frameV, makeFrame, rollDegrees, yawDegrees } from './frame.ts';
import { AppError, pastLimit } from '../../errors/codes.ts';
import { hairFromParsing, hairFromSegmentation } from './hair.ts';
import type { HeadAnalysis, HeadGeometry, Look } from './render.ts';
import { STUBBLE_HAIR } from './templates.ts';
import { kthSmallest, labAt } from '../../steps/color.ts';
import { blurSigma } from '../../imaging/blur.ts';
import { maskBox, type Region } from '../../imaging/morphology.ts';

/** The photo rules from the version's params. */
function photoRules(params: Readonly<Record<string, unknown>>): PhotoRules {
  const P = (k: string) => numberParam(params, k, 'hairstyle');
  return {
    detector: { input_size: P('detector_size'), min_score: P('min_score'), iou_threshold: P('iou_threshold'), max_faces: P('detector_max_faces') },
    minFaceFraction: P('min_face_fraction'),
    maxRollDegrees: P('max_roll_degrees'),
  };
}

/** The blur estimate's gain, the drawn hair's own softness and the most the hair is blurred (px; see measureLook). */
const BLUR_GAIN = 1.25, DRAWN_BLUR = 1, MAX_BLUR = 4;

/** Grey level of pixel i (at module level: a closure made per call deoptimized this loop, 'wrong call target', every task). */
const greyAt = (data: Uint8Array, i: number) => 0.299 * data[3 * i]! + 0.587 * data[3 * i + 1]! + 0.114 * data[3 * i + 2]!;

/** The grey level's Laplacian at pixel i (absolute, per neighbour): the photo's noise where the picture is smooth. */
const laplacianAt = (d: Uint8Array, i: number, W: number) => Math.abs(4 * greyAt(d, i) - greyAt(d, i - 1) - greyAt(d, i + 1) - greyAt(d, i - W) - greyAt(d, i + W)) / 4;

/** Look.grain from the Laplacians sampled on a face: 1.5 x their median, 0.5..8 levels. */
const grainOf = (lap: number[]) => Math.max(0.5, Math.min(8, 1.5 * (lap.length ? kthSmallest(Float64Array.from(lap), Math.floor(lap.length / 2)) : 1)));

/**
 * Look.grain measured on the middle of a face's box (its central half each way: cheek, nose and
 * eyes, no hair or background) at the photo's own resolution: the grain a picture worked on at a
 * smaller scale gets back where it changed (max_work_face).
 */
export function grainInFace(image: RgbImage, box: Face['box']): number {
  const W = image.width;
  const x0 = Math.max(1, Math.round(box.x + box.width / 4)), x1 = Math.min(W - 1, Math.round(box.x + (3 * box.width) / 4));
  const y0 = Math.max(1, Math.round(box.y + box.height / 4)), y1 = Math.min(image.height - 1, Math.round(box.y + (3 * box.height) / 4));
  const lap: number[] = [];
  for (let y = y0; y < y1; y++) for (let x = x0 + ((3 - ((x0 + y) % 3)) % 3); x < x1; x += 3) lap.push(laplacianAt(image.data, y * W + x, W));
  return grainOf(lap);
}

/**
 * A photo is black and white when at most `share` of its face's pixels have a CIE Lab chroma over
 * `chroma`: a grey photo's face measures C* 0-1 (JPEG's chroma planes of a grey image are flat); on
 * the development photos and the astronaut 90-100% of the face's pixels are over 4 (its median C*
 * 15-37); a sepia print (C* ~10-20 of one hue) is a colour photo to this test.
 */
const MONOCHROME = { chroma: 4, share: 0.02 };

/**
 * The photo's look, measured on the protected face (skin, below the brows): which side the light
 * comes from (lightness right minus left), how exposed it is (mean lightness against 62, a
 * well-exposed face; square-rooted and clamped to 0.75..1.15, so a blonde stays blonde in a dim photo), its noise (median absolute Laplacian of the lightness, in levels), its blur (how much the drawn hair must be softened to match: see BLUR_GAIN), and whether it is black and white (MONOCHROME).
 */
export function measureLook(an: Pick<HeadAnalysis, 'image' | 'protect' | 'frame'>): Omit<Look, 'natural'> {
  const { image, protect, frame } = an;
  const W = image.width;
  let l = 0, nl = 0, r = 0, nr = 0, coloured = 0;
  const lap: number[] = [];
  for (let i = 0; i < protect.length; i++) {
    if (!protect[i]) continue;
    const x = i % W, y = (i - x) / W;
    // Memoized (a face has few distinct colours, neighbours mostly share one): the same values.
    const lab = labAt(image.data, i);
    const L = lab[0];
    if (lab[1]! * lab[1]! + lab[2]! * lab[2]! > MONOCHROME.chroma * MONOCHROME.chroma) coloured++;
    if (frameU(frame, x + 0.5, y + 0.5) < 0) {
      l += L;
      nl++;
    } else {
      r += L;
      nr++;
    }
    if ((x + y) % 3 === 0 && x > 0 && y > 0 && x < W - 1 && protect[i - 1] && protect[i + 1] && protect[i - W] && protect[i + W]) {
      const d = image.data;
      lap.push(laplacianAt(d, i, W));
    }
  }
  const Ll = nl ? l / nl : 60, Lr = nr ? r / nr : 60;
  // The photo's blur, on the face's box (its grey levels; the face's pixels only).
  const box = maskBox(protect, W, image.height);
  let blur = 0, edgeBlur = 1;
  if (box && box.width > 8 && box.height > 8) {
    const { x: bx0, y: by0, width: bw, height: bh } = box;
    const grey = new Float32Array(bw * bh), inFace = new Uint8Array(bw * bh);
    for (let y = 0; y < bh; y++) {
      for (let x = 0; x < bw; x++) {
        const i = (by0 + y) * W + bx0 + x;
        grey[y * bw + x] = greyAt(image.data, i);
        inFace[y * bw + x] = protect[i]!;
      }
    }
    // The estimate reads low by about a fifth (a photo blurred by a known sigma of 2 read 1.67):
    // scaled by BLUR_GAIN; the drawing's own softness (anti-aliased strands, ~DRAWN_BLUR px) is
    // taken off in quadrature.
    const photo = BLUR_GAIN * blurSigma(grey, bw, bh, inFace);
    blur = Math.sqrt(Math.max(0, photo * photo - DRAWN_BLUR * DRAWN_BLUR));
    edgeBlur = photo;
  }
  const mean = (l + r) / Math.max(1, nl + nr);
  return {
    lightSide: Math.max(-1, Math.min(1, (Lr - Ll) / 25)),
    exposure: Math.max(0.75, Math.min(1.15, (mean / 62) ** 0.5)),
    grain: grainOf(lap),
    blur: Math.min(MAX_BLUR, blur),
    edgeBlur,
    monochrome: nl + nr > 0 && coloured <= MONOCHROME.share * (nl + nr),
  };
}

/** Median sRGB of a mask's pixels at or above `min` (dark brown when there are too few to measure). */
export function naturalColour(image: RgbImage, mask: Uint8Array, min = 201): [number, number, number] {
  // Per channel a histogram of the 8-bit values: the median is where the count passes half, the
  // value a sorted list holds at n >> 1 (sorting boxed numbers took ~5 ms on a 1 MP face).
  const hist = new Int32Array(3 * 256);
  let n = 0;
  for (let i = 0; i < mask.length; i += 7) {
    if (mask[i]! < min) continue;
    n++;
    for (let c = 0; c < 3; c++) hist[256 * c + image.data[3 * i + c]!]!++;
  }
  if (n < 20) return [60, 45, 35];
  const median = (c: number) => {
    for (let v = 0, seen = 0; ; v++) if ((seen += hist[256 * c + v]!) > n >> 1) return v;
  };
  return [median(0), median(1), median(2)];
}

/**
 * How far the part of the photo a hairstyle works on reaches from the face's centre, in face sizes
 * (BlazeFace's box), along the eye line (u) and down the face (v): past the longest style's reach
 * (long hair to 3 face widths below the chin, 1.3 either side of the centre line) and the old long
 * hair's removal, with room for the fill's sources around them.
 */
const REACH = { u: 2.4, up: 2.6, down: 5.6 };

/**
 * The part of the photo the hairstyle can touch around the target's face: REACH turned by the
 * face's roll (from BlazeFace's eyes), as an axis-aligned box. Null when that is most of the photo
 * anyway (a portrait): then the whole photo is worked on. On a large photo with a small face (a
 * group, a phone photo of a person standing) the work per pixel then scales with the face, not
 * with the photo.
 */
function workRegion(face: Face, W: number, H: number): Region | null {
  const s = Math.max(face.box.width, face.box.height);
  const cx = face.box.x + face.box.width / 2, cy = face.box.y + face.box.height / 2;
  const { right_eye: r, left_eye: l } = face.keypoints;
  const roll = Math.atan2(l.y - r.y, l.x - r.x);
  const ux = Math.cos(roll), uy = Math.sin(roll);
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const u of [-REACH.u, REACH.u]) {
    for (const v of [-REACH.up, REACH.down]) {
      // u along the eye line, v perpendicular to it, downwards.
      const x = cx + s * (u * ux - v * uy), y = cy + s * (u * uy + v * ux);
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
    }
  }
  const bx0 = Math.max(0, Math.floor(x0)), bx1 = Math.min(W, Math.ceil(x1)), by0 = Math.max(0, Math.floor(y0)), by1 = Math.min(H, Math.ceil(y1));
  if ((bx1 - bx0) * (by1 - by0) > 0.6 * W * H) return null;
  return { x: bx0, y: by0, width: bx1 - bx0, height: by1 - by0 };
}

/** A face moved by (dx, dy), then scaled by (kx, ky) about the origin (a crop, then a resize of it). */
const moved = (f: Face, dx: number, dy: number, kx = 1, ky = 1): Face => ({
  ...f,
  box: { x: (f.box.x + dx) * kx, y: (f.box.y + dy) * ky, width: f.box.width * kx, height: f.box.height * ky },
  keypoints: Object.fromEntries(Object.entries(f.keypoints).map(([k, p]) => [k, { ...p, x: (p.x + dx) * kx, y: (p.y + dy) * ky }])) as Face['keypoints'],
});

/** What analyze gives: the head at once, the rest once the models have found the photo's own hair. */
export interface Analyzed {
  /** Enough to draw the hair (render.ts drawHair): the pipeline draws while the models run. */
  head: HeadGeometry;
  /** The photo's look as far as the face tells it (the stubble's natural colour needs the hair). */
  light: Omit<Look, 'natural'>;
  /** The complete analysis and look. */
  complete: Promise<{ analysis: HeadAnalysis; look: Look }>;
  notes: string[];
  chosen: Candidate;
  region: Region | null;
  /**
   * The work region's scale (1: the photo's own pixels; under 1 for a face larger than the
   * version's max_work_face): the analysis, and so the pictures, are of the region resized by it.
   */
  scale: number;
  /** The work region's pixels at the photo's own scale (the chosen photo itself without a region). */
  part: RgbImage;
}

export async function analyze(ctx: PipelineContext, images: readonly RgbImage[], t: StageTimer): Promise<Analyzed> {
  const P = (k: string) => numberParam(ctx.params, k, 'hairstyle');
  const { best: chosen, notes } = await chooseBestPhoto(await ctx.session('detector'), images, photoRules(ctx.params), t);
  // From here on the photo is its work region (when it is a part of it): the caller pastes the
  // result back. Faces move with it; faces wholly outside it are out of reach anyway.
  const region = workRegion(chosen.face, chosen.image.width, chosen.image.height);
  let best = region
    ? { ...chosen, image: await t.time('preprocess', () => cropRgb(chosen.image, region)), face: moved(chosen.face, -region.x, -region.y), others: chosen.others.map((f) => moved(f, -region.x, -region.y)) }
    : chosen;
  // The version's max_work_face: the largest face (BlazeFace's box, px) worked on at the photo's
  // own resolution. A larger one (a phone portrait or selfie: 1000 px and more) is worked on with
  // the region scaled so that the face is that size, and the pipeline scales what changed back up
  // (image.ts upscaleChanges): the fill, the drawing and the masks cost per pixel of the head, and
  // an 11 MP portrait whose face is 1100 px wide took 24 s on this project's 2-core machines. At
  // 320 px, larger than every development photo's face (at most 293 px) and the bench's 1 MP
  // photo's (310): those are worked on as before.
  const maxFace = P('max_work_face');
  const side = Math.max(chosen.face.box.width, chosen.face.box.height);
  const scale = side > maxFace ? maxFace / side : 1;
  // The region at the photo's own scale, what the caller scales the changes back up over.
  const part = best.image;
  if (scale < 1) {
    const image = await t.time('preprocess', () => scaledRgb(part, scale));
    const kx = image.width / part.width, ky = image.height / part.height;
    best = { ...best, image, face: moved(best.face, 0, 0, kx, ky), others: best.others.map((f) => moved(f, 0, 0, kx, ky)) };
  }
  const mesh = await ctx.session('landmarks');
  const { points: lm } = await meshFromFace(mesh, best.image, best.face, P('mesh_crop_scale'), P('mesh_size'), t, ['landmarks', 'landmarks', 'landmarks']);
  const yaw = yawDegrees(lm);
  const maxYaw = P('max_yaw_degrees');
  if (Math.abs(yaw) > maxYaw) {
    const which = images.length > 1 ? `image ${best.index + 1}` : 'the image';
    throw new AppError('FACE_TILTED', `the face in ${which} is turned ${pastLimit(Math.abs(yaw), maxYaw)} degrees sideways; at most ${maxYaw} are accepted (a photo facing the camera works best)`);
  }
  const frame = makeFrame(lm);
  const anchors = anchorsOf(frame, lm);
  const { width: W, height: H } = best.image;
  const oval = ovalMask(lm, W, H);
  const protect = new Uint8Array(W * H);
  // Only the oval's rows and columns: the frame is evaluated where the oval is, not on every pixel.
  let x0 = W, x1 = -1, y0 = H, y1 = -1;
  for (let i = 0; i < oval.length; i++) {
    if (!oval[i]) continue;
    const x = i % W, y = (i - x) / W;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    y1 = y;
  }
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = y * W + x;
      if (oval[i] && frameV(frame, x + 0.5, y + 0.5) > anchors.brows) protect[i] = 1;
    }
  }
  // Other people's pixels (nearer another face) are never changed by the removal.
  const others = await t.time('postprocess', () => othersMask(best.face, best.others, W, H));
  const base = { image: best.image, frame, anchors, protect, others, faces: { target: best.face, others: best.others } };
  // Once the models run (in their thread), this resolves and the caller draws meanwhile.
  const { found } =
    stringParam(ctx.params, 'hair_source', 'hairstyle') === 'parsing'
      ? await hairFromParsing(await ctx.session('parser'), await ctx.session('segmenter'), { width: P('segmenter_width'), height: P('segmenter_height') }, base, best.face, readParsingParams(ctx.params), t)
      : await hairFromSegmentation(await ctx.session('segmenter'), { width: P('segmenter_width'), height: P('segmenter_height') }, base, t);
  // The look from the face is measured while the models run (it was ~25 ms at 1 MP before they started).
  const light = measureLook(base);
  const complete = found.then((hair) => {
    // Shaved stubble shows the scalp through the person's own hair colour (STUBBLE_HAIR).
    const hairRgb = naturalColour(best.image, hair.hair);
    const skinRgb = naturalColour(best.image, protect, 1);
    const look: Look = { ...light, natural: [0, 1, 2].map((c) => (1 - STUBBLE_HAIR) * skinRgb[c]! + STUBBLE_HAIR * hairRgb[c]!) as [number, number, number] };
    return { analysis: { ...base, ...hair, skin: skinRgb, hairColour: hairRgb }, look };
  });
  // Awaited by the caller after its drawing; a failure before then must not count as unhandled.
  complete.catch(() => {});
  notes.push(`face roll ${rollDegrees(frame).toFixed(1)} degrees, yaw ${yaw.toFixed(1)} degrees, face width ${Math.round(frame.scale)} px, ${best.others.length} other face(s) left alone`);
  notes.push(`look: light from the ${light.lightSide >= 0 ? 'right' : 'left'} (${light.lightSide.toFixed(2)}), exposure ${light.exposure.toFixed(2)}, grain ${light.grain.toFixed(1)}, blur ${light.blur.toFixed(1)} px`);
  if (light.monochrome) notes.push('the photo is black and white: the new hair is drawn in grey at the colour\'s lightness');
  if (region) notes.push(`worked on ${region.width}x${region.height} px of the photo around the face (at ${region.x}, ${region.y})`);
  if (scale < 1) notes.push(`worked at ${W}x${H} px, ${scale.toFixed(2)} of the photo's scale (a face over ${maxFace} px wide), what changed scaled back up`);
  return { head: base, light, complete, notes, chosen, region, scale, part };
}

/** analyze, waited out: the complete analysis at once (for tools and tests that draw afterwards). */
export async function analyzeComplete(ctx: PipelineContext, images: readonly RgbImage[], t: StageTimer): Promise<Omit<Analyzed, 'complete'> & { analysis: HeadAnalysis; look: Look }> {
  const a = await analyze(ctx, images, t);
  return { ...a, ...(await a.complete) };
}
