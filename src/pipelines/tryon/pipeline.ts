// Virtual try-on: one garment photo + one person photo -> the target person wearing the garment.
//   decode -> analysis (analysis.ts): [forced_cutting: crop/pad to 3:4 around the target] -> faces
//   (BlazeFace) and bodies (BlazePose detector) -> the target (largest, most central face) -> its
//   BlazePose Full landmarks, other people's skeletons -> Selfie mask around the target split into
//   the target's instance -> face and hair (BiSeNet on the target face, started in a model thread
//   as soon as the target is known, so it runs beside the landmarks and the instance) -> refusals: no person,
//   person under 25% of the height, a needed body part out of frame
//   -> garment (garment.ts, garment-worn.ts): a person wearing it (that person's instance without
//   skin, face, hair) or a product photo (border background, colour distance, morphology); cut into
//   parts (torso, sleeves; pelvis and legs, or a skirt), each a strip of stations
//   -> body parts (parts.ts): the same strips on the target (torso edges measured on the instance,
//   sleeves along the arms, legs along the legs) and each part's clip; bare forearms and hands
//   (their skin, connected to BlazePose's capsules: armSkin) cut out of the torso, skirt and legs;
//   the neck above a collar cut out of the torso (parts.ts cutCollar)
//   -> warp (warp.ts): per part, a thin-plate spline through the strip pairs evaluated with
//   GridSample in the tps-warp graph over the part's clip box (a short sleeve: its affine part)
//   -> compose (compose.ts): parts layered under face, hair and hands, forearms in front of the
//   torso, bare knees drawn up in front of a top (legsInFront), anti-aliased; uncovered old
//   clothing in the garment's body band patch-filled; shading from the photo -> encode.
// Outputs: result-1.jpg|png, garment-mask.png, tryon.json. `prompt` is stored with the task's
// input and returned in tryon.json; this version does not interpret it.
import type { ClothesType } from '../../domain/job.ts';
import { AppError } from '../../errors/codes.ts';
import { copyBytes, cropPadded, cropRgb, decodeImage, pasteInto, scaledRgb, type RgbImage } from '../../imaging/image.ts';
import { close, closeInBox, componentsTouching, fillHoles, floodWhere, grownMaskBox, maskBox, type Region } from '../../imaging/morphology.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer, type StageTimer } from '../../domain/stage-timer.ts';
import { labAt, labMedians, skinColoured, srgbToLab } from '../../steps/color.ts';
import { giveBack, takeBytes, takeInts } from '../../imaging/scratch.ts';
import { jsonFile, maskFile, pictureFile } from '../output.ts';
import { definePipeline, type PipelineContext } from '../types.ts';
import { analyzePerson, cutTo3by4, faceAndHair, findTarget, landmarksOnFace, personRegion, targetSplit, type Found, type PersonAnalysis } from './analysis.ts';
import { armShapes, checkBody, checkLegsSeen, lerp, type Body, type P } from './body.ts';
import { garmentAtScale, layerParts, PART_ORDER, removeUncovered, shadeAndBlend, type GarmentLayer } from './compose.ts';
import { garmentSamples, productMask, productParts, type GarmentParts } from './garment.ts';
import { clothingMask, wornParts } from './garment-worn.ts';
import { bodyParts, inShape, shapeBounds, shapesMask, type BodyParts, type Cuff, type PartName } from './parts.ts';
import { segmentDistance, type Shape } from '../../steps/person-instance.ts';
import { tryonSpec } from './spec.ts';
import { andNot, area, intersect, notAbove, union } from './masks.ts';
import { warpPart } from './warp.ts';

export interface TryonRender {
  image: RgbImage;
  result: RgbImage;
  person: PersonAnalysis;
  body: Body;
  protect: Uint8Array;
  garment: { image: RgbImage; parts: GarmentParts; source: 'person' | 'product'; mask: Uint8Array; sealed?: Uint8Array };
  parts: BodyParts;
  warped: Array<{ name: PartName; warped: Float32Array; region: Region; clip: Uint8Array; cuff?: Cuff }>;
  layer: GarmentLayer;
  /** `image` with the old clothing the garment leaves uncovered filled: the picture under the garment. */
  under: RgbImage;
  hole: Uint8Array;
  filled: number;
  crop: { x: number; y: number; width: number; height: number };
  /** The pixels of the person photo `image` is (its top-left pixel exactly; crop's may be a pixel off). */
  window: Region;
}

/** A CIE Lab colour. */
type Lab = readonly [number, number, number];

/** How far in CIE L a pixel may lie from the face's skin and still be skin (steps/color.ts skinColoured): a lit or shaded arm. */
const SKIN_LIGHTNESS = 35;

/** The pixels within `m` of points, clipped to the photo: inclusive bounds. */
function pointsBox(pts: readonly P[], m: number, W: number, H: number): { x0: number; x1: number; y0: number; y1: number } {
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  return {
    x0: Math.max(0, Math.floor(Math.min(...xs) - m)),
    x1: Math.min(W - 1, Math.ceil(Math.max(...xs) + m)),
    y0: Math.max(0, Math.floor(Math.min(...ys) - m)),
    y1: Math.min(H - 1, Math.ceil(Math.max(...ys) + m)),
  };
}

/**
 * Skin-coloured pixels (near the face's skin colour in chroma) within `within`, 0/1, with the
 * specks inside skin closed (radius `r`). An arm in shade or lit from the side drifts 11-15
 * from the face's chroma: with a tighter bound its pixels counted as old clothing, and where
 * BlazePose put the arm inside the torso the fill painted the floor's jeans onto it.
 */
