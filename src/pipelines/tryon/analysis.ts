// Try-on analysis: the person (MoveNet keypoints, selfie-segmentation mask, the 3:4 cut on request),
// what the garment must never cover (face, ears, hair: BiSeNet on the target face), and the garment
// itself (worn by a person in its photo, or a product photo: mask and landmarks).
import { AppError } from '../../errors/codes.ts';
import type { ClothesType } from '../../domain/job.ts';
import { cropSquare, type RgbImage } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import type { StageTimer } from '../../domain/stage-timer.ts';
import { detectFaces } from '../../steps/face-detection.ts';
import { CELEBAMASK_CLASSES, parseFace } from '../../steps/face-parsing.ts';
import { segmentPerson } from '../../steps/person-segmentation.ts';
import { estimatePose } from '../../steps/pose.ts';
import { largestFace } from '../../steps/target-face.ts';
import type { PipelineContext } from '../types.ts';
import { bodyRegion, knees, polygonMask, torso, type Pose } from './body.ts';
import { garmentLandmarks, productMask, type Landmarks } from './garment.ts';

/** Class names of a manifest param (face-parsing classes) as class ids. */
function classIds(value: unknown, key: string): number[] {
  if (!Array.isArray(value) || value.some((v) => !(CELEBAMASK_CLASSES as readonly unknown[]).includes(v))) {
    throw new AppError('MODEL_UNAVAILABLE', `tryon: manifest param ${key} must list face-parsing classes (${CELEBAMASK_CLASSES.join(', ')})`);
  }
  return value.map((v) => (CELEBAMASK_CLASSES as readonly unknown[]).indexOf(v));
}

export interface PersonAnalysis {
  image: RgbImage;
  pose: Pose;
  /** Person probability 0..255 at full resolution. */
  person: Uint8Array;
  fraction: number;
}

/** MoveNet keypoints and the selfie-segmentation mask of a photo (person or garment). */
export async function analyzePerson(ctx: PipelineContext, image: RgbImage, t: StageTimer): Promise<PersonAnalysis> {
  const poseSession = await ctx.session('pose');
  const pose = await estimatePose(poseSession, image, numberParam(ctx.params, 'pose_size', 'tryon'), t);
  const seg = await ctx.session('segmenter');
  const S = numberParam(ctx.params, 'segmenter_size', 'tryon');
  const person = await segmentPerson(seg, image, S, S, t);
  let on = 0;
  for (const v of person) if (v > 127) on++;
  return { image, pose, person, fraction: on / person.length };
}

/** 3:4 crop (or pad, repeating the edges) around the person's body. */
export async function cutTo3by4(p: PersonAnalysis): Promise<{ image: RgbImage; crop: { x: number; y: number; width: number; height: number } }> {
  const { width: W, height: H } = p.image;
  let x0 = W, y0 = H, x1 = 0, y1 = 0;
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (p.person[y * W + x]! > 127) ((x0 = Math.min(x0, x)), (x1 = Math.max(x1, x)), (y0 = Math.min(y0, y)), (y1 = Math.max(y1, y)));
  if (x1 <= x0) return { image: p.image, crop: { x: 0, y: 0, width: W, height: H } };
  const bw = (x1 - x0) * 1.1, bh = (y1 - y0) * 1.1;
  const h = Math.round(Math.max(bh, (bw * 4) / 3));
  const w = Math.round((h * 3) / 4);
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  const crop = { x: Math.round(cx - w / 2), y: Math.round(cy - h / 2), width: w, height: h };
  // A square crop of the long side, then the 3:4 window out of it (cropSquare repeats edges).
  const side = Math.max(w, h);
  const sq = await cropSquare(p.image, cx - side / 2, cy - side / 2, side, side);
  const data = new Uint8Array(w * h * 3);
  const ox = Math.round((side - w) / 2), oy = Math.round((side - h) / 2);
  for (let y = 0; y < h; y++) data.set(sq.subarray(((y + oy) * side + ox) * 3, ((y + oy) * side + ox + w) * 3), y * w * 3);
  return { image: { data, width: w, height: h }, crop };
}

