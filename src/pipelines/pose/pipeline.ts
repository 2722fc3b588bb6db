// Single-person pose with MoveNet SinglePose (Lightning 192 / Thunder 256, imported from TF.js).
//   input  "input"     int32 [1, S, S, 3] NHWC, RGB 0..255, the photo letterboxed to a square
//   output "Identity"  float32 [1, 1, 17, 3]: (y, x, score) per COCO keypoint, normalized to the square
// Keypoints are mapped back to original pixels. Outputs: pose.json, preview.jpg (skeleton).
import { copyImage, decodeImage, drawPoints, drawSegments, encodeJpeg, letterboxRgb, type RgbImage } from '../../imaging/image.ts';
import type { ModelSession } from '../../models/onnx.ts';
import { PoseInput } from '../inputs.ts';
import { jsonFile, numberParam } from '../params.ts';
import { stageTimer, type PipelineRunner, type StageTimer } from '../types.ts';

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

export const pose: PipelineRunner = {
  async run(ctx, rawInput, files) {
    const input = PoseInput.parse(rawInput);
    const S = numberParam(ctx.params, 'input_size', 'pose');
    const minScore = input.min_score ?? numberParam(ctx.params, 'min_score', 'pose');
    const t = stageTimer();
    const session = await ctx.session('pose');
    const image = await t.time('decode', () => decodeImage(files.image!, { maxPixels: ctx.maxPixels }));
    const keypoints = await estimatePose(session, image, S, t);
    const outFiles = await t.time('render', async () => {
      const canvas = copyImage(image);
      const thick = Math.max(2, Math.round(Math.min(image.width, image.height) / 150));
      const seen = (k: CocoKeypoint) => keypoints[k].score >= minScore;
      drawSegments(canvas, SKELETON.filter(([a, b]) => seen(a) && seen(b)).map(([a, b]) => [keypoints[a].x, keypoints[a].y, keypoints[b].x, keypoints[b].y]), [0, 230, 118], thick);
      drawPoints(canvas, COCO_KEYPOINTS.filter(seen).map((k) => keypoints[k]), [255, 23, 68], thick * 1.5);
      const visible = COCO_KEYPOINTS.filter(seen).length;
      return [
        jsonFile('pose.json', { width: image.width, height: image.height, min_score: minScore, visible_keypoints: visible, keypoints }),
        { name: 'preview.jpg', contentType: 'image/jpeg', data: await encodeJpeg(canvas, 85) },
      ];
    });
    return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [`provider: ${session.provider}`] };
  },
};
