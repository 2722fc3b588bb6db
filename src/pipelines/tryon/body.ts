// The body: where each garment landmark should land on the person, from MoveNet keypoints.
// "L"/"R" are image left/right (the subject's right shoulder is on the image's left).
import { AppError } from '../../errors/codes.ts';
import { polygonMask } from '../../imaging/polygon.ts';
import type { ClothesType } from '../../domain/job.ts';
import type { CocoKeypoint, Pose } from '../../steps/pose.ts';
import type { Landmarks } from './garment.ts';

export type { Pose };
type P = [number, number];

const MIN_SCORE = 0.25;

const REQUIRED: Record<ClothesType, Array<[CocoKeypoint, string]>> = {
  upper_body: [['left_shoulder', 'shoulders'], ['right_shoulder', 'shoulders'], ['left_hip', 'hips'], ['right_hip', 'hips']],
  // Knees and ankles are extrapolated along the body when out of frame (half-length photos).
  lower_body: [['left_hip', 'hips'], ['right_hip', 'hips']],
  dresses: [['left_shoulder', 'shoulders'], ['right_shoulder', 'shoulders'], ['left_hip', 'hips'], ['right_hip', 'hips']],
};

/** Refuses a photo without a person, or without the keypoints this clothes type needs (naming them). */
export function checkBody(pose: Pose, personFraction: number, type: ClothesType, what: string): void {
  const seen = Object.values(pose).filter((k) => k.score >= MIN_SCORE).length;
  if (personFraction < 0.03 || seen < 5) throw new AppError('NO_PERSON_FOUND', `no person found in ${what}`);
  const missing = [...new Set(REQUIRED[type].filter(([k]) => pose[k].score < MIN_SCORE).map(([, part]) => part))];
  if (missing.length) {
    throw new AppError('NO_PERSON_FOUND', `${what} does not show the ${missing.join(' and ')}, which ${type} needs`);
  }
}

const add = (a: P, b: P, k = 1): P => [a[0] + b[0] * k, a[1] + b[1] * k];
const sub = (a: P, b: P): P => [a[0] - b[0], a[1] - b[1]];
const mid = (a: P, b: P): P => [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
const len = (a: P) => Math.hypot(a[0], a[1]) || 1;
const unit = (a: P): P => [a[0] / len(a), a[1] / len(a)];
const lerp = (a: P, b: P, t: number): P => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];

/** The frame of the torso: image-left/right joints, across and down unit vectors, sizes. */
export function torso(pose: Pose) {
  const pt = (k: CocoKeypoint): P => [pose[k].x, pose[k].y];
  const sL = pt('right_shoulder'), sR = pt('left_shoulder');
  const hL = pt('right_hip'), hR = pt('left_hip');
  const across = unit(sub(mid(sR, hR), mid(sL, hL)));
  const down = unit(sub(mid(hL, hR), mid(sL, sR)));
  const sw = len(sub(sR, sL));
  const tl = len(sub(mid(hL, hR), mid(sL, sR)));
  return { sL, sR, hL, hR, across, down, sw, tl, pt };
}

/** Follows the arm (shoulder -> elbow -> wrist) for `length` pixels. */
function alongArm(pose: Pose, side: 'right' | 'left', length: number, fallback: P): P {
  const s: P = [pose[`${side}_shoulder`].x, pose[`${side}_shoulder`].y];
  const e: P = [pose[`${side}_elbow`].x, pose[`${side}_elbow`].y];
  const w: P = [pose[`${side}_wrist`].x, pose[`${side}_wrist`].y];
  if (pose[`${side}_elbow`].score < MIN_SCORE) return add(s, fallback, length);
  const upper = len(sub(e, s));
  if (length <= upper) return lerp(s, e, length / upper);
  if (pose[`${side}_wrist`].score < MIN_SCORE) return add(e, unit(sub(e, s)), length - upper);
  return lerp(e, w, Math.min(1.2, (length - upper) / len(sub(w, e))));
}

