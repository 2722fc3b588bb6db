// A bare arm BlazePose only guesses (elbow and wrist visibility under 0.55, not hidden behind the
// body) hanging beside the torso gets no sleeve, and the torso's edges stop at its line
// (pipelines/tryon/parts.ts): on person-standing the guessed arm lay along her friend's arm, which
// the instance took in, and the T-shirt's side was drawn down it. A synthetic standing body on a
// rectangle instance that reaches past the guessed arm (the friend's arm): the answer is known
// without any model.
import { describe, expect, it } from 'vitest';
import { bodyFrame, unsureArm } from '../../src/pipelines/tryon/body.ts';
import { bodyParts } from '../../src/pipelines/tryon/parts.ts';
import { syntheticPose } from '../helpers/synthetic-pose.ts';

const W = 400, H = 700;

/** A frontal body whose image-left arm (the person's right) hangs beside the torso with `vis`. */
const pose = (vis: number) =>
  syntheticPose(
    {
      right_elbow: [120, 300], right_wrist: [115, 410], right_index: [115, 440], right_pinky: [110, 440], right_thumb: [120, 440],
      left_elbow: [290, 300], left_wrist: [295, 410], left_index: [295, 440], left_pinky: [300, 440], left_thumb: [290, 440],
    },
    (n) => (/^right_(elbow|wrist|index|pinky|thumb)$/.test(n) ? vis : 0.99),
  );

/** The torso and arms, and beyond the image-left arm a neighbour's arm joined to them (x 40-100). */
const instance = new Uint8Array(W * H);
for (let y = 150; y < 700; y++) for (let x = 40; x < 320; x++) instance[y * W + x] = 1;

/** The bare skin along the image-left arm (x 100-135, from the shoulder to below the wrist): a bare arm. */
const armSkin = new Uint8Array(W * H);
for (let y = 180; y < 460; y++) for (let x = 100; x < 135; x++) armSkin[y * W + x] = 1;

const lengths = { torso: 300, sleeveL: 60, sleeveR: 60 };
/** The torso strip's image-left edge (least x) at its stations between the armpits and the hips. */
const leftEdge = (s: { left: Array<[number, number]> }) => Math.min(...s.left.filter(([, y]) => y > 260 && y < 400).map(([x]) => x));

describe('arms BlazePose only guesses (try-on)', () => {
  it('gives a guessed bare arm no sleeve and stops the torso at its line', () => {
    const b = bodyFrame(pose(0.45), W, H);
    expect(unsureArm(b, 'L')).toBe(true);
    expect(unsureArm(b, 'R')).toBe(false);
    const parts = bodyParts(b, instance, 'upper_body', lengths, { skirtLike: false, armSkin });
    expect(parts.strips.sleeveL).toBeUndefined();
    expect(parts.strips.sleeveR).toBeDefined();
    // The guessed arm's line runs at x 115-120: the torso's edge stays on its inner side.
    expect(leftEdge(parts.strips.torso!)).toBeGreaterThan(110);
    expect(parts.clips.torso![350 * W + 118]).toBe(0);
  });

  it('walks past a seen bare arm in the same place to the body beyond', () => {
    const b = bodyFrame(pose(0.9), W, H);
    expect(unsureArm(b, 'L')).toBe(false);
    const parts = bodyParts(b, instance, 'upper_body', lengths, { skirtLike: false, armSkin });
    expect(parts.strips.sleeveL).toBeDefined();
    expect(leftEdge(parts.strips.torso!)).toBeLessThan(100);
  });

  it('keeps the sleeve of a guessed arm in clothing', () => {
    const b = bodyFrame(pose(0.45), W, H);
    const parts = bodyParts(b, instance, 'upper_body', lengths, { skirtLike: false });
    expect(parts.strips.sleeveL).toBeDefined();
  });
});
