// Try-on analysis of a photo of people (the person to dress, or a person wearing the garment):
//   faces (BlazeFace, up to detector_max_faces) + bodies (BlazePose detector) -> the target: the
//   largest, most central face and its body detection (steps/person-instance.ts) -> BlazePose Full
//   landmarks on the target and on up to 3 other people -> Selfie segmentation on a square crop
//   around the target, kept where BlazePose's own mask of the target is sure (> 180 of 255) or
//   within 0.03 body sizes of it -> the target's instance: that mask split between the skeletons (Voronoi by
//   distance to each skeleton, cut at instance_reach x body size from the target's torso, head
//   and legs and at 0.08 shoulder widths from her arms), the part connected to the torso, other
//   people's faces cut out -> face, ears and hair of the target
//   (BiSeNet, [1, 384, 384, 3] NHWC on a square of 2.2 face sizes; long hair below it grown by
//   colour through the instance), never covered by the garment.
import { AppError } from '../../errors/codes.ts';
import { cropPadded, type RgbImage } from '../../imaging/image.ts';
import { placeMaskResampled, resampleSquare } from '../../imaging/resample.ts';
import { numberParam } from '../../models/params.ts';
import type { StageTimer } from '../../domain/stage-timer.ts';
import { bodyLandmarks, detectBodies, poseMask, type BodyPose } from '../../steps/blazepose.ts';
import type { Detection } from '../../steps/mediapipe.ts';
import { detectFaces, type Face } from '../../steps/face-detection.ts';
import { CELEBAMASK_CLASSES, CLASS, parseFace, parseFaceSoon, type FaceParse } from '../../steps/face-parsing.ts';
import { boxBlur } from '../../imaging/blur.ts';
import { close, componentsTouching, dilate, maskBox, type Region } from '../../imaging/morphology.ts';
import { giveBack, takeBytes, takeInts } from '../../imaging/scratch.ts';
import { labAt, labOf } from '../../steps/color.ts';
import { segmentPerson } from '../../steps/person-segmentation.ts';
import { bodyOfFace, splitInstance, targetBodyIndex, targetFaceIndex, type Shape } from '../../steps/person-instance.ts';
import type { PipelineContext } from '../types.ts';
import { above } from './masks.ts';
import { armShapes, bodyFrame, mid, skeletonParts, skeletonShapes, type Body, type UnclearBody } from './body.ts';

/** Class names of a manifest param (face-parsing classes) as class ids. */
function classIds(value: unknown, key: string): number[] {
  if (!Array.isArray(value) || value.some((v) => !(CELEBAMASK_CLASSES as readonly unknown[]).includes(v))) {
    throw new AppError('MODEL_UNAVAILABLE', `tryon: manifest param ${key} must list face-parsing classes (${CELEBAMASK_CLASSES.join(', ')})`);
  }
  return value.map((v) => (CELEBAMASK_CLASSES as readonly unknown[]).indexOf(v));
}

/** The manifest's protect_classes (a head's face, hair and hat) as a table by class id. */
function protectTable(params: PipelineContext['params']): Uint8Array {
  const keep = new Uint8Array(256);
  for (const c of classIds(params.protect_classes, 'protect_classes')) keep[c] = 1;
  return keep;
}

export interface PersonAnalysis {
  image: RgbImage;
  /** The target's body frame (null: no person). */
  body: Body | null;
  pose: BodyPose | null;
  face: Face | undefined;
  /** Other people's skeletons (capsules), for the split and the debug sheet. */
  others: Shape[][];
  /** How many of `others` (the first ones) are BlazePose skeletons; the rest are known by a face only. */
  otherBodies: number;
  /** Person probability 0..255 at full resolution: Selfie (everyone) where BlazePose's mask of the target agrees. */
  person: Uint8Array;
  /** Selfie's probability of anyone, 0..255, on its square around the target (0 outside it). */
  everyone: Uint8Array;
  /** The target's instance, 0/1. */
  instance: Uint8Array;
  /** Instance height over the photo's height. */
  heightFraction: number;
  /** Set when a person was detected but BlazePose could not make out the body (its presence under the version's least): why body is null. */
  unclear?: UnclearBody;
  /**
   * The target face's parse (BiSeNet), started as soon as the target is known: the parser runs in
   * a model thread (the pipeline's modelThread) while the landmarks, the person mask and the
   * instance are made here, and faceAndHair awaits it.
   */
  parse?: Promise<FaceParse>;
}

/** BlazePose mask level (0..255) where it is sure of its person. */
const SURE = 180;

/**
 * A shoulder BlazePose puts on the target's own face (its box, in the box's columns and above
 * its bottom edge plus 0.1 of its height) is moved down to 0.15 face heights below the box: a
 * shoulder hidden by long hair is placed on the chin at times (s5-red-top), and the torso, the
 * sleeve and the garment's neckline then covered the face's lower half and the hair.
 */