function skinMask(image: RgbImage, ref: Lab | null, within: Uint8Array, r: number, boxes?: Region[]): Uint8Array {
  const { width: W, height: H } = image;
  const out = new Uint8Array(W * H);
  const box = ref ? maskBox(within, W, H) : null;
  if (!ref || !box) return out;
  // No destructuring, and the squared distance (Math.hypot, as before, only within rounding of
  // the threshold): this runs for every pixel of the band. Only the band's box is walked.
  for (let y = box.y; y < box.y + box.height; y++) {
    for (let i = y * W + box.x; i < y * W + box.x + box.width; i++) {
      if (!within[i]) continue;
      if (skinColoured(labAt(image.data, i), ref, SKIN_LIGHTNESS)) out[i] = 1;
    }
  }
  // Then, per box (each arm's, or the band's), the skin of its own colour too: the median of what
  // the face's colour found there. An arm lit warmer or shaded deeper than the face drifts past
  // the face's chroma bound (s5-red-top's shaded upper arm, b* 37-39 against her face's 20): its
  // outer half was taken for clothing, and a dress was drawn over it.
  for (const b of boxes ?? [box]) ownSkin(image, within, out, b);
  // The closing grows nothing past the band's box by more than r: the cut back to the band there.
  // With `boxes` (parts of the band far apart), each is closed on its own box.
  let closed: Uint8Array = out;
  if (boxes) for (const b of boxes) closeInBox(closed, W, b, r);
  else closed = close(out, W, H, r);
  for (let y = Math.max(0, box.y - r - 1); y < Math.min(H, box.y + box.height + r + 1); y++) {
    for (let i = y * W + Math.max(0, box.x - r - 1); i < y * W + Math.min(W, box.x + box.width + r + 1); i++) if (!within[i]) closed[i] = 0;
  }
  return closed;
}

/**
 * Sets `out` (0/1, in place) on the pixels of `within` in box `b` of the skin colour already found
 * there: skinColoured against the median CIE Lab of `out`'s pixels in the box (every other row
 * and column), once they are at least OWN_SKIN_MIN of the box's `within` (too few say nothing of
 * the skin's colour there).
 */
function ownSkin(image: RgbImage, within: Uint8Array, out: Uint8Array, b: Region): void {
  const W = image.width;
  let n = 0, m = 0;
  for (let y = b.y; y < b.y + b.height; y += 2) for (let i = y * W + b.x; i < y * W + b.x + b.width; i += 2) if (within[i]) (m++, (n += out[i]!));
  if (n < OWN_SKIN_MIN * m || n < 50) return;
  const Ls = new Float64Array(n), As = new Float64Array(n), Bs = new Float64Array(n);
  let k = 0;
  for (let y = b.y; y < b.y + b.height; y += 2) {
    for (let i = y * W + b.x; i < y * W + b.x + b.width; i += 2) {
      if (!within[i] || !out[i]) continue;
      const lab = labAt(image.data, i);
      (Ls[k] = lab[0]), (As[k] = lab[1]), (Bs[k++] = lab[2]);
    }
  }
  const { ref } = labMedians(Ls, As, Bs);
  for (let y = b.y; y < b.y + b.height; y++) {
    for (let i = y * W + b.x; i < y * W + b.x + b.width; i++) {
      if (within[i] && !out[i] && skinColoured(labAt(image.data, i), ref, SKIN_LIGHTNESS)) out[i] = 1;
    }
  }
}

/** The share of a box's pixels that must be of the face's skin colour for ownSkin to take their colour as the skin's there. */
const OWN_SKIN_MIN = 0.05;

/**
 * Bare skin of the forearms and hands (0/1): skin-coloured pixels of the instance near the arms
 * below the armpits (within 0.22 body sizes of the elbow -> wrist -> hand bones and the lower
 * upper arm), off the bare chest and shoulders (notArms), connected to BlazePose's forearm and
 * hand capsules. The capsules alone follow the
 * landmarks, and where BlazePose puts an arm a little inside the torso (person-standing) the
 * torso covered the arm's outer half and the hands' edge. Not face or hair (protect).
 */
function armSkin(image: RgbImage, ref: Lab | null, instance: Uint8Array, protect: Uint8Array, b: Body, sleeved: boolean): Uint8Array | undefined {
  if (!ref) return undefined;
  const { W, H, size } = b;
  // The bones whose surroundings are searched, per image side.
  const bones = (s: 'L' | 'R'): Array<[P, P]> => [
    [lerp(b[s].shoulder, b[s].elbow, 0.3), b[s].elbow],
    [b[s].elbow, b[s].wrist],
    [b[s].wrist, b[s].index],
    [b[s].wrist, b[s].pinky],
  ];
  const near = (r: number) => shapesMask((['L', 'R'] as const).flatMap((s) => bones(s).map(([a, c]) => ({ a, b: c, r }))), W, H);
  const band = andNot(intersect(near(0.22 * size), instance), protect, shapesMask(notArms(b, sleeved), W, H));
  // Each arm's skin closed on its own box (one box over both arms spanned the torso between
  // them: most of this step's time).
  const r = Math.max(1, Math.round(0.01 * size));
  const boxes = (['L', 'R'] as const).map((s) => {
    const { x0, x1, y0, y1 } = pointsBox(bones(s).flat(), 0.22 * size + r + 2, W, H);
    return { x: x0, y: y0, width: Math.max(1, x1 - x0 + 1), height: Math.max(1, y1 - y0 + 1) };
  });
  const bare = skinMask(image, ref, band, r, boxes);
  return componentsTouching(bare, near(0.06 * size), W, H);
}

