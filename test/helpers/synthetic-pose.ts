// A synthetic BlazePose result for the try-on's unit tests: a frontal standing body on a 400x700
// frame (shoulders at y 180, hips at 420), arms given by the test, whose answer is known without
// any model.
import { BLAZEPOSE_LANDMARKS, type BodyLandmark, type BodyPose } from '../../src/steps/blazepose.ts';

type Pt = [number, number];

/** The body's fixed landmarks: head, shoulders, hips and legs. */
const TRUNK: Record<string, Pt> = {
  nose: [200, 90], left_shoulder: [260, 180], right_shoulder: [140, 180],
  left_hip: [240, 420], right_hip: [160, 420], left_knee: [240, 560], right_knee: [160, 560],
  left_ankle: [240, 680], right_ankle: [160, 680], left_foot_index: [245, 695], right_foot_index: [155, 695],
};

/**
 * The body with `arms` (elbow, wrist and hand landmarks by BlazePose name; the person's right arm
 * is on the image's left), every landmark present, each seen with `visibility(name)` (0.99 by
 * default); a landmark not given lies at the nose.
 */
export function syntheticPose(arms: Record<string, Pt>, visibility: (name: string) => number = () => 0.99): BodyPose {
  const at = { ...TRUNK, ...arms };
  const landmarks = Object.fromEntries(BLAZEPOSE_LANDMARKS.map((n) => {
    const [x, y] = at[n] ?? at.nose!;
    return [n, { x, y, z: 0, visibility: visibility(n), presence: 0.99 } satisfies BodyLandmark];
  })) as BodyPose['landmarks'];
  return { landmarks, presence: 1, mask: new Uint8Array(0) } as unknown as BodyPose;
}
