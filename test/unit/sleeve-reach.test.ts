// A sleeve's end on the arm by the garment's own proportions (pipelines/tryon/parts.ts
// SLEEVE_REACH): a long sleeve (its length over the garment's torso 0.55 or more) ends on the
// forearm near the wrist whatever the product photo's scale, a short one on the upper arm, and a
// long one whose wrist BlazePose lays out of the photo is not taken there. A synthetic standing
// body on a rectangle instance: the answer is known without any model.
import { describe, expect, it } from 'vitest';
import { bodyFrame } from '../../src/pipelines/tryon/body.ts';
import { bodyParts } from '../../src/pipelines/tryon/parts.ts';
import { syntheticPose } from '../helpers/synthetic-pose.ts';

const W = 400, H = 700;
const ELBOW_Y = 300;

/** A frontal body, arms hanging beside the torso; the image-left wrist at `wristY`. */
const pose = (wristY: number) =>
  syntheticPose({
    right_elbow: [110, ELBOW_Y], right_wrist: [105, wristY], right_index: [105, wristY + 30], right_pinky: [100, wristY + 30], right_thumb: [110, wristY + 30],
    left_elbow: [290, ELBOW_Y], left_wrist: [295, 410], left_index: [295, 440], left_pinky: [300, 440], left_thumb: [290, 440],
  });

/** The person: the torso and the arms' columns beside it. */
const instance = new Uint8Array(W * H);
for (let y = 150; y < H; y++) for (let x = 80; x < 320; x++) instance[y * W + x] = 1;

/** The image-left sleeve's cuff (its place on the arm) for a garment sleeve of `sleeve` against a torso of 300. */
function cuff(sleeve: number, wristY = 410) {
  const b = bodyFrame(pose(wristY), W, H);
  const parts = bodyParts(b, instance, 'upper_body', { torso: 300, sleeveL: sleeve, sleeveR: sleeve }, { skirtLike: false });
  return parts.cuffs.sleeveL!;
}

describe('sleeve reach (try-on)', () => {
  it("ends a long sleeve on the forearm near the wrist, though the photo's sleeve scaled is shorter than the arm", () => {
    // 0.6 of the garment's torso; scaled as it is (180 px) it would end 50 px past the elbow.
    const c = cuff(180);
    expect(c.short).toBe(false);
    expect(c.at[1]).toBeGreaterThan(ELBOW_Y + 0.7 * (410 - ELBOW_Y));
    expect(c.at[1]).toBeLessThan(410);
  });

  it('ends a short sleeve on the upper arm', () => {
    const c = cuff(60);
    expect(c.short).toBe(true);
    expect(c.at[1]).toBeLessThan(ELBOW_Y);
  });

  it('does not take a long sleeve to a wrist laid out of the photo (the hand may be in it)', () => {
    const c = cuff(180, 760);
    expect(c.at[1]).toBeLessThan(ELBOW_Y + 0.5 * (760 - ELBOW_Y));
  });
});
