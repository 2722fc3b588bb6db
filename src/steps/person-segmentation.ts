// Step: person segmentation (MediaPipe Selfie or Google Meet model, imported from TF.js).
//   input  "input_1"  float32 [1, H, W, 3] NHWC, RGB in [0, 1], the whole photo resized (aspect not kept)
//   output selfie: [1, H, W, 1] person probability (sigmoid); meet: [1, H, W, 2] logits
//          (background, person), softmaxed here
// -> person probability 0..255 at full resolution (bilinear, feathered).
import { placeMask, resizeRgb, scaledFloats, type RgbImage } from '../imaging/image.ts';
import type { ModelSession } from '../models/onnx.ts';
import { MODEL_STAGES, type StageTimer, type StepStages } from '../domain/stage-timer.ts';

/**
 * The segmenter on the whole photo: person probability 0..255 at full resolution (bilinear,
 * feathered by `feather` px). `output`: 'softmax2' for two-logit models (Meet), else a sigmoid map.
 */
export async function segmentPerson(
  session: ModelSession,
  image: RgbImage,
  W: number,
  H: number,
  t: StageTimer,
  { output = 'sigmoid', feather = 1, stages = MODEL_STAGES }: { output?: string; feather?: number; stages?: StepStages } = {},
): Promise<Uint8Array> {
  const tensor = await t.time(stages[0], async () => scaledFloats(await resizeRgb(image, W, H), 255));
  const out = await t.infer(stages[1], () => session.run({ [session.inputNames[0]!]: { data: tensor, dims: [1, H, W, 3] } }));
  return t.time(stages[2], () => {
    const y = out[session.outputNames[0]!]!.data;
    const small = new Uint8Array(W * H);
    for (let i = 0; i < W * H; i++) {
      // Two logits (background, person): the softmax's person share.
      const p = output === 'softmax2' ? 1 / (1 + Math.exp(y[2 * i]! - y[2 * i + 1]!)) : y[i]!;
      small[i] = Math.round(Math.min(1, Math.max(0, p)) * 255);
    }
    return placeMask(small, W, H, image.width, image.height, feather, { width: image.width, height: image.height, left: 0, top: 0 });
  });
}