/**
 * Whether a pixel is skin of the instance (the face's skin colour, off face, hair and the bare
 * chest) within 0.22 body sizes of an upper arm (shoulder to elbow), shoulder caps included: what
 * a sleeve is centred on (parts.ts). Tested when asked: parts.ts asks along a sleeve's station
 * walks only (a mask of the upper arms' skin cost ~13 ms at 1 MP).
 */
function upperArmSkin(image: RgbImage, ref: Lab | null, instance: Uint8Array, protect: Uint8Array, b: Body): ((i: number) => boolean) | undefined {
  if (!ref) return undefined;
  const W = image.width, R = 0.22 * b.size;
  // Not the bare chest between the shoulders (notArms): a walk inwards from a low-cut top's
  // shoulder ran on over the chest and pushed the sleeve onto it.
  const chest = shapesMask(notArms(b, false), W, image.height);
  return (i) => {
    if (!instance[i] || protect[i] || chest[i]) return false;
    const x = (i % W) + 0.5, y = Math.floor(i / W) + 0.5;
    if (segmentDistance(b.L.shoulder, b.L.elbow, x, y) > R && segmentDistance(b.R.shoulder, b.R.elbow, x, y) > R) return false;
    return skinColoured(labAt(image.data, i), ref, SKIN_LIGHTNESS);
  };
}

/**
 * Bare legs in front of the torso (a person sitting with her knees drawn up): skin-coloured pixels
 * of the instance below the chest (a fifth of the way from the neck to the hips: BlazePose's
 * shoulders on s5-top lie low, and a third left her knee's top under the T-shirt) down to 1.2
 * torso lengths below the hips, off face, hair and the upper arms, in pieces that reach the
 * photo's bottom edge without the bare arms' skin (`arms`) and hold at least 0.02 body sizes
 * squared, grown back through all of the skin. Bare skin of the chest is cut from them by the
 * clothing between; a hand or forearm resting on a knee joins them and stays in front with them
 * (as would a forearm touching a knee, up to the upper arm's capsule).
 */
function legsInFront(image: RgbImage, ref: Lab | null, instance: Uint8Array, protect: Uint8Array, b: Body, arms: Uint8Array | undefined): Uint8Array | undefined {
  if (!ref) return undefined;
  const { W, H, size } = b;
  const chest = lerp(b.neck, b.pelvis, 0.2);
  const depthAt = (x: number, y: number) => (x - chest[0]) * b.down[0] + (y - chest[1]) * b.down[1];
  // Down to 1.2 torso lengths below the hips: legs that reach the frame's bottom only farther down
  // are a standing person's, below any top. Such a photo's bottom edge lies past that at both
  // corners, and nothing is looked at.
  const reach = 2 * b.tl;
  if (depthAt(0.5, H - 0.5) >= reach && depthAt(W - 0.5, H - 0.5) >= reach) return undefined;
  // Not the upper arms (a short sleeve's place): an arm hanging to the frame's bottom is skin
  // reaching it too.
  const upper = shapesMask(armShapes(b, { forearm: false, hands: false }), W, H);
  // Whether a pixel is bare skin here, tested once, when a flood from the bottom edge reaches it
  // (a test of every pixel below the chest cost ~30 ms at 1 MP).
  const memo = takeBytes(W * H);
  const bare = (i: number): boolean => {
    if (memo[i]) return memo[i] === 1;
    const x = i % W, depth = depthAt(x + 0.5, (i - x) / W + 0.5);
    const ok = !!instance[i] && !protect[i] && !upper[i] && depth > 0 && depth < reach && skinColoured(labAt(image.data, i), ref, SKIN_LIGHTNESS);
    memo[i] = ok ? 1 : 2;
    return ok;
  };
  // The pieces that reach the bottom edge without the bare arms' skin (an arm hanging to the
  // frame's bottom beside a low-cut top took the bare side of the chest with it on s6-green-dress),
  // large enough, grown back through all of the skin (a forearm resting on the knee stays with it).
  const legSkin = (i: number) => bare(i) && !arms?.[i];
  const stack = takeInts(W * H), seen = takeBytes(W * H);
  const least = 0.02 * size * size;
  const seeds: number[] = [];
  for (let i = (H - 1) * W; i < W * H; i++) if (!seen[i] && legSkin(i) && floodWhere(i, W, H, legSkin, seen, stack) >= least) seeds.push(i);
  const legs = new Uint8Array(W * H);
  for (const i of seeds) if (!legs[i]) floodWhere(i, W, H, bare, legs, stack);
  giveBack(memo, seen, stack);
  if (!seeds.length) return undefined;
  // Closed over 0.03 body sizes, holes of up to 0.01 body sizes squared filled (then off face,
  // hair and the upper arms again): a knee's highlight, off the skin's colour and off the person
  // mask, let the garment through as a striped square on s5-top's knee, and a gap between two
  // knees as a small white box.
  const r = Math.max(1, Math.round(0.03 * size));
  const gb = grownMaskBox(legs, W, H, r);
  if (!gb) return undefined;
  const box = { x: gb.x0, y: gb.y0, width: gb.x1 - gb.x0, height: gb.y1 - gb.y0 };
  closeInBox(legs, W, box, r);
  const crop = new Uint8Array(box.width * box.height);
  for (let y = 0; y < box.height; y++) crop.set(legs.subarray((y + box.y) * W + box.x, (y + box.y) * W + box.x + box.width), y * box.width);
  const filled = fillHoles(crop, box.width, box.height, 0.01 * size * size);
  for (let y = 0; y < box.height; y++) {
    for (let x = 0, i = (y + box.y) * W + box.x, j = y * box.width; x < box.width; x++, i++, j++) legs[i] = filled[j] && !protect[i] && !upper[i] ? 1 : 0;
  }
  return legs;
}

