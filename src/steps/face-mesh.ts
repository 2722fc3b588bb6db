// Step: FaceMesh, 468 face landmarks (imported from TF.js).
//   input  "input_1"    float32 [1, L, L, 3] NHWC, RGB in [0, 1]: a crop turned level on the eye line,
//                       cropScale x the face box, edges repeated (L = 192)
//   output "Identity_2" [1, 1404] 468 x (x, y, z) in crop pixels; "Identity_1" [1, 1] presence
// Also the FaceMesh face oval (its silhouette topology) as a mask: the reference region for "the face".
import { sampleAffine, type RgbImage } from '../imaging/image.ts';
import { polygonMask } from '../imaging/polygon.ts';
import type { ModelSession } from '../models/onnx.ts';
import { MODEL_STAGES, type StageTimer, type StepStages } from '../domain/stage-timer.ts';
import type { Face } from './face-detection.ts';
import { faceRect, projectLandmarks, roiSampler, type Detection } from './mediapipe.ts';

export type Landmark = [number, number, number];

/** FaceMesh's face-oval landmark indices, clockwise from the forehead top (10). */
export const FACE_OVAL = [10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109];

/**
 * FaceMesh on one detection: an L x L crop turned level on the eye line (cropScale x the box,
 * edges repeated) -> presence and 468 [x, y, z] points in image pixels.
 */
export async function meshLandmarks(
  mesh: ModelSession,
  image: RgbImage,
  d: Detection,
  cropScale: number,
  L: number,
  t: StageTimer,
  stages: StepStages = MODEL_STAGES,
): Promise<{ presence: number; points: Array<[number, number, number]> }> {
  const rect = faceRect(d, cropScale);
  const crop = await t.time(stages[0], () => sampleAffine(image, roiSampler(rect, L, L), L, L, 'replicate', [0, 1]));
  const out = await t.infer(stages[1], () => mesh.run({ [mesh.inputNames[0]!]: { data: crop, dims: [1, L, L, 3] } }));
  return t.time(stages[2], () => {
    const named = (prefix: string) => out[mesh.outputNames.find((n) => n.startsWith(prefix))!]!.data;
    const presence = named('Identity_1')[0]!;
    return { presence, points: projectLandmarks(Float32Array.from(named('Identity_2'), (v) => v / L), 468, rect) };
  });
}

/** FaceMesh on a BlazeFace face (box and eye keypoints, as MediaPipe crops it). */
export async function meshFromFace(mesh: ModelSession, image: RgbImage, face: Face, cropScale: number, L: number, t: StageTimer, stages: StepStages = MODEL_STAGES): Promise<{ presence: number; points: Landmark[] }> {
  const det: Detection = {
    xMin: face.box.x,
    yMin: face.box.y,
    width: face.box.width,
    height: face.box.height,
    keypoints: [face.keypoints.right_eye, face.keypoints.left_eye],
    score: face.score,
  };
  return meshLandmarks(mesh, image, det, cropScale, L, t, stages);
}

/** Rasterizes the face oval of 468 landmarks: 1 inside. */
export function ovalMask(lm: ReadonlyArray<readonly [number, number, number]>, width: number, height: number): Uint8Array {
  return polygonMask(FACE_OVAL.map((i) => [lm[i]![0], lm[i]![1]] as const), width, height);
}