/** Face, ears and hair of the person (never covered by the garment), 0/1 at full resolution. */
export async function faceAndHair(ctx: PipelineContext, image: RgbImage, t: StageTimer): Promise<Uint8Array> {
  const P = (k: string) => numberParam(ctx.params, k, 'tryon');
  const protect = new Uint8Array(image.width * image.height);
  const detector = { input_size: P('detector_size'), min_score: P('detector_min_score'), iou_threshold: P('detector_iou_threshold'), max_faces: P('detector_max_faces') };
  const face = largestFace(await detectFaces(await ctx.session('detector'), image, detector, detector.min_score, t), image.width, image.height);
  if (!face) return protect;
  const parse = await parseFace(await ctx.session('parser'), image, face, { parserSize: P('parser_size'), cropScale: P('parser_crop_scale'), featherPx: 0 }, t);
  const keep = new Set(classIds(ctx.params.protect_classes, 'protect_classes'));
  for (let i = 0; i < protect.length; i++) if (keep.has(parse.labels[i]!)) protect[i] = 1;
  return protect;
}

/** A garment worn by a person in the garment photo: that person's keypoints and mask, if clear. */
export function garmentFromPerson(g: PersonAnalysis, type: ClothesType): { mask: Uint8Array; landmarks: Landmarks } | null {
  const need = type === 'lower_body' ? ['left_hip', 'right_hip'] : ['left_shoulder', 'right_shoulder', 'left_hip', 'right_hip'];
  if (g.fraction < 0.1 || need.some((k) => g.pose[k as keyof Pose].score < 0.35)) return null;
  const { width: W, height: H } = g.image;
  const region = polygonMask(bodyRegion(g.pose, type), W, H);
  const mask = Uint8Array.from(region, (r, i) => (r && g.person[i]! > 127 ? 1 : 0));
  const { sL, sR, hL, hR, down, tl } = torso(g.pose);
  const { kL, kR } = knees(g.pose);
  const landmarks: Landmarks =
    type === 'lower_body'
      ? { waistL: hL, waistR: hR, crotch: [(hL[0] + hR[0]) / 2, (hL[1] + hR[1]) / 2 + 0.2 * tl], thighL: [(hL[0] + kL[0]) / 2, (hL[1] + kL[1]) / 2], thighR: [(hR[0] + kR[0]) / 2, (hR[1] + kR[1]) / 2], legL: kL, legR: kR }
      : {
          shoulderL: sL,
          shoulderR: sR,
          collar: [(sL[0] + sR[0]) / 2, (sL[1] + sR[1]) / 2],
          hemL: [hL[0], hL[1] + 0.1 * tl * down[1]],
          hemR: [hR[0], hR[1] + 0.1 * tl * down[1]],
          ...(type === 'dresses'
            ? { waistL: [(sL[0] + hL[0]) / 2, (sL[1] + hL[1]) / 2], waistR: [(sR[0] + hR[0]) / 2, (sR[1] + hR[1]) / 2] }
            : { armpitL: [sL[0], sL[1] + 0.33 * tl], armpitR: [sR[0], sR[1] + 0.33 * tl], sleeveL: [sL[0] - 0.05, sL[1] + 0.2 * tl], sleeveR: [sR[0] + 0.05, sR[1] + 0.2 * tl] }),
        };
  return { mask, landmarks };
}

export interface GarmentAnalysis {
  image: RgbImage;
  /** 0/1 garment mask in the garment photo. */
  mask: Uint8Array;
  landmarks: Landmarks;
  source: 'person' | 'product';
}

/** The garment: worn by a person in its photo when that is clear, else a product photo's mask. */
export async function analyzeGarment(ctx: PipelineContext, image: RgbImage, type: ClothesType, t: StageTimer): Promise<GarmentAnalysis> {
  const worn = garmentFromPerson(await analyzePerson(ctx, image, t), type);
  const mask = worn?.mask ?? (await t.time('garment', () => productMask(image)));
  let area = 0;
  for (const v of mask) area += v;
  if (area < 0.01 * mask.length) throw new AppError('INPUT_INVALID', 'no garment found in the clothes image');
  const landmarks = worn?.landmarks ?? (await t.time('garment', () => garmentLandmarks(mask, image.width, image.height, type)));
  return { image, mask, landmarks, source: worn ? 'person' : 'product' };
}