function shouldersBelowFace(pose: BodyPose, face: Face): BodyPose {
  const { x, y, width, height } = face.box;
  const landmarks = { ...pose.landmarks };
  for (const k of ['left_shoulder', 'right_shoulder'] as const) {
    const l = landmarks[k];
    if (l.x >= x && l.x <= x + width && l.y < y + 1.1 * height) landmarks[k] = { ...l, y: y + 1.15 * height };
  }
  return { ...pose, landmarks };
}

/**
 * Capsules of a person known only by a face: the head, up to 0.9 face sizes above the box's centre
 * (the hair above the face: with a disc about the centre only, the target's instance took the top
 * of the hair of the woman in front of s5-top, and the T-shirt's shoulder corner lay on it), and
 * a torso hanging below it.
 */
function faceShapes(f: Face): Shape[] {
  const s = Math.max(f.box.width, f.box.height);
  const c: [number, number] = [f.box.x + f.box.width / 2, f.box.y + f.box.height / 2];
  return [
    { a: c, b: [c[0], c[1] - 0.3 * s], r: 0.6 * s },
    { a: [c[0], c[1] + s], b: [c[0], c[1] + 3 * s], r: 1.1 * s },
  ];
}

/**
 * How far (face widths) a neighbour's BlazePose eyes may lie from the eyes of the face detection
 * they belong to, and how far (degrees) her torso (shoulders' middle to hips' middle) may lean
 * from her face's down (square to its eye line). Where BlazePose lays a neighbour's landmarks off
 * her, her skeleton claims the target's body: on whole sample6 at 1150 px the striped jumpsuit's
 * skeleton lay 0.51 face widths left of her face with a shoulder on the target's, and the green
 * dress's on the left, turned 48 degrees by the body detector, leant 34 degrees from her nearly
 * level face with her hips on the target's (31-40 at other sizes); they split the target's torso
 * and 82% of the garment counted as on other people (a refusal). Skeletons that follow their
 * person there: eyes 0.04-0.17 face widths off, torsos 1-13 degrees from their faces' down.
 */
const EYES_OFF = 0.4, LEAN_OFF = 25;

/** A face's down (unit): its eye line (the person's right eye, image-left, to her left) turned a quarter clockwise. */
function faceDown(f: Face): readonly [number, number] {
  const k = f.keypoints;
  const ex = k.left_eye.x - k.right_eye.x, ey = k.left_eye.y - k.right_eye.y, el = Math.hypot(ex, ey) || 1;
  return [-ey / el, ex / el];
}

/** How far (the face box's widths) a pose's eyes lie from a face detection's (their midpoints). */
function eyesOff(pose: BodyPose, f: Face): number {
  const L = pose.landmarks, k = f.keypoints;
  const ex = (L.left_eye.x + L.right_eye.x) / 2, ey = (L.left_eye.y + L.right_eye.y) / 2;
  return Math.hypot(ex - (k.left_eye.x + k.right_eye.x) / 2, ey - (k.left_eye.y + k.right_eye.y) / 2) / f.box.width;
}

/**
 * Whether a neighbour's landmarks disagree with her face: her eyes (both seen) lie near a detected
 * face (within 1.5 of its widths: the face they belong to) but more than EYES_OFF from its eyes, or
 * her torso leans more than LEAN_OFF from that face's down. Such a neighbour is kept by her face
 * alone (faceShapes). Without a face near them (cut by the frame, turned away) there is nothing to
 * judge them by and they are kept.
 */
export function offItsFace(pose: BodyPose, faces: Face[]): boolean {
  const L = pose.landmarks;
  if (L.left_eye.visibility < 0.5 || L.right_eye.visibility < 0.5) return false;
  let best = Infinity, face: Face | undefined;
  for (const f of faces) {
    const d = eyesOff(pose, f);
    if (d < best) (best = d), (face = f);
  }
  if (!face || best >= 1.5) return false;
  if (best > EYES_OFF) return true;
  // Directions as angles from the image's down (atan2 of x over y).
  const fd = faceDown(face);
  const down = Math.atan2(fd[0], fd[1]);
  const sx = (L.left_shoulder.x + L.right_shoulder.x) / 2, sy = (L.left_shoulder.y + L.right_shoulder.y) / 2;
  const torso = Math.atan2((L.left_hip.x + L.right_hip.x) / 2 - sx, (L.left_hip.y + L.right_hip.y) / 2 - sy);
  let off = Math.abs(torso - down) * (180 / Math.PI);
  if (off > 180) off = 360 - off;
  return off > LEAN_OFF;
}

/**
 * The faces and body detections on a photo, the target among them and her landmarks: the target
 * is the best-scoring face that has a body (a face cut by the photo's edge may have none), else the
 * best body; -1 where none. With `faceRequired` and no face, no bodies are looked for. `pose`:
 * BlazePose on the target's detection (with its mask's probabilities, drawn where used), which
 * personRegion and analyzePerson on this same photo share.
 */