/**
 * A CIE Lab colour's cell in a coarse palette: L* in steps of 6.25, a* and b* in steps of 8 from
 * -64 (16 x 16 x 16 cells).
 */
function paletteCell(lab: [number, number, number]): number {
  const q = (v: number) => Math.min(15, Math.max(0, Math.floor(v)));
  return (q(lab[0] / 6.25) << 8) | (q((lab[1] + 64) / 8) << 4) | q((lab[2] + 64) / 8);
}

/** Below this share of an arm's core showing the target's skin or torso clothing, the arm is not the target's (unseenArms). */
const ARM_SEEN = 0.3;

/**
 * The arms whose landmarks lie on something that is not the target's: under ARM_SEEN of the arm's
 * core (0.05 body sizes either side of its bones from 0.35 of the upper arm down to the wrist,
 * face and hair left out) is on the instance and of the target's skin or of a colour common on her
 * torso's clothing (a palette cell holding 0.3% of the torso's core: 0.18 body sizes either side
 * of the spine, its skin left out). BlazePose puts an arm that the photo does not show where it
 * guesses it, with high visibility at times (0.80 at the elbow on s5-red-top, whose far arm it laid
 * on her neighbour's dress): the sleeve was drawn there, on the neighbour. The arms the photo
 * shows hold 0.44-1.0 of their core; the misplaced ones 0.04-0.24 (s5-red-top, s5-top and
 * s6-green-dress on a neighbour, person-standing-mirror on a neighbour's arm hugging her,
 * group-four beside her sleeve on the gap to her neighbour).
 */
function unseenArms(image: RgbImage, ref: Lab | null, instance: Uint8Array, protect: Uint8Array, b: Body): Array<'L' | 'R'> {
  const top = lerp(b.neck, b.pelvis, 0.15), bottom = lerp(b.neck, b.pelvis, 0.85);
  return unseenLimbs(image, ref, instance, protect, b, { a: top, b: bottom, r: 0.18 * b.size }, (j) => [[lerp(j.shoulder, j.elbow, 0.35), j.elbow], [j.elbow, j.wrist]], ARM_SEEN);
}

/** Below this share of a thigh's core showing the target's skin or the clothing at her hips, the leg is not the target's (unseenLegs). */
const LEG_SEEN = 0.3;

/**
 * The legs whose landmarks lie on something that is not the target's, as unseenArms tells arms:
 * under LEG_SEEN of the thigh's core (0.05 body sizes either side of the bone from 0.35 of the way
 * from the hip to the knee, face and hair left out) is on the instance and of the target's skin or
 * of a colour common around her pelvis (a palette cell holding 0.3% of a disc of 0.18 body sizes
 * about it, her skin left out). Legs out of the frame are not judged. On the whole of face-api's
 * sample6 (and its s6-red-dress crop) BlazePose lays the turned maroon dress's image-right knee on
 * the striped jumpsuit beside her: 0.00-0.18 of that thigh's core is hers, 0.57-1.0 of every other
 * development photo's legs.
 */
function unseenLegs(image: RgbImage, ref: Lab | null, instance: Uint8Array, protect: Uint8Array, b: Body): Array<'L' | 'R'> {
  return unseenLimbs(image, ref, instance, protect, b, { a: b.pelvis, b: b.pelvis, r: 0.18 * b.size }, (j) => [[lerp(j.hip, j.knee, 0.35), j.knee]], LEG_SEEN);
}

/**
 * unseenArms' and unseenLegs' test: the image sides whose limb core (`bones`, 0.05 body sizes
 * either side) holds under `seen` of pixels on the instance and of the target's skin (`ref`) or of
 * a colour common in `palette` (a capsule of the instance, face and hair and skin left out: a
 * palette cell holding 0.3% of it). Every third row and column: shares, not masks (47 ms at 1 MP
 * on every pixel of the torso's capsule).
 */
function unseenLimbs(
  image: RgbImage,
  ref: Lab | null,
  instance: Uint8Array,
  protect: Uint8Array,
  b: Body,
  palette: { a: P; b: P; r: number },
  bones: (j: Body['L']) => Array<[P, P]>,
  seen: number,
): Array<'L' | 'R'> {
  const { W, H, size } = b;
  const cells = new Uint32Array(1 << 12);
  let n = 0;
  const tb = pointsBox([palette.a, palette.b], palette.r, W, H);
  for (let y = tb.y0; y <= tb.y1; y += 3) {
    for (let x = tb.x0; x <= tb.x1; x += 3) {
      const i = y * W + x;
      if (!instance[i] || protect[i] || segmentDistance(palette.a, palette.b, x + 0.5, y + 0.5) > palette.r) continue;
      const lab = labAt(image.data, i);
      if (ref && skinColoured(lab, ref, SKIN_LIGHTNESS)) continue;
      cells[paletteCell(lab)]!++;
      n++;
    }
  }
  const common = Math.max(1, 0.003 * n);
  return (['L', 'R'] as const).filter((s) => {
    const core = bones(b[s]);
    const rc = 0.05 * size;
    const ab = pointsBox(core.flat(), rc, W, H);
    let all = 0, hers = 0;
    for (let y = ab.y0; y <= ab.y1; y += 3) {
      for (let x = ab.x0; x <= ab.x1; x += 3) {
        const i = y * W + x;
        if (protect[i] || core.every(([p, q]) => segmentDistance(p, q, x + 0.5, y + 0.5) > rc)) continue;
        all++;
        if (!instance[i]) continue;
        const lab = labAt(image.data, i);
        if ((ref && skinColoured(lab, ref, SKIN_LIGHTNESS)) || (n > 0 && cells[paletteCell(lab)]! >= common)) hers++;
      }
    }
    return all > 0 && hers < seen * all;
  });
}

