// Face landmarks: MediaPipe short-range BlazeFace + FaceMesh (both imported from TF.js).
//   detector   "input"    float32 [1, 128, 128, 3] NHWC, RGB in [-1, 1], the photo letterboxed
//              "Identity" float32 [1, 896, 17] score logit + box + 6 keypoints per anchor
//   landmarks  "input_1"  float32 [1, 192, 192, 3] NHWC, RGB in [0, 1], a crop turned level on the
//                         eye line, 1.5x the face box, edges repeated
//              "Identity_2" [1, 1404] 468 x (x, y, z) in crop pixels; "Identity_1" [1, 1] presence
// Outputs: landmarks.json (per face: box, score, presence, 468 [x, y, z] in pixels), preview.jpg.
import { copyImage, decodeImage, drawPoints, encodeJpeg, sampleAffine, type RgbImage } from '../../imaging/image.ts';
import type { ModelSession } from '../../models/onnx.ts';
import { ImageOnlyInput } from '../inputs.ts';
import { jsonFile, numberParam } from '../params.ts';
import { MODEL_STAGES, stageTimer, type PipelineRunner, type StageTimer, type StepStages } from '../types.ts';
import { SHORT_RANGE_ANCHORS, decodeDetections, type Detection, faceRect, hardNms, letterboxRoi, projectDetection, projectLandmarks, roiSampler, ssdAnchors } from './mediapipe.ts';

const ANCHORS = ssdAnchors(SHORT_RANGE_ANCHORS);
const round2 = (v: number) => Math.round(v * 100) / 100;

export interface FaceLandmarks {
  box: { x: number; y: number; width: number; height: number };
  score: number;
  presence: number;
  /** 468 points [x, y, z] in pixels (z: depth, same scale as x). */
  landmarks: Array<[number, number, number]>;
}

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

export const faceLandmarks: PipelineRunner = {
  async run(ctx, rawInput, files) {
    ImageOnlyInput.parse(rawInput);
    const P = (k: string) => numberParam(ctx.params, k, 'face-landmarks');
    const D = P('detector_size');
    const L = P('landmark_size');
    const t = stageTimer();
    const [detector, mesh] = await Promise.all([ctx.session('detector'), ctx.session('landmarks')]);
    const image = await t.time('decode', () => decodeImage(files.image!, { maxPixels: ctx.maxPixels }));
    const roi = letterboxRoi(image.width, image.height);
    const detIn = await t.time('preprocess', () => sampleAffine(image, roiSampler(roi, D, D), D, D, 'zero', [-1, 1]));
    const detOut = await t.infer('inference', () => detector.run({ [detector.inputNames[0]!]: { data: detIn, dims: [1, D, D, 3] } }));
    const detections = await t.time('postprocess', () =>
      hardNms(decodeDetections(detOut[detector.outputNames[0]!]!.data, ANCHORS, D, P('min_score')), P('iou_threshold'), P('max_faces')).map((d) => projectDetection(d, roi)),
    );
    const faces: FaceLandmarks[] = [];
    for (const d of detections) {
      const { presence, points } = await meshLandmarks(mesh, image, d, P('crop_scale'), L, t);
      if (presence < P('min_face_presence')) continue;
      faces.push({
        box: { x: round2(d.xMin), y: round2(d.yMin), width: round2(d.width), height: round2(d.height) },
        score: Math.round(d.score * 10000) / 10000,
        presence: Math.round(presence * 10000) / 10000,
        landmarks: points.map(([x, y, z]) => [round2(x), round2(y), round2(z)]),
      });
    }
    const outFiles = await t.time('render', async () => {
      const canvas = copyImage(image);
      const r = Math.max(1, Math.round(Math.min(image.width, image.height) / 400));
      for (const f of faces) drawPoints(canvas, f.landmarks.map(([x, y]) => ({ x, y })), [0, 230, 118], r);
      return [jsonFile('landmarks.json', { width: image.width, height: image.height, faces }), { name: 'preview.jpg', contentType: 'image/jpeg', data: await encodeJpeg(canvas, 85) }];
    });
    return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [`faces: ${faces.length}`, `provider: ${mesh.provider}`] };
  },
};
