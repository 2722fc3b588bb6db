// Step: single-person pose with MoveNet SinglePose (Lightning 192 / Thunder 256, imported from TF.js).
//   input  "input"     int32 [1, S, S, 3] NHWC, RGB 0..255, the photo letterboxed to a square
//   output "Identity"  float32 [1, 1, 17, 3]: (y, x, score) per COCO keypoint, normalized to the square
// -> 17 keypoints in original pixels.
import { letterboxRgb, type RgbImage } from '../imaging/image.ts';
import type { ModelSession } from '../models/onnx.ts';
import type { StageTimer } from '../domain/stage-timer.ts';

export const COCO_KEYPOINTS = [
  'nose', 'left_eye', 'right_eye', 'left_ear', 'right_ear', 'left_shoulder', 'right_shoulder', 'left_elbow', 'right_elbow',
  'left_wrist', 'right_wrist', 'left_hip', 'right_hip', 'left_knee', 'right_knee', 'left_ankle', 'right_ankle',
] as const;
export type CocoKeypoint = (typeof COCO_KEYPOINTS)[number];

export const SKELETON: Array<[CocoKeypoint, CocoKeypoint]> = [
  ['left_shoulder', 'right_shoulder'], ['left_shoulder', 'left_elbow'], ['left_elbow', 'left_wrist'], ['right_shoulder', 'right_elbow'],
  ['right_elbow', 'right_wrist'], ['left_shoulder', 'left_hip'], ['right_shoulder', 'right_hip'], ['left_hip', 'right_hip'],
  ['left_hip', 'left_knee'], ['left_knee', 'left_ankle'], ['right_hip', 'right_knee'], ['right_knee', 'right_ankle'],
  ['nose', 'left_eye'], ['nose', 'right_eye'], ['left_eye', 'left_ear'], ['right_eye', 'right_ear'],
];

export interface PoseKeypoint {
  x: number;
  y: number;
  score: number;
}

export type Pose = Record<CocoKeypoint, PoseKeypoint>;

/** MoveNet on a letterboxed copy of the image: 17 keypoints in original pixels. */
export async function estimatePose(session: ModelSession, image: RgbImage, S: number, t: StageTimer): Promise<Record<CocoKeypoint, PoseKeypoint>> {
  const { tensor, letterbox } = await t.time('preprocess', async () => {
    const { bytes, letterbox } = await letterboxRgb(image, S);
    return { tensor: Int32Array.from(bytes), letterbox };
  });
  const out = await t.infer('inference', () => session.runAny({ [session.inputNames[0]!]: { data: tensor, dims: [1, S, S, 3] } }));
  return t.time('postprocess', () => {
    const y = out[session.outputNames[0]!]!.data as Float32Array;
    const kp = {} as Record<CocoKeypoint, PoseKeypoint>;
    COCO_KEYPOINTS.forEach((name, i) => {
      const px = (y[3 * i + 1]! * S - letterbox.padX) / letterbox.scale;
      const py = (y[3 * i]! * S - letterbox.padY) / letterbox.scale;
      kp[name] = { x: Math.round(px * 100) / 100, y: Math.round(py * 100) / 100, score: Math.round(y[3 * i + 2]! * 10000) / 10000 };
    });
    return kp;
  });
}

