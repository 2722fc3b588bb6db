// Face landmarks: MediaPipe short-range BlazeFace + FaceMesh (both imported from TF.js).
//   detector   "input"    float32 [1, 128, 128, 3] NHWC, RGB in [-1, 1], the photo letterboxed
//              "Identity" float32 [1, 896, 17] score logit + box + 6 keypoints per anchor
//   landmarks  "input_1"  float32 [1, 192, 192, 3] NHWC, RGB in [0, 1], a crop turned level on the
//                         eye line, 1.5x the face box, edges repeated
//              "Identity_2" [1, 1404] 468 x (x, y, z) in crop pixels; "Identity_1" [1, 1] presence
// Outputs: landmarks.json (per face: box, score, presence, 468 [x, y, z] in pixels), preview.jpg.
import { copyImage, decodeImage, drawPoints, encodeJpeg, sampleAffine } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { meshLandmarks } from '../../steps/face-mesh.ts';
import { SHORT_RANGE_ANCHORS, decodeDetections, hardNms, letterboxRoi, projectDetection, roiSampler, ssdAnchors } from '../../steps/mediapipe.ts';
import { jsonFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { faceLandmarksSpec } from './spec.ts';

const ANCHORS = ssdAnchors(SHORT_RANGE_ANCHORS);
const round2 = (v: number) => Math.round(v * 100) / 100;

export interface FaceLandmarks {
  box: { x: number; y: number; width: number; height: number };
  score: number;
  presence: number;
  /** 468 points [x, y, z] in pixels (z: depth, same scale as x). */
  landmarks: Array<[number, number, number]>;
}

export const faceLandmarks = definePipeline(faceLandmarksSpec, async (ctx, _input, files) => {
  const P = (k: string) => numberParam(ctx.params, k, 'face-landmarks');
  const D = P('detector_size');
  const L = P('landmark_size');
  const t = stageTimer(ctx.signal);
  const [detector, mesh] = await Promise.all([ctx.session('detector'), ctx.session('landmarks')]);
  const image = await t.time('decode', () => decodeImage(files.image[0]!, { maxPixels: ctx.maxPixels }));
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
});
