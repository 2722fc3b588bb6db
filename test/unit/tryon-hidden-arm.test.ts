// An arm BlazePose cannot see (elbow and wrist under 0.3 visibility: behind a turned body) is not
// cut out of the torso and gets no sleeve (pipelines/tryon/parts.ts); a seen arm in the same place
// is cut out and gets its sleeve. A synthetic standing body on a rectangle instance: the answer is
// known without any model.
import { describe, expect, it } from 'vitest';
import { bodyFrame, hiddenArm } from '../../src/pipelines/tryon/body.ts';
import { bodyParts } from '../../src/pipelines/tryon/parts.ts';
import { syntheticPose } from '../helpers/synthetic-pose.ts';

const W = 400, H = 700;

/** A frontal body; the image-right arm (the person's left) hangs across the torso with `vis`. */
const pose = (vis: number) =>
  syntheticPose(
    {
      right_elbow: [110, 300], right_wrist: [105, 410], right_index: [105, 440], right_pinky: [100, 440], right_thumb: [110, 440],
      // The far arm laid across the torso, as BlazePose guesses a hidden arm.
      left_elbow: [230, 300], left_wrist: [215, 400], left_index: [212, 430], left_pinky: [208, 430], left_thumb: [218, 430],
    },
    (n) => (/^left_(elbow|wrist|index|pinky|thumb)$/.test(n) ? vis : 0.99),
  );

/** The person: a torso rectangle and the arms' columns beside it. */
const instance = new Uint8Array(W * H);
for (let y = 150; y < 700; y++) for (let x = 90; x < 290; x++) instance[y * W + x] = 1;

const lengths = { torso: 300, sleeveL: 60, sleeveR: 60 };

describe('hidden arms (try-on)', () => {
  it('leaves an arm BlazePose cannot see in the torso, without a sleeve', () => {
    const b = bodyFrame(pose(0.05), W, H);
    expect(hiddenArm(b, 'R')).toBe(true);
    expect(hiddenArm(b, 'L')).toBe(false);
    const parts = bodyParts(b, instance, 'upper_body', lengths, { skirtLike: false });
    // The hidden forearm's middle lies in the torso clip; the seen arm's sleeve is there, not the other.
    expect(parts.clips.torso![350 * W + 222]).toBe(1);
    expect(parts.strips.sleeveL).toBeDefined();
    expect(parts.strips.sleeveR).toBeUndefined();
  });

  it('cuts a seen arm in the same place out of the torso and gives it a sleeve', () => {
    const b = bodyFrame(pose(0.9), W, H);
    expect(hiddenArm(b, 'R')).toBe(false);
    const parts = bodyParts(b, instance, 'upper_body', lengths, { skirtLike: false });
    expect(parts.clips.torso![350 * W + 222]).toBe(0);
    expect(parts.strips.sleeveR).toBeDefined();
  });
});
