// Face parsing with BiSeNetV2 (CelebAMask-HQ, 19 classes; imported from TF.js).
//   detector: BlazeFace (steps/face-detection.ts) finds the faces; the target (largest) one is parsed
//   input  "input_tensor"  float32 [1, 512, 512, 3] NHWC, RGB in [-1, 1]: a square crop around the
//          face (crop_scale x the face box, shifted up for the hair), edges repeated past the photo
//   output "final_output"  int64 [512, 512] class per pixel
// Back at full resolution: labels.png (class ids, nearest), hair_mask.png and face_mask.png (soft,
// bilinear + feather), preview.jpg (classes tinted), parsing.json (class fractions, face, crop).
import { copyBytes, decodeImage, encodeJpeg, encodePng } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { detectFaces } from '../../steps/face-detection.ts';
import { CELEBAMASK_CLASSES, CLASS, parseFace, readParsingParams, softClassMask } from '../../steps/face-parsing.ts';
import { targetFace } from '../../steps/target-face.ts';
import { jsonFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { faceParsingSpec } from './spec.ts';

const PALETTE: Array<[number, number, number]> = [
  [0, 0, 0], [255, 204, 153], [102, 51, 0], [102, 51, 0], [0, 153, 255], [0, 153, 255], [204, 204, 0], [255, 102, 102], [255, 102, 102], [255, 255, 0],
  [255, 153, 51], [204, 0, 102], [255, 0, 102], [255, 0, 153], [153, 204, 0], [102, 153, 0], [0, 102, 204], [153, 0, 204], [255, 0, 0],
];

export const faceParsing = definePipeline(faceParsingSpec, async (ctx, _input, files) => {
    const p = readParsingParams(ctx.params);
  const det = {
    input_size: numberParam(ctx.params, 'detector_size', 'face-parsing'),
    min_score: numberParam(ctx.params, 'min_score', 'face-parsing'),
    iou_threshold: numberParam(ctx.params, 'iou_threshold', 'face-parsing'),
    max_faces: numberParam(ctx.params, 'max_faces', 'face-parsing'),
  };
  const t = stageTimer(ctx.signal);
  const [detector, parser] = await Promise.all([ctx.session('detector'), ctx.session('parser')]);
  const image = await t.time('decode', () => decodeImage(files.image[0]!, { maxPixels: ctx.maxPixels }));
  const face = targetFace(await detectFaces(detector, image, det, det.min_score, t), image.width, image.height);
  const parse = await parseFace(parser, image, face, p, t);
  const outFiles = await t.time('render', async () => {
    const hair = await softClassMask(parse, image, [CLASS.hair], p.featherPx);
    const skin = await softClassMask(parse, image, [CLASS.skin, CLASS.nose, CLASS.l_brow, CLASS.r_brow, CLASS.l_eye, CLASS.r_eye, CLASS.mouth, CLASS.u_lip, CLASS.l_lip], p.featherPx);
    const counts = new Array<number>(CELEBAMASK_CLASSES.length).fill(0);
    for (const l of parse.small) counts[l]!++;
    const preview = copyBytes(image.data);
    for (let i = 0; i < parse.labels.length; i++) {
      const l = parse.labels[i]!;
      if (l === 0) continue;
      const c = PALETTE[l]!;
      for (let j = 0; j < 3; j++) preview[3 * i + j] = Math.round(preview[3 * i + j]! * 0.45 + c[j]! * 0.55);
    }
    const fractions = Object.fromEntries(CELEBAMASK_CLASSES.map((c, i) => [c, Math.round((counts[i]! / parse.small.length) * 10000) / 10000]));
    return [
      jsonFile('parsing.json', { width: image.width, height: image.height, face: face.box, crop: parse.crop, classes: CELEBAMASK_CLASSES, fractions }),
      { name: 'labels.png', contentType: 'image/png', data: await encodePng(parse.labels, image.width, image.height, 1) },
      { name: 'hair_mask.png', contentType: 'image/png', data: await encodePng(hair, image.width, image.height, 1) },
      { name: 'face_mask.png', contentType: 'image/png', data: await encodePng(skin, image.width, image.height, 1) },
      { name: 'preview.jpg', contentType: 'image/jpeg', data: await encodeJpeg({ data: preview, width: image.width, height: image.height }, 85) },
    ];
  });
  return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [`face: ${JSON.stringify(face.box)}`, `provider: ${parser.provider}`] };
});
