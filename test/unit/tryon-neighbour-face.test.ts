// A neighbour's BlazePose skeleton is judged against her face before it splits the people's mask
// (analysis.ts offItsFace), and the target's landmarks found on a part of a group photo against
// hers (landmarksOnFace): synthetic poses and face detections whose answers are known without any
// model. On face-api's whole sample6 at 1150 px the jumpsuit's skeleton lay 0.51 face widths off
// her face and the green dress's torso leant 34 degrees from her face's down; skeletons that follow
// their person there: 0.04-0.17 face widths, 1-13 degrees (test/integration/tryon.test.ts runs the
// photo itself).
import { describe, expect, it } from 'vitest';
import { landmarksOnFace, offItsFace } from '../../src/pipelines/tryon/analysis.ts';
import type { Face } from '../../src/steps/face-detection.ts';
import { syntheticPose } from '../helpers/synthetic-pose.ts';

/** A face detection 100 px wide whose eyes' midpoint is at (cx, 80), level. */
function face(cx: number): Face {
  const k = (x: number, y: number) => ({ x, y });
  return {
    box: { x: cx - 50, y: 40, width: 100, height: 100 },
    score: 0.9,
    keypoints: { right_eye: k(cx - 22, 80), left_eye: k(cx + 22, 80), nose_tip: k(cx, 100), mouth_center: k(cx, 120), right_ear_tragion: k(cx - 48, 85), left_ear_tragion: k(cx + 48, 85) },
  };
}

/** The synthetic standing body (shoulders' middle at x 200, hips' at 200) with its eyes at (ex, 80). */
const withEyes = (ex: number, extra: Record<string, [number, number]> = {}) => syntheticPose({ left_eye: [ex + 20, 80], right_eye: [ex - 20, 80], ...extra });

describe('a neighbour whose skeleton disagrees with her face is not split by', () => {
  it('keeps a skeleton whose eyes lie on her face and whose torso hangs below it', () => {
    expect(offItsFace(withEyes(205), [face(200)])).toBe(false);
  });
  it('drops a skeleton whose eyes lie half a face width off her face', () => {
    expect(offItsFace(withEyes(250), [face(200)])).toBe(true);
  });
  it('drops a skeleton whose torso leans 35 degrees from her level face', () => {
    // Hips moved so the shoulders' middle (200, 180) to the hips' middle runs 35 degrees off down.
    const dx = Math.tan((35 * Math.PI) / 180) * 240;
    expect(offItsFace(withEyes(200, { left_hip: [240 + dx, 420], right_hip: [160 + dx, 420] }), [face(200)])).toBe(true);
    // 15 degrees is a body leaning a little: kept.
    const d15 = Math.tan((15 * Math.PI) / 180) * 240;
    expect(offItsFace(withEyes(200, { left_hip: [240 + d15, 420], right_hip: [160 + d15, 420] }), [face(200)])).toBe(false);
  });
  it('keeps a skeleton with no detected face near it (cut by the frame, turned away)', () => {
    expect(offItsFace(withEyes(200), [face(400)])).toBe(false);
  });
});

describe("the target's landmarks on a part of a group photo", () => {
  const found = (ex: number) => ({ faces: [face(200)], bodies: [], fi: 0, bi: 0, pose: withEyes(ex) });
  it('are trusted where the eyes lie within 0.4 face widths of her face', () => {
    expect(landmarksOnFace(found(230))).toBe(true);
  });
  it('are not where they lie 0.9 face widths off (the part is given up for the whole photo)', () => {
    expect(landmarksOnFace(found(290))).toBe(false);
  });
});