/**
 * Where bare skin is no arm's, as shapes. The bare chest and shoulders' tops: between the shoulder
 * joints' columns (inset by 0.08 body sizes) from a fifth of the shoulder width above their line
 * down to a third of the way to the hips. A strapless or tank top leaves them bare, and, connected
 * to the bare arms' skin, they were cut out of the new top with the arms: a T-shirt drawn as a
 * tube top. With `sleeved`, the shoulder caps too (the top 30% of each upper arm, 0.12 body sizes
 * around it): under a garment with sleeves they are the torso's (parts.ts), and counted as the
 * bare arm's skin they stayed bare between a T-shirt's torso and its sleeve (s5-top's upper arm
 * 85% -> 93% covered). A sleeveless dress leaves them bare (taken as the torso's, its edge hung in
 * tongues over s6-left's arm).
 */
function notArms(b: Body, sleeved: boolean): Shape[] {
  const inset = 0.08 * b.size, lift = 0.2 * b.sw;
  const L = b.L.shoulder, R = b.R.shoulder;
  const at = (p: P, dAcross: number, dDown: number): P => [p[0] + b.across[0] * dAcross + b.down[0] * dDown, p[1] + b.across[1] * dAcross + b.down[1] * dDown];
  const depth = 0.33 * b.tl;
  const chest: Shape = { poly: [at(L, inset, -lift), at(R, -inset, -lift), at(R, -inset, depth), at(L, inset, depth)] };
  if (!sleeved) return [chest];
  return [chest, ...(['L', 'R'] as const).map((s) => ({ a: b[s].shoulder, b: lerp(b[s].shoulder, b[s].elbow, 0.3), r: 0.12 * b.size }))];
}

/** The garment photo: a person wearing it when one is clearly there, else a product photo. */
async function analyzeGarment(ctx: PipelineContext, image: RgbImage, type: ClothesType, t: StageTimer): Promise<TryonRender['garment']> {
  const g = await analyzePerson(ctx, image, t, { faceRequired: true });
  if (g.body && g.face && g.heightFraction > 0.4) {
    const b = g.body;
    const need = type === 'lower_body' ? [b.inL.hip, b.inR.hip] : [b.inL.shoulder, b.inR.shoulder, b.inL.hip, b.inR.hip];
    if (need.every(Boolean)) {
      const { protect, skin } = await faceAndHair(ctx, g, t);
      const cloth = await t.time('garment', () => clothingMask(g, protect, skin));
      const parts = await t.time('garment', () => wornParts(g, b, cloth, type));
      const mask = Object.values(parts.masks).reduce((a, m) => union(a, m), new Uint8Array(cloth.length));
      if (area(mask) > 0.02 * mask.length) return { image, parts, source: 'person', mask };
    }
  }
  const { mask, sealed } = await t.time('garment', () => productMask(image));
  if (area(mask) < 0.01 * mask.length) throw new AppError('INPUT_INVALID', 'no garment found in the clothes image');
  const parts = await t.time('garment', () => productParts(mask, image.width, image.height, type));
  return { image, parts, source: 'product', mask, sealed };
}

/**
 * The whole try-on, with every intermediate (the demo's debug sheet draws them). `found`:
 * findTarget's answer on `personImg0`, when the caller has it already; `onPart`: `personImg0` is
 * a part of a group photo (renderAtWorkSize).
 */
