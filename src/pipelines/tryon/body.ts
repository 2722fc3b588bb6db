// The body: the target's BlazePose landmarks named by image side ("L"/"R" = image left/right; a
// person facing the camera has her right shoulder on the image's left), the torso's frame and
// sizes, the skeleton as capsules (instance split, arm and hand occlusion, part clips), and the
// refusals (no person, too small, a needed part out of frame).
import { AppError, pastLimit } from '../../errors/codes.ts';
import type { ClothesType } from '../../domain/job.ts';
import type { BodyLandmark, BodyLandmarkName, BodyPose } from '../../steps/blazepose.ts';
import type { Shape } from '../../steps/person-instance.ts';

export type P = [number, number];

export const add = (a: P, b: P, k = 1): P => [a[0] + b[0] * k, a[1] + b[1] * k];
export const sub = (a: P, b: P): P => [a[0] - b[0], a[1] - b[1]];
export const mid = (a: P, b: P): P => [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
export const len = (a: P) => Math.hypot(a[0], a[1]) || 1;
export const unit = (a: P): P => [a[0] / len(a), a[1] / len(a)];
export const lerp = (a: P, b: P, t: number): P => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
export const perp = (a: P): P => [-a[1], a[0]];

const JOINTS = ['shoulder', 'elbow', 'wrist', 'index', 'pinky', 'hip', 'knee', 'ankle', 'foot_index'] as const;
type Joint = (typeof JOINTS)[number];

export interface Body {
  W: number;
  H: number;
  /** Joints by image side. */
  L: Record<Joint, P>;
  R: Record<Joint, P>;
  /** Whether a joint is present (landmark presence >= 0.5) and inside the photo. */
  inL: Record<Joint, boolean>;
  inR: Record<Joint, boolean>;
  /** BlazePose's visibility of each joint, 0..1 (low: the joint is there but hidden, behind the body or an object). */
  visL: Record<Joint, number>;
  visR: Record<Joint, number>;
  nose: P;
  neck: P;
  pelvis: P;
  /** Unit vectors: image-left -> image-right across the torso, shoulders -> hips. */
  across: P;
  down: P;
  /** Shoulder joint distance and torso length (shoulder line to hip line), pixels. */
  sw: number;
  tl: number;
  /** The body's scale for widths: max(shoulders, 0.7 x torso), so a turned person is not thin. */
  size: number;
}

/** The body frame of one BlazePose result. */
export function bodyFrame(pose: BodyPose, W: number, H: number): Body {
  const lm = pose.landmarks;
  const leftIsRight = lm.right_shoulder.x <= lm.left_shoulder.x;
  const [l, r] = leftIsRight ? (['right', 'left'] as const) : (['left', 'right'] as const);
  const pt = (k: BodyLandmark): P => [k.x, k.y];
  const inside = (k: BodyLandmark) => k.presence >= 0.5 && k.x >= -0.01 * W && k.x <= 1.01 * W && k.y >= -0.01 * H && k.y <= 1.01 * H;
  const side = (s: 'left' | 'right', f: (k: BodyLandmark) => unknown) => Object.fromEntries(JOINTS.map((j) => [j, f(lm[`${s}_${j}` as BodyLandmarkName])]));
  const L = side(l, pt) as Record<Joint, P>, R = side(r, pt) as Record<Joint, P>;
  const neck = mid(L.shoulder, R.shoulder), pelvis = mid(L.hip, R.hip);
  const down = unit(sub(pelvis, neck));
  // Across: perpendicular to the spine, pointing the way the shoulders go.
  let across = perp(down);
  if (across[0] * (R.shoulder[0] - L.shoulder[0]) + across[1] * (R.shoulder[1] - L.shoulder[1]) < 0) across = [-across[0], -across[1]];
  const sw = len(sub(R.shoulder, L.shoulder));
  const tl = len(sub(pelvis, neck));
  return {
    W,
    H,
    L,
    R,
    inL: side(l, inside) as Record<Joint, boolean>,
    inR: side(r, inside) as Record<Joint, boolean>,
    visL: side(l, (k) => k.visibility) as Record<Joint, number>,
    visR: side(r, (k) => k.visibility) as Record<Joint, number>,
    nose: pt(lm.nose),
    neck,
    pelvis,
    across,
    down,
    sw,
    tl,
    size: Math.max(sw, 0.7 * tl),
  };
}

/** Below this BlazePose visibility a joint counts as hidden (hiddenArm). */
const HIDDEN = 0.3;

/**
 * Whether an arm is behind the body: BlazePose sees neither its elbow nor its wrist (a person
 * turned sideways, the far arm behind her back or hanging behind the torso). Its landmarks are
 * then guesses, laid across the torso: cut out of the torso as an arm in front, they left a band of
 * the old clothing down the middle of the new garment (s5-navy), and a sleeve there would be drawn
 * over the chest.
 */
export const hiddenArm = (b: Body, s: 'L' | 'R'): boolean => {
  const v = s === 'L' ? b.visL : b.visR;
  return v.elbow < HIDDEN && v.wrist < HIDDEN;
};

/** Below this BlazePose visibility at both its elbow and its wrist an arm is a guess (unsureArm). */
const UNSURE = 0.55;

/**
 * Whether BlazePose guesses an arm it does not see: its elbow and wrist both under UNSURE (and not
 * hiddenArm, laid behind the torso). What the photo shows along that line is something in front
 * of the arm: on person-standing (elbow 0.46, wrist 0.24) her friend's arm hugging her, which the
 * instance takes in, and the garment's sleeve and side were drawn down it.
 */
export const unsureArm = (b: Body, s: 'L' | 'R'): boolean => {
  const v = s === 'L' ? b.visL : b.visR;
  return !hiddenArm(b, s) && v.elbow < UNSURE && v.wrist < UNSURE;
};

/** Arm chain of one image side: shoulder, elbow, wrist. */
export const arm = (b: Body, s: 'L' | 'R'): P[] => [b[s].shoulder, b[s].elbow, b[s].wrist];
/** Leg chain of one image side: hip, knee, ankle. */
export const leg = (b: Body, s: 'L' | 'R'): P[] => [b[s].hip, b[s].knee, b[s].ankle];

/** Forearms and hands (and optionally upper arms) as capsules. */
export function armShapes(b: Body, { upper = true, forearm = true, hands = true, sides = ['L', 'R'] as readonly ('L' | 'R')[] } = {}): Shape[] {
  const k = b.size;
  const out: Shape[] = [];
  for (const s of sides) {
    const j = b[s];
    if (upper) out.push({ a: j.shoulder, b: j.elbow, r: 0.14 * k });
    if (forearm) out.push({ a: j.elbow, b: j.wrist, r: 0.11 * k });
    if (hands) out.push({ a: j.wrist, b: j.index, r: 0.1 * k }, { a: j.wrist, b: j.pinky, r: 0.1 * k }, { a: j.wrist, b: j.wrist, r: 0.1 * k });
  }
  return out;
}

/** Legs as capsules. */
export function legShapes(b: Body): Shape[] {
  const k = b.size;
  const out: Shape[] = [];
  for (const s of ['L', 'R'] as const) {
    const j = b[s];
    out.push({ a: j.hip, b: j.knee, r: 0.2 * k }, { a: j.knee, b: j.ankle, r: 0.13 * k }, { a: j.ankle, b: j.foot_index, r: 0.08 * k });
  }
  return out;
}

/** The skeleton in three groups: torso and head (the torso polygon and capsules), arms, legs. */
export function skeletonParts(b: Body, headR: number): { core: Shape[]; arms: Shape[]; legs: Shape[] } {
  const k = b.size;
  return {
    core: [
      { poly: [b.L.shoulder, b.R.shoulder, b.R.hip, b.L.hip] },
      { a: b.L.shoulder, b: b.L.hip, r: 0.12 * k },
      { a: b.R.shoulder, b: b.R.hip, r: 0.12 * k },
      { a: b.L.shoulder, b: b.R.shoulder, r: 0.1 * k },
      { a: b.L.hip, b: b.R.hip, r: 0.12 * k },
      { a: b.neck, b: b.nose, r: 0.14 * k },
      { a: b.nose, b: b.nose, r: headR },
    ],
    arms: armShapes(b),
    legs: legShapes(b),
  };
}

/** The whole skeleton as capsules and the torso polygon, for the instance split. */
export function skeletonShapes(b: Body, headR: number): Shape[] {
  const { core, arms, legs } = skeletonParts(b, headR);
  return [...core, ...arms, ...legs];
}

/** What each clothes type needs to see, by joint and part name. */
const REQUIRED: Record<ClothesType, Array<[Joint, string]>> = {
  upper_body: [['shoulder', 'shoulders'], ['hip', 'hips']],
  lower_body: [['hip', 'hips']],
  dresses: [['shoulder', 'shoulders'], ['hip', 'hips']],
};

/**
 * Refuses lower_body where the body model lays a leg on something that is not the person's
 * (`unseen`, the image sides: pipeline.ts unseenLegs), naming the leg, as checkBody names a leg
 * out of the frame. Other clothes types go on.
 */
export function checkLegsSeen(unseen: ReadonlyArray<'L' | 'R'>, type: ClothesType, what: string): void {
  if (type !== 'lower_body' || !unseen.length) return;
  const [which, verb, it] = unseen.length === 2 ? ['legs', 'are', 'them'] : [`image-${unseen[0] === 'L' ? 'left' : 'right'} leg`, 'is', 'it'];
  throw new AppError('NO_PERSON_FOUND', `${what} does not show where the person's ${which} ${verb} (the body model places ${it} on something else, as for a leg hidden behind another person), which ${type} needs`);
}

/** A person detected whose body BlazePose cannot make out: its pose presence and the version's least (min_presence). */
export interface UnclearBody {
  presence: number;
  least: number;
}

/**
 * Refuses a photo without a person, with a person under 25% of the photo's height, or without the
 * parts a clothes type needs (naming them). `heightFraction`: the instance's height over the photo's;
 * `unclear`: why there is no body where a person was detected.
 */
export function checkBody(b: Body | null, heightFraction: number, type: ClothesType, what: string, unclear?: UnclearBody): asserts b is Body {
  if (!b && unclear) {
    throw new AppError('NO_PERSON_FOUND', `the body of the person in ${what} cannot be made out (pose confidence ${pastLimit(unclear.presence * 100, unclear.least * 100)}%; at least ${Math.round(unclear.least * 100)}% needed): a photo where one person's body shows clearly, not hidden behind others, works best`);
  }
  if (!b) throw new AppError('NO_PERSON_FOUND', `no person found in ${what}`);
  if (heightFraction < 0.25) {
    throw new AppError('NO_PERSON_FOUND', `the person in ${what} is too small (${pastLimit(heightFraction * 100, 25)}% of its height; at least 25% needed)`);
  }
  const lacking = REQUIRED[type].filter(([j]) => !b.inL[j] || !b.inR[j]);
  const missing = [...new Set(lacking.map(([, part]) => part))];
  // Legs for lower_body: the photo must reach a third of the way to the knees below the hips.
  if (type === 'lower_body' && !missing.length) {
    const hipY = Math.max(b.L.hip[1], b.R.hip[1]);
    if (b.H - hipY < 0.3 * b.tl) missing.push('legs');
  }
  // Joints the body model places well inside the frame but is unsure are there (its presence
  // under 0.5: face-api's sample6 mirrored at 960-1150 px, her hips 70 px above the bottom edge
  // at 0.10-0.25) are not out of the frame: the answer says the body model cannot make them out.
  const inFrame = (p: P) => p[0] >= 0.05 * b.W && p[0] <= 0.95 * b.W && p[1] >= 0.05 * b.H && p[1] <= 0.95 * b.H;
  if (lacking.length && lacking.every(([j]) => inFrame(b.L[j]) && inFrame(b.R[j]))) {
    throw new AppError('NO_PERSON_FOUND', `the body model cannot make out the person's ${missing.join(' and ')} in ${what} (hidden behind someone or something, or turned away), which ${type} needs: a photo where they show clearly works best`);
  }
  if (missing.length) throw new AppError('NO_PERSON_FOUND', `${what} does not show the ${missing.join(' and ')}, which ${type} needs`);
}
