// Face detection: decode -> BlazeFace (steps/face-detection.ts: letterbox 256x256 in [-1, 1], anchor
// decode, weighted NMS) -> boxes and keypoints in original pixels. Outputs faces.json and preview.jpg.
import { decodeImage, renderOverlayJpeg } from '../../imaging/image.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { detectFaces, readDetectorParams, type DetectionResult } from '../../steps/face-detection.ts';
import { jsonFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { faceDetectionSpec } from './spec.ts';

export const faceDetection = definePipeline(faceDetectionSpec, async (ctx, input, files) => {
  const params = readDetectorParams(ctx.params);
  const t = stageTimer(ctx.signal);
  const session = await ctx.session('detector');
  const image = await t.time('decode', () => decodeImage(files.image[0]!, { maxPixels: ctx.maxPixels }));
  const faces = await detectFaces(session, image, params, input.min_score ?? params.min_score, t);
  const outFiles = await t.time('render', async () => {
    const result: DetectionResult = { faces, width: image.width, height: image.height };
    const preview = await renderOverlayJpeg(image, { boxes: faces.map((f) => f.box), points: faces.flatMap((f) => Object.values(f.keypoints)) });
    return [jsonFile('faces.json', result), { name: 'preview.jpg', contentType: 'image/jpeg', data: preview }];
  });
  return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [`faces: ${faces.length}`, `provider: ${session.provider}`] };
});