export async function renderTryon(ctx: PipelineContext, garmentImg: RgbImage, personImg0: RgbImage, type: ClothesType, forcedCutting: boolean, t: StageTimer, found?: Found, onPart = false): Promise<TryonRender> {
  // On a part of a group photo her landmarks must lie on her face (landmarksOnFace), or the part is
  // given up before anything else is done there: renderAtWorkSize takes this refusal as the part's
  // and works on the whole photo (the message is never the answer's).
  if (onPart) {
    found ??= await findTarget(ctx, personImg0, t);
    if (!landmarksOnFace(found)) throw new AppError('NO_PERSON_FOUND', "the target's landmarks on her part of the photo lie off her face");
  }
  let person = await analyzePerson(ctx, personImg0, t, { found });
  let crop = { x: 0, y: 0, width: personImg0.width, height: personImg0.height };
  let window: Region = crop;
  if (forcedCutting && person.body) {
    const cut = await t.time('crop', () => cutTo3by4(person));
    crop = cut.crop;
    window = cut.window;
    person = await analyzePerson(ctx, cut.image, t);
  }
  const body = person.body;
  checkBody(body, person.heightFraction, type, 'the model image', person.unclear);
  const { image, instance } = person;
  const W = image.width, H = image.height;
  const { protect, skin: skinRgb } = await faceAndHair(ctx, person, t);
  // The face's skin colour (CIE Lab), what every skin test below measures against.
  const skin = skinRgb ? srgbToLab(skinRgb[0], skinRgb[1], skinRgb[2]) : null;
  // Trousers or a skirt along a leg that BlazePose lays on someone else were drawn across her
  // (the whole of face-api's sample6: the trousers reached the striped jumpsuit's hip): refused,
  // naming the leg, as a leg out of the frame is.
  if (type === 'lower_body') checkLegsSeen(await t.time('body', () => unseenLegs(image, skin, instance, protect, body)), type, 'the model image');
  const garment = await analyzeGarment(ctx, garmentImg, type, t);

  // The garment's parts at this body's scale.
  const g = garment.parts;
  const scale = ((type === 'lower_body' ? 0.9 : 1.2) * body.size) / g.width;
  const lengths = Object.fromEntries(Object.entries(g.lengths).map(([k, v]) => [k, v * scale]));
  const sleeved = !!(lengths.sleeveL || lengths.sleeveR);
  const unseen = await t.time('body', () => unseenArms(image, skin, instance, protect, body));
  if (unseen.length && person.others.length) {
    // An arm BlazePose lays on someone else (its core off her colours) drew her instance onto them
    // in the split by skeletons: on whole sample6 at 1150 px her far arm's line ran down the edge of
    // the jumpsuit beside her, whose wearer has no skeleton that follows her, and 5.8-6.5% of the
    // garment was drawn on the jumpsuit. The split is made again without that arm's capsules, and
    // her instance keeps only what both splits give her (the other heads cut from it stay cut).
    const again = await t.time('instance', () => targetSplit({ ...person, body }, numberParam(ctx.params, 'instance_reach', 'tryon'), unseen));
    for (let i = 0; i < instance.length; i++) if (!again[i]) instance[i] = 0;
  }
  const { parts, legs } = await t.time('body', () => {
    const bareArms = armSkin(image, skin, instance, protect, body, sleeved);
    const parts = bodyParts(body, instance, type, lengths, {
      skirtLike: g.skirt,
      armSkin: bareArms,
      skinAt: sleeved ? upperArmSkin(image, skin, instance, protect, body) : undefined,
      protect,
      collarFaceWidth: person.face?.box.width,
      unseen,
    });
    // Bare knees drawn up in front of a top stay in front; under a long sleeve not that arm's
    // forearm resting on them (the sleeve covers it).
    let legs = type === 'upper_body' ? legsInFront(image, skin, instance, protect, body, bareArms) : undefined;
    const longSleeved = (['L', 'R'] as const).filter((sd) => parts.cuffs[`sleeve${sd}`]?.short === false);
    if (legs && longSleeved.length) legs = andNot(legs, shapesMask(armShapes(body, { upper: false, hands: false, sides: longSleeved }), W, H));
    return { parts, legs };
  });

  // What each part's warp samples (garmentSamples): the garment's core and its bled colours.
  const { core, source } = await t.time('garment', () => garmentSamples(garment));
  const warp = await ctx.session('warp');
  const warped: TryonRender['warped'] = [];
  for (const name of PART_ORDER) {
    const from = g.strips[name], to = parts.strips[name], clip = parts.clips[name], mask = g.masks[name];
    if (!from || !to || !clip || !mask) continue;
    const region = maskBox(clip, W, H);
    if (!region) continue;
    // A sleeve's outline is its clip's (the arm below the shoulder, cut at the cuff): it samples
    // the whole garment, so where the clip reaches past the product photo's sleeve (its slanted
    // armhole, its edge) the shoulder's cloth runs on instead of the old clothing showing.
    const cuff = parts.cuffs[name];
    // (The core lies within the whole garment's mask: a sleeve's is the core itself.)
    const partMask = cuff ? core : intersect(mask, core);
    // A dress's torso, the pelvis and the skirt (wide strips whose edges swing with the body's
    // outline) through their quads, evenly stretched across each row; limbs, which bend, through
    // the spline, and so is a top's torso: its quads follow the torso's measured edges to the
    // clip's, and where the instance takes in a neighbour beside a hidden arm (s5-red-top) the
    // T-shirt followed onto her dress (1.7% of the pixels away from the target changed, 0.2%
    // with the spline, which falls short of such an edge).
    const quads = !cuff && ((name === 'torso' && type === 'dresses') || name === 'pelvis' || name === 'skirt');
    warped.push({ name, ...(await t.infer('warp', () => warpPart(warp, source, partMask, from, to, region, { affine: cuff?.short, quads }))), clip, cuff });
  }

  // Compose: face, hair, hands and legs in front; old clothing removed where uncovered; the photo's light.
  const front = legs ? union(union(protect, parts.hands), legs) : union(protect, parts.hands);
  const layer = await t.time('composite', () => layerParts(W, H, warped, front, { maxArea: Math.round(SPECK * body.size * body.size), seenThrough: protect }));
  checkOffOthers(await t.time('composite', () => onOtherBodies(layer.alpha, person, W, H)));
  const removal = await t.time('removal', () => {
    const skinLike = skinMask(image, skin, parts.band, Math.max(1, Math.round(0.02 * body.size)));
    // (Legs in front are not old clothing: a knee's highlight, off the skin's colour, was filled.)
    const clothing = legs ? andNot(instance, union(protect, legs), skinLike) : andNot(instance, protect, skinLike);
    const background = andNot(notAbove(person.everyone, 127), instance);
    return removeUncovered(image, layer, parts.band, clothing, background, skinLike);
  });
  const result = await t.time('composite', () => shadeAndBlend(image, removal.image, layer, body.size));
  return { image, result, person, body, protect, garment, parts, warped, layer, under: removal.image, hole: removal.hole, filled: removal.filled, crop, window };
}

/**
 * The most of the garment's coverage that may lie on other people's bodies (their BlazePose
 * skeletons' capsules, 0.4 body sizes wide) before the target's body counts as not told apart from
 * theirs. On the development photos, groups among them, it is 0.000-0.001 for every type; where
 * BlazePose mixes the target with the people she sits among (face-api's sample5, the woman in
 * black at its centre left: her hips and knees laid on the legs of the woman above her), 0.34 of
 * the T-shirt and 0.59 of the dress lay on them on the whole photo re-encoded (worked on her
 * columns), 0.44 and 0.52 on its cut at (300, 200) (the test's), drawn in pieces across two people.
 */
const ON_OTHERS = 0.15;

/**
 * The share of the garment's coverage on other people's skeletons (0 without any): each shape's
 * box within the garment's, and only the garment's pixels there (a whole-frame mask of the
 * skeletons cost ~5% of a group photo's try-on).
 */