/** The knees (image left/right), or where they would be when out of frame or unsure. */
export function knees(pose: Pose): { kL: P; kR: P } {
  const { hL, hR, down, tl, pt } = torso(pose);
  const ok = pose.left_knee.score >= MIN_SCORE && pose.right_knee.score >= MIN_SCORE;
  return ok ? { kL: pt('right_knee'), kR: pt('left_knee') } : { kL: add(hL, down, 1.05 * tl), kR: add(hR, down, 1.05 * tl) };
}

/** Where each of the garment's landmarks goes on the body. */
export function bodyTargets(pose: Pose, type: ClothesType, garment: Landmarks): Landmarks {
  const { sL, sR, hL, hR, across, down, sw, tl, pt } = torso(pose);
  const out = (p: P, k: number): P => add(p, across, k * sw);
  if (type === 'lower_body') {
    const { kL, kR } = knees(pose);
    const ankle = (side: 'right' | 'left', knee: P, hip: P): P =>
      pose[`${side}_ankle`].score >= MIN_SCORE ? pt(`${side}_ankle`) : add(knee, sub(knee, hip), 1);
    const aL = ankle('right', kL, hL), aR = ankle('left', kR, hR);
    const hipMid = mid(hL, hR);
    return {
      waistL: add(out(hL, -0.12), down, -0.12 * tl),
      waistR: add(out(hR, 0.12), down, -0.12 * tl),
      crotch: lerp(hipMid, mid(kL, kR), 0.25),
      thighL: out(lerp(hL, kL, 0.55), -0.14),
      thighR: out(lerp(hR, kR, 0.55), 0.14),
      legL: aL,
      legR: aR,
    };
  }
  const shoulderL = add(out(sL, -0.12), down, -0.04 * sw);
  const shoulderR = add(out(sR, 0.12), down, -0.04 * sw);
  const targets: Landmarks = {
    shoulderL,
    shoulderR,
    collar: add(mid(sL, sR), down, -0.1 * sw),
  };
  if (type === 'dresses') {
    const { kL, kR } = knees(pose);
    targets.waistL = out(lerp(sL, hL, 0.6), -0.02);
    targets.waistR = out(lerp(sR, hR, 0.6), 0.02);
    targets.hemL = add(out(kL, -0.25), down, 0.05 * tl);
    targets.hemR = add(out(kR, 0.25), down, 0.05 * tl);
    return targets;
  }
  targets.armpitL = add(sL, down, 0.33 * tl);
  targets.armpitR = add(sR, down, 0.33 * tl);
  targets.hemL = add(out(hL, -0.1), down, 0.12 * tl);
  targets.hemR = add(out(hR, 0.1), down, 0.12 * tl);
  // Sleeves as long, relative to the shoulders, as on the garment.
  const gsw = len(sub(garment.shoulderR!, garment.shoulderL!));
  const ratioL = len(sub(garment.sleeveL!, garment.shoulderL!)) / gsw;
  const ratioR = len(sub(garment.sleeveR!, garment.shoulderR!)) / gsw;
  targets.sleeveL = alongArm(pose, 'right', ratioL * sw, unit(add(down, across, -0.6)));
  targets.sleeveR = alongArm(pose, 'left', ratioR * sw, unit(add(down, across, 0.6)));
  return targets;
}

/** Polygon of the body region a clothes type covers (for masks and checks), in pixels. */
export function bodyRegion(pose: Pose, type: ClothesType): P[] {
  const { sL, sR, hL, hR, across, down, sw, tl, pt } = torso(pose);
  const out = (p: P, k: number): P => add(p, across, k * sw);
  if (type === 'lower_body') {
    const { kL, kR } = knees(pose);
    return [add(out(hL, -0.12), down, -0.12 * tl), add(out(hR, 0.12), down, -0.12 * tl), out(kR, 0.1), out(kL, -0.1)];
  }
  const bottom = type === 'dresses' ? 0.9 : 0.1;
  return [out(sL, -0.05), out(sR, 0.05), add(out(hR, 0.06), down, bottom * tl), add(out(hL, -0.06), down, bottom * tl)];
}

export { polygonMask };