export async function findTarget(ctx: PipelineContext, image: RgbImage, t: StageTimer, faceRequired = false): Promise<{ faces: Face[]; bodies: Detection[]; fi: number; bi: number; pose?: BodyPose }> {
  const P = (k: string) => numberParam(ctx.params, k, 'tryon');
  const { width: W, height: H } = image;
  const detector = { input_size: P('detector_size'), min_score: P('detector_min_score'), iou_threshold: P('detector_iou_threshold'), max_faces: P('detector_max_faces'), resample: 'js' as const };
  const faces = await detectFaces(await ctx.session('detector'), image, detector, detector.min_score, t);
  if (faceRequired && !faces.length) return { faces, bodies: [], fi: -1, bi: -1 };
  const bodies = await detectBodies(await ctx.session('body_detector'), image, P('body_detector_size'), P('body_min_score'), P('body_iou_threshold'), t);
  const landmarks = async (d: Detection) => bodyLandmarks(await ctx.session('body_landmarks'), image, d, P('landmark_size'), P('roi_scale'), t, undefined, { mask: false, prob: true });
  // The largest, most central face without a body detection: her body found from her face
  // (bodyFromFace) before another face is taken for hers.
  const best = faces.length ? targetFaceIndex(faces, W, H) : -1;
  if (best >= 0 && bodyOfFace(faces[best]!, bodies) < 0) {
    const d = bodyFromFace(faces[best]!);
    const pose = await landmarks(d);
    if (pose.presence >= P('min_presence') && eyesOff(pose, faces[best]!) <= EYES_OFF) return { faces, bodies: [...bodies, d], fi: best, bi: bodies.length, pose };
  }
  let fi = -1, bi = -1;
  const left = faces.map((_, i) => i);
  while (left.length && bi < 0) {
    const k = targetFaceIndex(left.map((i) => faces[i]!), W, H);
    fi = left.splice(k, 1)[0]!;
    bi = bodyOfFace(faces[fi]!, bodies);
  }
  if (bi < 0) (fi = -1), (bi = targetBodyIndex(bodies, W));
  if (bi < 0) return { faces, bodies, fi, bi };
  return { faces, bodies, fi, bi, pose: await landmarks(bodies[bi]!) };
}

/**
 * A body detection seeded from a face, for BlazePose's crop where the body detector found none:
 * the hips BODY_FROM_FACE.hips face heights below the face's centre along its down (square to its
 * eye line), the body's circle BODY_FROM_FACE.radius face heights about them. On face-api's sample6
 * at 1150 px turned 10 degrees the body detector missed the target (the maroon dress, the largest,
 * most central face) and the try-on took the woman beside her for the target, whose skeleton lay
 * over both: the T-shirt was drawn across the two. From her face BlazePose finds her (presence
 * 0.93, eyes 0.29 face widths from the face detector's); on the upright photo and on the standing
 * person the same seed gives the body detector's landmarks within a few percent.
 */
const BODY_FROM_FACE = { hips: 3, radius: 3.5 };

function bodyFromFace(f: Face): Detection {
  const down = faceDown(f);
  const s = f.box.height, c = [f.box.x + f.box.width / 2, f.box.y + f.box.height / 2] as const;
  const hip = { x: c[0] + down[0] * BODY_FROM_FACE.hips * s, y: c[1] + down[1] * BODY_FROM_FACE.hips * s };
  const r = BODY_FROM_FACE.radius * s;
  return { xMin: hip.x - r, yMin: hip.y - r, width: 2 * r, height: 2 * r, keypoints: [hip, { x: hip.x - down[0] * r, y: hip.y - down[1] * r }], score: f.score };
}

/**
 * How far the part of a photo the try-on works on reaches beside the target's body (BlazePose's
 * landmarks): this share of the landmarks' own width either way, and at least REGION_FACES face
 * widths (the sleeves' cloth and the fill's sources beside the body).
 */
const REGION_MARGIN = 0.3, REGION_FACES = 0.8;

/**
 * The columns of the photo the try-on can touch around the target, from BlazePose's landmarks on
 * the whole photo (the photo's whole height, so the refusals that measure the person against it,
 * too small or a part out of frame, judge the same); null when that is most of the photo anyway
 * (over 60% of its width) or the body cannot be made out. On a group photo the per-pixel work then
 * follows the target, not the photo. (BlazePose's own crop is no bound: it is as wide as the body
 * is tall.)
 */
export async function personRegion(ctx: PipelineContext, image: RgbImage, found: Found, t: StageTimer): Promise<Region | null> {
  const P = (k: string) => numberParam(ctx.params, k, 'tryon');
  const { width: W, height: H } = image;
  if (found.bi < 0) return null;
  const pose = found.pose!;
  if (pose.presence < P('min_presence')) return null;
  const xs = Object.values(pose.landmarks).filter((k) => k.presence > 0.5).map((k) => k.x);
  if (!xs.length) return null;
  const lo = Math.min(...xs), hi = Math.max(...xs);
  const face = found.faces[found.fi];
  const m = Math.max(REGION_MARGIN * (hi - lo), face ? REGION_FACES * face.box.width : 0);
  const x0 = Math.max(0, Math.floor(lo - m)), x1 = Math.min(W, Math.ceil(hi + m));
  if (x1 - x0 > 0.6 * W) return null;
  return { x: x0, y: 0, width: x1 - x0, height: H };
}

