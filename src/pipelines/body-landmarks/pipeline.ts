// Single-person body landmarks: MediaPipe BlazePose detector + Full landmark model (imported from TF.js).
//   detector   "input"      float32 [1, 224, 224, 3] NHWC, RGB in [-1, 1], the photo letterboxed
//              "Identity"   float32 [1, 2254, 13] score logit + face box + 4 alignment keypoints per anchor
//   landmarks  "input_1"    float32 [1, 256, 256, 3] NHWC, RGB in [0, 1], the body crop turned upright
//              "Identity_2" [1, 195] 39 x (x, y, z, visibility, presence) in crop pixels;
//              "Identity_3" [1, 1] pose presence; "Identity_1" [1, 256, 256, 1] person probability
// The best detection's crop only (BlazePose is single-person). Outputs: landmarks.json (33 MediaPipe
// landmarks in pixels with visibility and presence; person null when none is found), mask.png
// (8-bit person mask at full resolution, from the crop), preview.jpg (mask tint and skeleton).
import { copyImage, decodeImage, drawPoints, drawSegments, encodeJpeg, tint } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { BLAZEPOSE_LANDMARKS, BODY_CONNECTIONS, bodyLandmarks, detectBodies, type BodyLandmark, type BodyPose } from '../../steps/blazepose.ts';
import { jsonFile, maskFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { bodyLandmarksSpec } from './spec.ts';

const r2 = (v: number) => Math.round(v * 100) / 100;
const r4 = (v: number) => Math.round(v * 10000) / 10000;

export const bodyLandmarksPipeline = definePipeline(bodyLandmarksSpec, async (ctx, input, files) => {
  const P = (k: string) => numberParam(ctx.params, k, 'body-landmarks');
  const minVisibility = input.min_visibility ?? P('min_visibility');
  const t = stageTimer(ctx.signal);
  const [detector, model] = await Promise.all([ctx.session('detector'), ctx.session('landmarks')]);
  const image = await t.time('decode', () => decodeImage(files.image[0]!, { maxPixels: ctx.maxPixels }));
  const detections = await detectBodies(detector, image, P('detector_size'), P('min_score'), P('iou_threshold'), t);
  let pose: BodyPose | null = null;
  if (detections.length) {
    const found = await bodyLandmarks(model, image, detections[0]!, P('landmark_size'), P('roi_scale'), t, ['crop', 'landmarks', 'project']);
    if (found.presence >= P('min_presence')) pose = found;
  }
  const mask = pose?.mask ?? new Uint8Array(image.width * image.height);
  const outFiles = await t.time('render', async () => {
    const canvas = pose ? tint(image, mask, [0, 200, 255], 0.35) : copyImage(image);
    if (pose) {
      const lm = pose.landmarks;
      const thick = Math.max(2, Math.round(Math.min(image.width, image.height) / 150));
      const seen = (p: BodyLandmark) => p.visibility >= minVisibility;
      drawSegments(canvas, BODY_CONNECTIONS.filter(([a, b]) => seen(lm[a]) && seen(lm[b])).map(([a, b]) => [lm[a].x, lm[a].y, lm[b].x, lm[b].y]), [0, 230, 118], thick);
      drawPoints(canvas, BLAZEPOSE_LANDMARKS.map((n) => lm[n]).filter(seen), [255, 23, 68], thick * 1.5);
    }
    const person = pose && {
      score: r4(pose.detection.score),
      presence: r4(pose.presence),
      roi: { x_center: r2(pose.roi.xCenter), y_center: r2(pose.roi.yCenter), size: r2(pose.roi.width), rotation: r4(pose.roi.rotation) },
      landmarks: Object.fromEntries(
        BLAZEPOSE_LANDMARKS.map((n) => {
          const p = pose!.landmarks[n];
          return [n, { x: r2(p.x), y: r2(p.y), z: r2(p.z), visibility: r4(p.visibility), presence: r4(p.presence) }];
        }),
      ),
    };
    return [
      jsonFile('landmarks.json', { width: image.width, height: image.height, detections: detections.length, person }),
      await maskFile('mask.png', mask, image.width, image.height),
      { name: 'preview.jpg', contentType: 'image/jpeg', data: await encodeJpeg(canvas, 85) },
    ];
  });
  return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [`people detected: ${detections.length}`, `landmarks: ${pose ? 33 : 0}`, `provider: ${model.provider}`] };
});