function onOtherBodies(alpha: Float32Array, person: PersonAnalysis, W: number, H: number): number {
  if (!person.otherBodies) return 0;
  let all = 0;
  const g = { x0: W, y0: H, x1: -1, y1: -1 };
  for (let y = 0, i = 0; y < H; y++) {
    for (let x = 0; x < W; x++, i++) {
      const a = alpha[i]!;
      if (a <= 0) continue;
      all += a;
      if (x < g.x0) g.x0 = x;
      if (x > g.x1) g.x1 = x;
      if (y < g.y0) g.y0 = y;
      if (y > g.y1) g.y1 = y;
    }
  }
  if (all <= 0) return 0;
  const seen = new Uint8Array(W * H);
  let on = 0;
  for (const s of person.others.slice(0, person.otherBodies).flat()) {
    const { x0, x1, y0, y1 } = shapeBounds(s, g);
    for (let y = y0; y <= y1; y++) {
      for (let x = x0, i = y * W + x0; x <= x1; x++, i++) {
        if (alpha[i]! <= 0 || seen[i] || !inShape(s, x, y)) continue;
        seen[i] = 1;
        on += alpha[i]!;
      }
    }
  }
  return on / all;
}

/** A refusal (get-job 300104) where the garment would lie on other people (ON_OTHERS). */
function checkOffOthers(share: number): void {
  if (share <= ON_OTHERS) return;
  throw new AppError(
    'NO_PERSON_FOUND',
    `the body of the person in the model image cannot be told apart from the people around them: ${Math.round(share * 100)}% of the garment would lie on another person's body (at most ${Math.round(ON_OTHERS * 100)}%): a photo where one person's body shows clearly, not hidden among others, works best`,
  );
}

/**
 * The largest island of garment coverage (in body sizes squared) that layerParts clears as a
 * speck: the specks where an arm's skin has gaps reach 0.005 (up to ~23 px across on s5-red-top);
 * a piece of garment between an arm and the waist is a few hundredths.
 */
const SPECK = 0.006;

/** Coverage 0..1 as 0..255 (a typed loop: Uint8Array.from with a mapper cost ~200 ms at 1 MP). */
function alphaMask(alpha: Float32Array): Uint8Array {
  const out = new Uint8Array(alpha.length);
  for (let i = 0; i < alpha.length; i++) out[i] = Math.round(alpha[i]! * 255);
  return out;
}

/**
 * renderTryon on the part of the person photo worth working on, at the size worth working on, and
 * its picture and garment mask back in the photo's pixels:
 *   - on a group photo the columns around the target (analysis.ts personRegion), pasted back;
 *     not with forced_cutting, whose picture is a crop around her anyway. The part's target must
 *     be the photo's (its face's centre inside the photo's target face box) with her landmarks
 *     on her face (analysis.ts landmarksOnFace, checked before anything else there), and a
 *     refusal is the whole photo's to give: otherwise the whole photo is worked on (with the
 *     detections and landmarks made).
 *   - a part (or photo) of more than the version's max_work_pixels (a phone photo is 12 MP)
 *     scaled down to that many pixels, and what changed scaled back up over its own pixels
 *     (compose.ts garmentAtScale): every stage after the models costs per pixel of the person
 *     (a 5.5 MP photo of a standing person took 5 s on this project's 2-core machines). Every
 *     development photo is smaller (at most ~1 MP) and is worked on at its own scale.
 * `toPhoto` and `boxToPhoto` map the work picture's coordinates to the returned picture's.
 */
export async function renderAtWorkSize(ctx: PipelineContext, garmentImg: RgbImage, personImg: RgbImage, type: ClothesType, forcedCutting: boolean, t: StageTimer) {
  const located = forcedCutting ? undefined : await findTarget(ctx, personImg, t);
  let region = located ? await personRegion(ctx, personImg, located, t) : null;
  const maxPixels = numberParam(ctx.params, 'max_work_pixels', 'tryon');
  const attempt = async (part: Region | null) => {
    const photo = part ? await t.time('preprocess', () => cropRgb(personImg, part)) : personImg;
    const k = photo.width * photo.height > maxPixels ? Math.sqrt(maxPixels / (photo.width * photo.height)) : 1;
    const work = k < 1 ? await t.time('preprocess', () => scaledRgb(photo, k)) : photo;
    // The whole photo's own detections serve when it is worked on whole, at its own scale.
    return { photo, k, work, r: await renderTryon(ctx, garmentImg, work, type, forcedCutting, t, !part && k === 1 ? located : undefined, !!part) };
  };
  // (Only a refusal falls back: a cancelled task or a failing model stops here.)
  let run = region ? await attempt(region).catch((e: unknown) => (e instanceof AppError && e.code === 'NO_PERSON_FOUND' ? null : Promise.reject(e))) : null;
  if (run && region && located!.fi >= 0) {
    const f = run.r.person.face?.box, want = located!.faces[located!.fi]!.box;
    const kx = run.photo.width / run.work.width, ky = run.photo.height / run.work.height;
    const at = f ? [(f.x + f.width / 2) * kx + region.x, (f.y + f.height / 2) * ky + region.y] : [NaN, NaN];
    if (!(Math.abs(at[0]! - want.x - want.width / 2) < want.width / 2 && Math.abs(at[1]! - want.y - want.height / 2) < want.height / 2)) run = null;
  }
  if (!run) {
    region = null;
    run = await attempt(null);
  }
  const { photo, k, work, r } = run;
  // From the work picture's pixels to the photo's (1 and 0 when worked on as it is).
  const kx = photo.width / work.width, ky = photo.height / work.height;
  const ox = region?.x ?? 0, oy = region?.y ?? 0;
  let result = r.result, alpha = alphaMask(r.layer.alpha);
  if (k < 1) {
    const at = await t.time('composite', async () => {
      const w = r.window;
      const box = { x: Math.round(w.x * kx), y: Math.round(w.y * ky), width: Math.round(w.width * kx), height: Math.round(w.height * ky) };
      const full = box.x === 0 && box.y === 0 && box.width === photo.width && box.height === photo.height ? photo : { data: await cropPadded(photo, box), width: box.width, height: box.height };
      const { data, mask } = await garmentAtScale(full, r.image, r.under, r.result, r.layer.alpha);
      return { picture: { data, width: full.width, height: full.height }, mask };
    });
    result = at.picture;
    alpha = at.mask;
  }
  if (region) {
    const part = region;
    ({ result, alpha } = await t.time('composite', () => ({
      result: { data: pasteInto(copyBytes(personImg.data), personImg.width, result.data, part, 3), width: personImg.width, height: personImg.height },
      alpha: pasteInto(new Uint8Array(personImg.width * personImg.height), personImg.width, alpha, part, 1),
    })));
  }
  const moved = k < 1 || !!region;
  const toPhoto = (p: readonly [number, number]): [number, number] => [p[0] * kx + ox, p[1] * ky + oy];
  const boxToPhoto = <B extends { x: number; y: number; width: number; height: number }>(b: B): B =>
    moved ? { ...b, x: Math.round(b.x * kx + ox), y: Math.round(b.y * ky + oy), width: Math.round(b.width * kx), height: Math.round(b.height * ky) } : b;
  return { r, result, alpha, region, k, work, toPhoto, boxToPhoto };
}

