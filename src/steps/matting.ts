// Step: person matting with Robust Video Matting (MobileNetV3, imported from TF.js) on one image.
//   input  "src"          float32 [1, S, S, 3] NHWC, RGB in [0, 1], the photo letterboxed (S = 1024)
//          (downsample_ratio and the recurrent states r1i..r4i are fixed at import: the ratio, and
//          zeros, i.e. the first frame of a video)
//   output "Identity_1"   float32 [1, S, S, 1] alpha (pha) in [0, 1]; "Identity" [1, S, S, 3]
//          foreground colour (fgr, unused); "Identity_2".."Identity_5" next recurrent states (unused)
// -> soft alpha 0..255 at full resolution (the letterbox cut off, bilinear).
import { letterboxToTensor, placeMask, type RgbImage } from '../imaging/image.ts';
import type { ModelSession } from '../models/onnx.ts';
import { MODEL_STAGES, type StageTimer, type StepStages } from '../domain/stage-timer.ts';

export async function mattePerson(session: ModelSession, image: RgbImage, S: number, t: StageTimer, stages: StepStages = MODEL_STAGES): Promise<Uint8Array> {
  const { tensor, letterbox } = await t.time(stages[0], () => letterboxToTensor(image, S, [0, 1]));
  const out = await t.infer(stages[1], () => session.run({ [session.inputNames[0]!]: { data: tensor, dims: [1, S, S, 3] } }));
  return t.time(stages[2], () => {
    const pha = out[session.outputNames.find((n) => n.startsWith('Identity_1:'))!]!.data;
    const w = Math.max(1, Math.round(image.width * letterbox.scale));
    const h = Math.max(1, Math.round(image.height * letterbox.scale));
    const small = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) small[y * w + x] = Math.round(Math.min(1, Math.max(0, pha[(y + letterbox.padY) * S + x + letterbox.padX]!)) * 255);
    }
    return placeMask(small, w, h, image.width, image.height, 0, { width: image.width, height: image.height, left: 0, top: 0 });
  });
}
