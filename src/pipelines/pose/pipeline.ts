// Single-person pose with MoveNet SinglePose (Lightning 192 / Thunder 256, imported from TF.js).
//   input  "input"     int32 [1, S, S, 3] NHWC, RGB 0..255, the photo letterboxed to a square
//   output "Identity"  float32 [1, 1, 17, 3]: (y, x, score) per COCO keypoint, normalized to the square
// Keypoints are mapped back to original pixels. Outputs: pose.json, preview.jpg (skeleton).
import { copyImage, decodeImage, drawPoints, drawSegments, encodeJpeg } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { COCO_KEYPOINTS, SKELETON, estimatePose, type CocoKeypoint } from '../../steps/pose.ts';
import { jsonFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { poseSpec } from './spec.ts';

export const pose = definePipeline(poseSpec, async (ctx, input, files) => {
    const S = numberParam(ctx.params, 'input_size', 'pose');
  const minScore = input.min_score ?? numberParam(ctx.params, 'min_score', 'pose');
  const t = stageTimer(ctx.signal);
  const session = await ctx.session('pose');
  const image = await t.time('decode', () => decodeImage(files.image[0]!, { maxPixels: ctx.maxPixels }));
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
});