export const tryon = definePipeline(tryonSpec, async (ctx, input, files) => {
  const type = input.clothes_type;
  const t = stageTimer(ctx.signal);
  const [garmentImg, personImg] = await t.time('decode', () =>
    Promise.all([decodeImage(files.clothes_image[0]!, { maxPixels: ctx.maxPixels }), decodeImage(files.custom_model[0]!, { maxPixels: ctx.maxPixels })]),
  );
  const { r, result, alpha, region, k, work, toPhoto, boxToPhoto } = await renderAtWorkSize(ctx, garmentImg, personImg, type, input.forced_cutting, t);
  const { width: W, height: H } = result;
  const [encoded, maskPng] = await t.time('encode', () =>
    Promise.all([pictureFile('result-1', result, input.output_format, numberParam(ctx.params, 'jpeg_quality', 'tryon')), maskFile('garment-mask.png', alpha, W, H)]),
  );
  const round = (p: [number, number]) => toPhoto(p).map((v) => Math.round(v * 10) / 10);
  const roundGarment = (p: [number, number]) => [Math.round(p[0] * 10) / 10, Math.round(p[1] * 10) / 10];
  const strips = (s: Partial<Record<PartName, { centre: Array<[number, number]> }>>, r: (p: [number, number]) => number[]) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.centre.map(r)]));
  const b = r.body;
  const left: string[] = [];
  if (type !== 'lower_body') left.push('clothing on the arms outside the new sleeves (forearms and hands stay as they are)', 'clothing below the garment band (hips down)');
  else left.push('clothing above the waistband', 'clothing of the hips and legs that the new garment does not cover (not filled for lower_body: no background is painted into a leg or copied from a neighbour)', 'clothing below the new hem on the lower legs and feet');
  return {
    files: [
      encoded,
      maskPng,
      jsonFile('tryon.json', {
        clothes_type: type,
        prompt: input.prompt ?? '',
        prompt_used: false,
        forced_cutting: input.forced_cutting,
        crop: input.forced_cutting ? boxToPhoto(r.crop) : { x: 0, y: 0, width: W, height: H },
        // Under 1 when the person photo had more than the version's max_work_pixels.
        work_scale: Math.round(k * 1000) / 1000,
        width: W,
        height: H,
        target: {
          rule: 'the largest, most central person: face box area x (1 - 0.6 x distance from the centre / half the diagonal)',
          face: r.person.face ? boxToPhoto(r.person.face.box) : null,
          other_people: r.person.others.length,
          height_fraction: Math.round(r.person.heightFraction * 1000) / 1000,
        },
        garment_source: r.garment.source,
        garment_parts: Object.keys(r.garment.parts.strips),
        parts: r.warped.map((w) => w.name),
        garment_strips: strips(r.garment.parts.strips, roundGarment),
        body_strips: strips(r.parts.strips, round),
        keypoints: Object.fromEntries(
          (['shoulder', 'elbow', 'wrist', 'hip', 'knee', 'ankle'] as const).flatMap((j) => [
            [`${j}_image_left`, round(b.L[j])],
            [`${j}_image_right`, round(b.R[j])],
          ]),
        ),
        old_clothing: { filled_px: r.filled, method: 'patch-based fill (exemplar) from the background and skin around it, within the garment band', left },
      }),
    ],
    stages: t.stages,
    predictMs: t.predictMs,
    notes: [
      `clothes type: ${type}`,
      `garment from: ${r.garment.source === 'person' ? 'a person wearing it' : 'a product photo'}`,
      `parts: ${r.warped.map((w) => w.name).join(', ')}`,
      input.forced_cutting ? `3:4 crop: ${JSON.stringify(boxToPhoto(r.crop))}` : 'no crop',
      ...(region ? [`worked on ${region.width}x${region.height} px of the photo around the target (at ${region.x}, ${region.y})`] : []),
      ...(k < 1 ? [`worked at ${work.width}x${work.height} px, ${k.toFixed(2)} of the photo's scale (over ${numberParam(ctx.params, 'max_work_pixels', 'tryon')} pixels), what changed scaled back up`] : []),
    ],
  };
}, { modelThread: ['parser'] });