/**
 * Whether the target's landmarks agree with her face: BlazePose's eyes within EYES_OFF face widths
 * of the face detector's (true without a face or landmarks to judge by). On a part of a group photo
 * (personRegion's columns) BlazePose's crop, as wide as the body is tall, reaches past the part's
 * edges into black, and at times its landmarks slide off her there: on whole sample6 at 1150 px her
 * eyes lay 0.90 face widths off, her shoulders on the jumpsuit beside her, and the T-shirt and the
 * dress were drawn as a patch between the two (0.13-0.37 where they follow her).
 */
export function landmarksOnFace(found: Found): boolean {
  const face = found.faces[found.fi];
  return !face || !found.pose || eyesOff(found.pose, face) <= EYES_OFF;
}

/** findTarget's answer: the faces and body detections on a photo and the target's indices among them. */
export type Found = Awaited<ReturnType<typeof findTarget>>;

/**
 * Faces, bodies, the target's landmarks, the person mask and the target's instance.
 * `faceRequired`: a photo with no face is answered as one with no person, without looking for
 * bodies (the garment photo: without a face it is taken as a product photo anyway). `found`:
 * findTarget's answer on this same image, when the caller has it already.
 */
export async function analyzePerson(ctx: PipelineContext, image: RgbImage, t: StageTimer, opts: { faceRequired?: boolean; found?: Found } = {}): Promise<PersonAnalysis> {
  const P = (k: string) => numberParam(ctx.params, k, 'tryon');
  const { width: W, height: H } = image;
  const none = { image, body: null, pose: null, face: undefined, others: [], otherBodies: 0, person: new Uint8Array(W * H), everyone: new Uint8Array(W * H), instance: new Uint8Array(W * H), heightFraction: 0 };
  const { faces, bodies, fi, bi, pose: targetPose } = opts.found ?? (await findTarget(ctx, image, t, opts.faceRequired));
  if (opts.faceRequired && !faces.length) return none;
  const face = faces[fi];
  if (bi < 0) return { ...none, face };
  const parse = face ? (await parseFaceSoon(await ctx.session('parser'), image, face, parserParams(ctx), t)).parse : undefined;
  // A body BlazePose cannot make out (presence 0.32 for s5-left sitting among four others in the
  // whole of face-api's sample5: its landmarks then lay on her neighbour's knee) is refused as
  // such, not as no person at all.
  // (findTarget finds the target's landmarks wherever it finds her body.)
  const found = targetPose!;
  if (found.presence < P('min_presence')) return { ...none, face, unclear: { presence: found.presence, least: P('min_presence') } };
  const pose = { ...found, mask: await t.time('postprocess', () => poseMask(found, W, H)) };
  const body = bodyFrame(face ? shouldersBelowFace(pose, face) : pose, W, H);
  const landmarker = await ctx.session('body_landmarks');
  const L = P('landmark_size'), roiScale = P('roi_scale');

  // Other people: their landmarks (up to 3 detections), else their faces.
  const others: Shape[][] = [];
  const claimed = new Set<number>([fi]);
  let extra = 0;
  for (let i = 0; i < bodies.length; i++) {
    if (i === bi || extra >= 3) continue;
    const d = bodies[i]!;
    // The same person detected twice: a detection centred inside the target's face box.
    const dc = [d.xMin + d.width / 2, d.yMin + d.height / 2];
    if (Math.hypot(dc[0]! - (bodies[bi]!.xMin + bodies[bi]!.width / 2), dc[1]! - (bodies[bi]!.yMin + bodies[bi]!.height / 2)) < 0.5 * bodies[bi]!.width) continue;
    extra++;
    // Only its landmarks are used (its skeleton for the split), not its mask.
    const other = await bodyLandmarks(landmarker, image, d, L, roiScale, t, undefined, { mask: false });
    if (other.presence < P('min_presence') || offItsFace(other, faces)) continue;
    const ob = bodyFrame(other, W, H);
    others.push(skeletonShapes(ob, 0.4 * ob.size));
    faces.forEach((f, j) => {
      if (Math.hypot(f.box.x + f.box.width / 2 - ob.nose[0], f.box.y + f.box.height / 2 - ob.nose[1]) < Math.max(f.box.width, f.box.height)) claimed.add(j);
    });
  }
  const otherBodies = others.length;
  faces.forEach((f, j) => claimed.has(j) || others.push(faceShapes(f)));

  // The person mask on a square around the target's body (better resolution than the whole photo).
  const xs = Object.values(pose.landmarks).filter((k) => k.presence > 0.5).map((k) => k.x);
  const ys = Object.values(pose.landmarks).filter((k) => k.presence > 0.5).map((k) => k.y);
  const x0 = Math.max(0, Math.min(...xs) - 0.6 * body.size), x1 = Math.min(W, Math.max(...xs) + 0.6 * body.size);
  const y0 = Math.max(0, Math.min(...ys) - 0.8 * body.size), y1 = Math.min(H, Math.max(...ys) + 0.6 * body.size);
  const side = Math.max(x1 - x0, y1 - y0, 32);
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  const S = P('segmenter_size');
  // Crop and placement resampled in JS (imaging/resample.ts): sharp's round trips for a 1 MP
  // photo were 25 and 40 ms of the try-on's analysis.
  const crop = { data: await t.time('preprocess', () => resampleSquare(image, cx - side / 2, cy - side / 2, side, S)), width: S, height: S };
  const small = await segmentPerson(await ctx.session('segmenter'), crop, S, S, t, { feather: 0 });
  const everyone = await t.time('postprocess', () => placeMaskResampled(small, S, S, side, side, { width: W, height: H, left: cx - side / 2, top: cy - side / 2 }));
  // BlazePose's own mask is the person its crop is centred on (it bleeds less onto neighbours than
  // Selfie, which marks everyone, but is coarser): the person is where both agree.
  // Its mask is sure (near 1) on the target and lukewarm (0.4-0.65) over a neighbour pressed
  // against her whom no detector found (cut by the frame): Selfie's edge is kept only within a
  // small margin of where BlazePose is sure, so such a neighbour is not split off by skeletons
  // alone (there is no skeleton of hers to split by).
  const person = await t.time('instance', () => agreed(pose.mask, dilate(above(pose.mask, SURE), W, H, Math.max(2, Math.round(0.03 * body.size))), everyone));

  const instance = await t.time('instance', () => targetSplit({ body, face, person, others }, P('instance_reach')));
  // Other people's heads are never the target's, even where the split gave them to her (a person
  // sitting in front of the target, whose head lies on the target's torso): the garment and the
  // fill stay off them. Where another face's disc (0.7 face sides) meets the instance, the face
  // parser finds that head (its face, hair and neck connected to its face box), and that is cut;
  // the rest of the disc stays the target's (her clothing around the other head: a disc cut there
  // left a crescent of her old top beside the new garment). The face box itself is always cut.
  for (let j = 0; j < faces.length; j++) {
    if (j === fi) continue;
    const f = faces[j]!;
    const r = 0.7 * Math.max(f.box.width, f.box.height), cx = f.box.x + f.box.width / 2, cy = f.box.y + f.box.height / 2;
    const y0 = Math.max(0, Math.floor(cy - r)), y1 = Math.min(H - 1, Math.ceil(cy + r));
    const x0 = Math.max(0, Math.floor(cx - r)), x1 = Math.min(W - 1, Math.ceil(cx + r));
    let meets = false;
    for (let y = y0; y <= y1 && !meets; y++) for (let x = x0; x <= x1; x++) if (instance[y * W + x] && (x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 <= r * r) (meets = true);
    if (!meets) continue;
    // Her face box (within the disc), and her head wherever it reaches (long hair over the
    // target's torso is hers too).
    for (let y = Math.max(y0, Math.ceil(f.box.y)); y <= Math.min(y1, Math.ceil(f.box.y + f.box.height) - 1); y++) {
      for (let x = Math.max(x0, Math.ceil(f.box.x)); x <= Math.min(x1, Math.ceil(f.box.x + f.box.width) - 1); x++) {
        if ((x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 <= r * r) instance[y * W + x] = 0;
      }
    }
    const head = await otherHead(ctx, image, f, t);
    for (let i = 0; i < head.length; i++) if (head[i]) instance[i] = 0;
  }
  const box = maskBox(instance, W, H);
  return { image, body, pose, face, others, otherBodies, person, everyone, instance, heightFraction: box ? box.height / H : 0, parse };
}

/**
 * The target's share of the people's mask (`person`), split from the others' by the skeletons:
 * each pixel to the nearest skeleton, within `reachK` body sizes of hers. `withoutArms`: her arms
 * on these image sides take no part (pipeline.ts unseenArms: an arm BlazePose lays on someone else).
 * Arms reach less far than the torso, head and legs (wide trousers and skirts reach far from the
 * leg bones): a neighbour nobody detected (cut by the frame) often stands right beside a hanging
 * arm, and the full reach from the arm took half of her. The arms' reach is counted in shoulder
 * widths where the body is turned (its size then comes from the torso's length).
 */
export function targetSplit(p: { body: Body; face?: Face; person: Uint8Array; others: Shape[][] }, reachK: number, withoutArms: ReadonlyArray<'L' | 'R'> = []): Uint8Array {
  const { body, face } = p;
  const headR = face ? 0.6 * Math.max(face.box.width, face.box.height) : 0.4 * body.size;
  const ref = Math.min(body.size, 1.1 * body.sw);
  const reach = reachK * body.size;
  const { core, legs } = skeletonParts(body, headR);
  const arms = armShapes(body, { sides: (['L', 'R'] as const).filter((s) => !withoutArms.includes(s)) });
  const shapes = [...core, ...arms, ...legs];
  const reaches = [...core.map(() => reach), ...arms.map(() => 0.08 * ref), ...legs.map(() => reach)];
  return splitInstance(p.person, body.W, body.H, shapes, p.others, { reach, reaches, seed: mid(body.neck, body.pelvis) });
}

/** The face parser's crop and size for this version. */
function parserParams(ctx: PipelineContext) {
  const P = (k: string) => numberParam(ctx.params, k, 'tryon');
  return { parserSize: P('parser_size'), cropScale: P('parser_crop_scale'), featherPx: 0, resample: 'js' as const };
}

/**
 * Another person's head (0/1, full resolution): the face parser's face, hair, hat and neck classes
 * on a crop around her face, the part connected to the middle of her face box (the parser also labels
 * skin and hair of people beside her in its crop).
 */
async function otherHead(ctx: PipelineContext, image: RgbImage, f: Face, t: StageTimer): Promise<Uint8Array> {
  const { width: W, height: H } = image;
  const parse = await parseFace(await ctx.session('parser'), image, f, parserParams(ctx), t);
  const keep = protectTable(ctx.params);
  keep[CLASS.neck] = keep[CLASS.neck_l] = 1;
  return t.time('instance', () => {
    const classes = new Uint8Array(W * H);
    for (let i = 0; i < classes.length; i++) classes[i] = keep[parse.labels[i]!]!;
    // Seeds: the face box's middle half (its centre may be a mouth the parser calls background,
    // or glasses).
    const seed = new Uint8Array(W * H);
    const bx0 = Math.max(0, Math.round(f.box.x + f.box.width / 4)), bx1 = Math.min(W - 1, Math.round(f.box.x + (3 * f.box.width) / 4));
    const by0 = Math.max(0, Math.round(f.box.y + f.box.height / 4)), by1 = Math.min(H - 1, Math.round(f.box.y + (3 * f.box.height) / 4));
    for (let y = by0; y <= by1; y++) seed.fill(1, y * W + bx0, y * W + bx1 + 1);
    return componentsTouching(classes, seed, W, H);
  });
}

/** Selfie's probability where BlazePose's mask is over 100 and `near` (its sure part, grown) is set; else 0. */
function agreed(poseMask: Uint8Array, near: Uint8Array, everyone: Uint8Array): Uint8Array {
  const person = new Uint8Array(poseMask.length);
  for (let i = 0; i < person.length; i++) person[i] = poseMask[i]! > 100 && near[i] ? everyone[i]! : 0;
  return person;
}

/** 3:4 crop (or pad, repeating the edges) around the target's instance. */
export async function cutTo3by4(p: PersonAnalysis): Promise<{ image: RgbImage; crop: { x: number; y: number; width: number; height: number }; window: Region }> {
  const { width: W, height: H } = p.image;
  const box = maskBox(p.instance, W, H);
  if (!box || box.width <= 1) return { image: p.image, crop: { x: 0, y: 0, width: W, height: H }, window: { x: 0, y: 0, width: W, height: H } };
  const x0 = box.x, y0 = box.y, x1 = box.x + box.width - 1, y1 = box.y + box.height - 1;
  const bw = (x1 - x0) * 1.1, bh = (y1 - y0) * 1.1;
  const h = Math.round(Math.max(bh, (bw * 4) / 3));
  const w = Math.round((h * 3) / 4);
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  const crop = { x: Math.round(cx - w / 2), y: Math.round(cy - h / 2), width: w, height: h };
  // The window's own top-left pixel (crop's x and y, rounded from its centre, may be a pixel off).
  const side = Math.max(w, h);
  const window = { x: Math.round(cx - side / 2) + Math.round((side - w) / 2), y: Math.round(cy - side / 2) + Math.round((side - h) / 2), width: w, height: h };
  return { image: { data: await cropPadded(p.image, window), width: w, height: h }, crop, window };
}

/** Face, ears and hair of the target (never covered by the garment), 0/1 at full resolution; and the face's skin colour. */
export async function faceAndHair(ctx: PipelineContext, p: PersonAnalysis, t: StageTimer): Promise<{ protect: Uint8Array; skin: [number, number, number] | null }> {
  const { image, face } = p;
  const protect = new Uint8Array(image.width * image.height);
  if (!face) return { protect, skin: null };
  const parse = await (p.parse ?? parseFace(await ctx.session('parser'), image, face, parserParams(ctx), t));
  const keep = protectTable(ctx.params);
  return t.time('postprocess', () => {
    // The labels are 0 outside the parser's crop: only its rows and columns are read (unless
    // class 0 is one to protect).
    const c = parse.crop, W = image.width, H = image.height;
    const box = keep[0] ? { x0: 0, y0: 0, x1: W, y1: H } : { x0: Math.max(0, Math.floor(c.x)), y0: Math.max(0, Math.floor(c.y)), x1: Math.min(W, Math.ceil(c.x + c.size)), y1: Math.min(H, Math.ceil(c.y + c.size)) };
    const skin = protectAndSkin(parse.labels, keep, image.data, protect, W, box, grownOval(face.box, FACE_SKIN_REACH));
    roundSteps(protect, W, H, box, Math.max(1, Math.round(0.6 * (c.size / parse.size))));
    extendHair(image, p.instance, parse.labels, parse.crop, Math.max(face.box.width, face.box.height), skin, protect);
    // Pinholes and slits between strands (the parser's and the colour test's misses) closed: the
    // garment showed through them as a lace of its stripes in the hair's tips.
    return { protect: close(protect, image.width, image.height, Math.max(1, Math.round(0.02 * Math.max(face.box.width, face.box.height)))), skin };
  });
}

/**
 * The parser's labels are placed at full resolution pixel for pixel (nearest): an edge of the
 * protected face and hair runs in steps of its pixel size (3-4 photo pixels), and the garment's
 * neckline, cut along it, was a staircase. Each pixel of `box` (grown by r) takes the majority of
 * its (2r + 1)^2 window, which rounds the steps into the contour they stand for; in place.
 */
function roundSteps(mask: Uint8Array, W: number, H: number, box: { x0: number; y0: number; x1: number; y1: number }, r: number): void {
  const x0 = Math.max(0, box.x0 - 2 * r), y0 = Math.max(0, box.y0 - 2 * r), x1 = Math.min(W, box.x1 + 2 * r), y1 = Math.min(H, box.y1 + 2 * r);
  const w = x1 - x0, h = y1 - y0;
  if (w <= 0 || h <= 0) return;
  const crop = new Float32Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) crop[y * w + x] = mask[(y + y0) * W + x + x0]!;
  const mean = boxBlur(crop, w, h, r);
  // Only the box grown by r is rewritten: its windows lie within the crop (or the photo's edge).
  for (let y = Math.max(y0, box.y0 - r); y < Math.min(y1, box.y1 + r); y++) {
    for (let x = Math.max(x0, box.x0 - r); x < Math.min(x1, box.x1 + r); x++) mask[y * W + x] = mean[(y - y0) * w + x - x0]! >= 0.5 ? 1 : 0;
  }
}

/**
 * The parser's skin class is the face's, but next to the face it takes bare skin too: s6-stripes
 * rests her chin on her raised shoulder, and its skin, protected as face, kept the new top off
 * both shoulders (8% of their tops covered; 36% with the class kept to the face's box grown by
 * this share of its size on each side).
 */
const FACE_SKIN_REACH = 0.2;

/** The ellipse in a face box grown by k of its size on each side. */
interface Oval {
  cx: number;
  cy: number;
  rx: number;
  ry: number;
}

/**
 * The face's oval: the ellipse in its box grown by k of its size on each side. The box itself (as
 * before stop 30) cut the protected skin along its sides and bottom, and the garment's neckline,
 * which follows what is protected, stepped around the neck in right angles.
 */
function grownOval(b: { x: number; y: number; width: number; height: number }, k: number): Oval {
  return { cx: b.x + b.width / 2, cy: b.y + b.height / 2, rx: (0.5 + k) * b.width, ry: (0.5 + k) * b.height };
}

/**
 * Sets `protect` where the label is one of `keep` (a table by class id), within `box` (x1, y1
 * exclusive), the skin class only within the face's `oval`; the median colour of the skin class
 * (over the whole box) when over 50 pixels.
 */
function protectAndSkin(labels: Uint8Array, keep: Uint8Array, data: Uint8Array, protect: Uint8Array, W: number, box: { x0: number; y0: number; x1: number; y1: number }, oval: Oval): [number, number, number] | null {
  // Per-channel histograms of the skin: its median, not its mean. The parser's skin reaches a
  // pixel or two into the hair, brows and background at its edges (more at a coarser parser
  // size), and the mean drifted with them: at 256 px the arms of person-standing fell outside
  // the skin test and were filled as old clothing.
  const hist = new Uint32Array(3 * 256);
  let n = 0;
  for (let y = box.y0; y < box.y1; y++) {
    for (let i = y * W + box.x0; i < y * W + box.x1; i++) {
      const l = labels[i]!;
      if (keep[l] && (l !== CLASS.skin || ((i - y * W + 0.5 - oval.cx) / oval.rx) ** 2 + ((y + 0.5 - oval.cy) / oval.ry) ** 2 <= 1)) protect[i] = 1;
      if (l === CLASS.skin) (hist[data[3 * i]!]! += 1), (hist[256 + data[3 * i + 1]!]! += 1), (hist[512 + data[3 * i + 2]!]! += 1), n++;
    }
  }
  if (n <= 50) return null;
  const median = (c: number) => {
    let acc = 0;
    for (let v = 0; v < 256; v++) if ((acc += hist[256 * c + v]!) * 2 >= n) return v;
    return 255;
  };
  return [median(0), median(1), median(2)];
}

/**
 * Sum and sum of squares of the CIE Lab of the `label` pixels in rows y0..y1 and columns x0..x1
 * (exclusive ends), and their count; null under 100 pixels. The labels are 0 outside the parser's
 * crop, so its columns are all that is read.
 */
function hairStats(data: Uint8Array, labels: Uint8Array, W: number, y0: number, y1: number, x0: number, x1: number, label: number): { sum: number[]; sq: number[]; n: number } | null {
  let s0 = 0, s1 = 0, s2 = 0, q0 = 0, q1 = 0, q2 = 0, n = 0;
  for (let y = y0; y < y1; y++) {
    for (let i = y * W + x0; i < y * W + x1; i++) {
      if (labels[i] !== label) continue;
      const lab = labAt(data, i);
      (s0 += lab[0]), (s1 += lab[1]), (s2 += lab[2]);
      (q0 += lab[0] * lab[0]), (q1 += lab[1] * lab[1]), (q2 += lab[2] * lab[2]);
      n++;
    }
  }
  return n < 100 ? null : { sum: [s0, s1, s2], sq: [q0, q1, q2], n };
}

/**
 * Long hair past the parser's crop (BiSeNet sees a square around the face, so hair falling over
 * the shoulders and chest is cut at the crop's lower edge, and at its side where the hair falls
 * beside a large face): grown out from the hair pixels on those edges through connected pixels of
 * the target's instance outside the crop whose colour is near the parsed hair's (CIE Lab distance
 * under 2.5 standard deviations, 10-22) and not near the skin's, for at most 2 face sizes below
 * the crop and HAIR_BESIDE face sizes beside it. Sets `protect` to 1 there.
 */
function extendHair(image: RgbImage, instance: Uint8Array, labels: Uint8Array, crop: { x: number; y: number; size: number }, faceSize: number, skin: [number, number, number] | null, protect: Uint8Array): void {
  const { width: W, height: H, data } = image;
  const HAIR = 17;
  const yEnd = Math.min(H, Math.floor(crop.y + crop.size));
  const y0 = Math.max(0, Math.floor(crop.y));
  const cx0 = Math.max(0, Math.floor(crop.x)), cx1 = Math.min(W, Math.ceil(crop.x + crop.size));
  // Nothing past the crop inside the photo: the parser saw all of it.
  if (yEnd >= H && cx0 <= 0 && cx1 >= W) return;
  const hair = hairStats(data, labels, W, y0, yEnd, cx0, cx1, HAIR);
  if (!hair) return;
  const { sum, sq, n } = hair;
  const mean = sum.map((v) => v / n);
  const spread = Math.sqrt(sq.reduce((a, v, c) => a + Math.max(0, v / n - mean[c]! ** 2), 0));
  const limit = Math.min(22, Math.max(10, 2.5 * spread));
  const skinLab = skin ? labOf(Math.round(skin[0]), Math.round(skin[1]), Math.round(skin[2])) : null;
  const yMax = Math.min(H, Math.round(yEnd + 2 * faceSize));
  const xMin = Math.max(0, Math.round(cx0 - HAIR_BESIDE * faceSize)), xMax = Math.min(W, Math.round(cx1 + HAIR_BESIDE * faceSize));
  // The answer depends on the colour alone: kept in a small direct-mapped table by colour (the
  // fill asks about the same few thousand colours many times).
  const cacheKey = new Int32Array(1 << 14).fill(-1), cacheVal = new Uint8Array(1 << 14);
  const hairLike = (i: number) => {
    const key = (data[3 * i]! << 16) | (data[3 * i + 1]! << 8) | data[3 * i + 2]!;
    const slot = (key ^ (key >>> 10) ^ (key >>> 20)) & ((1 << 14) - 1);
    if (cacheKey[slot] === key) return cacheVal[slot] === 1;
    const lab = labAt(data, i);
    const d = Math.hypot(lab[0] - mean[0]!, lab[1] - mean[1]!, lab[2] - mean[2]!);
    const like = d < limit && (!skinLab || Math.hypot(lab[0] - skinLab[0], lab[1] - skinLab[1], lab[2] - skinLab[2]) > d);
    (cacheKey[slot] = key), (cacheVal[slot] = like ? 1 : 0);
    return like;
  };
  const seen = takeBytes(W * H);
  const queue = takeInts((xMax - xMin) * (yMax - y0) + 1);
  let head = 0, tail = 0;
  // The seeds: the parsed hair on the crop's bottom rows and on its side columns.
  const seed = (i: number) => {
    if (labels[i] === HAIR && !seen[i]) (seen[i] = 1), (queue[tail++] = i);
  };
  for (let y = Math.max(y0, yEnd - 3); y < yEnd; y++) for (let x = cx0; x < cx1; x++) seed(y * W + x);
  for (let y = y0; y < yEnd; y++) {
    for (let x = cx0; x < Math.min(cx1, cx0 + 3); x++) seed(y * W + x);
    for (let x = Math.max(cx0, cx1 - 3); x < cx1; x++) seed(y * W + x);
  }
  // Only outside the crop (inside, the parser's labels stand), within the reach.
  const visit = (j: number, x: number, y: number) => {
    if (x < xMin || x >= xMax || y < y0 || y >= yMax || seen[j]) return;
    if (y < yEnd && x >= cx0 && x < cx1) return;
    seen[j] = 1;
    if (instance[j] && hairLike(j)) (protect[j] = 1), (queue[tail++] = j);
  };
  while (head < tail) {
    const i = queue[head++]!;
    const x = i % W, y = (i - x) / W;
    visit(i - 1, x - 1, y);
    visit(i + 1, x + 1, y);
    visit(i + W, x, y + 1);
    visit(i - W, x, y - 1);
  }
  giveBack(queue, seen);
}

/** How far beside the parser's crop extendHair grows the hair (face sizes). */
const HAIR_BESIDE = 1;
