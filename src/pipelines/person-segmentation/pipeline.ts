// Person segmentation (MediaPipe Selfie or Google Meet model, imported from TF.js).
//   input  "input_1"  float32 [1, H, W, 3] NHWC, RGB in [0, 1], the whole photo resized (aspect not kept)
//   output selfie: [1, H, W, 1] person probability (sigmoid); meet: [1, H, W, 2] logits
//          (background, person), softmaxed here
// The mask is scaled back to full resolution (bilinear) and feathered. Outputs: mask.png (8-bit
// soft mask), cutout.png (RGBA: the person on transparent), preview.jpg, segmentation.json (bbox null
// when no pixel is half person: an empty photo is a result, not an error).
import { decodeImage, encodeJpeg, encodePng, tint } from '../../imaging/image.ts';
import { numberParam, stringParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { segmentPerson } from '../../steps/person-segmentation.ts';
import { jsonFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { personSegmentationSpec } from './spec.ts';

export const personSegmentation = definePipeline(personSegmentationSpec, async (ctx, _input, files) => {
    const W = numberParam(ctx.params, 'width', 'person-segmentation');
  const H = numberParam(ctx.params, 'height', 'person-segmentation');
  const kind = stringParam(ctx.params, 'output', 'person-segmentation');
  const feather = numberParam(ctx.params, 'feather_px', 'person-segmentation');
  const t = stageTimer(ctx.signal);
  const session = await ctx.session('segmenter');
  const image = await t.time('decode', () => decodeImage(files.image[0]!, { maxPixels: ctx.maxPixels }));
  const full = await segmentPerson(session, image, W, H, t, { output: kind, feather });
  const { mask, fraction, bbox } = await t.time('postprocess', () => {
    let sum = 0;
    let x0 = image.width, y0 = image.height, x1 = -1, y1 = -1;
    for (let yy = 0; yy < image.height; yy++) {
      for (let xx = 0; xx < image.width; xx++) {
        const v = full[yy * image.width + xx]!;
        sum += v;
        if (v >= 128) {
          if (xx < x0) x0 = xx;
          if (xx > x1) x1 = xx;
          if (yy < y0) y0 = yy;
          if (yy > y1) y1 = yy;
        }
      }
    }
    const fraction = sum / 255 / full.length;
    return { mask: full, fraction, bbox: x1 < 0 ? null : { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 } };
  });
  const outFiles = await t.time('render', async () => {
    const rgba = new Uint8Array(image.width * image.height * 4);
    for (let i = 0; i < mask.length; i++) {
      rgba[4 * i] = image.data[3 * i]!;
      rgba[4 * i + 1] = image.data[3 * i + 1]!;
      rgba[4 * i + 2] = image.data[3 * i + 2]!;
      rgba[4 * i + 3] = mask[i]!;
    }
    return [
      jsonFile('segmentation.json', { width: image.width, height: image.height, person_fraction: Math.round(fraction * 10000) / 10000, bbox }),
      { name: 'mask.png', contentType: 'image/png', data: await encodePng(mask, image.width, image.height, 1) },
      { name: 'cutout.png', contentType: 'image/png', data: await encodePng(rgba, image.width, image.height, 4) },
      { name: 'preview.jpg', contentType: 'image/jpeg', data: await encodeJpeg(tint(image, mask, [0, 200, 255], 0.55), 85) },
    ];
  });
  return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [`person fraction: ${fraction.toFixed(3)}`, `provider: ${session.provider}`] };
});
