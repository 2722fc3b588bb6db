// Person matting with Robust Video Matting (imported from TF.js), one image.
//   input  "src"         float32 [1, 1024, 1024, 3] NHWC, RGB in [0, 1], the photo letterboxed
//                        (downsample ratio and zero recurrent states fixed at import)
//   output "Identity_1"  float32 [1, 1024, 1024, 1] alpha in [0, 1]
// Outputs: alpha.png (8-bit soft alpha at full resolution), cutout.png (RGBA: the person on
// transparent), preview.jpg (the person over a checkerboard), matting.json (foreground fraction).
import { decodeImage, encodeJpeg, encodePng } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { mattePerson } from '../../steps/matting.ts';
import { jsonFile, maskFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { personMattingSpec } from './spec.ts';

export const personMatting = definePipeline(personMattingSpec, async (ctx, _input, files) => {
  const S = numberParam(ctx.params, 'input_size', 'person-matting');
  const t = stageTimer(ctx.signal);
  const session = await ctx.session('matting');
  const image = await t.time('decode', () => decodeImage(files.image[0]!, { maxPixels: ctx.maxPixels }));
  const alpha = await mattePerson(session, image, S, t);
  const outFiles = await t.time('render', async () => {
    const n = image.width * image.height;
    const rgba = new Uint8Array(n * 4);
    const preview = new Uint8Array(n * 3);
    const cell = Math.max(8, Math.round(Math.min(image.width, image.height) / 40));
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const a = alpha[i]!;
      sum += a;
      const x = i % image.width;
      const y = (i - x) / image.width;
      const bg = ((Math.floor(x / cell) + Math.floor(y / cell)) & 1) === 0 ? 200 : 120;
      for (let c = 0; c < 3; c++) {
        const v = image.data[3 * i + c]!;
        rgba[4 * i + c] = v;
        preview[3 * i + c] = Math.round((v * a + bg * (255 - a)) / 255);
      }
      rgba[4 * i + 3] = a;
    }
    const fraction = sum / 255 / n;
    return [
      jsonFile('matting.json', { width: image.width, height: image.height, foreground_fraction: Math.round(fraction * 10000) / 10000 }),
      await maskFile('alpha.png', alpha, image.width, image.height),
      { name: 'cutout.png', contentType: 'image/png', data: await encodePng(rgba, image.width, image.height, 4) },
      { name: 'preview.jpg', contentType: 'image/jpeg', data: await encodeJpeg({ data: preview, width: image.width, height: image.height }, 85) },
    ];
  });
  return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [`provider: ${session.provider}`] };
});
