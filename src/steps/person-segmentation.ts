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
export async function segmentPerson(session: ModelSession, image: RgbImage, W: number, H: number, t: StageTimer, opts: SegmentOptions = {}): Promise<Uint8Array> {
  const { small, mask } = await segmentPersonSoon(session, image, W, H, t, opts);
  await small;
  return t.time((opts.stages ?? MODEL_STAGES)[2], () => mask);
}

export interface SegmentOptions {
  output?: string;
  feather?: number;
  stages?: StepStages;
}

/**
 * segmentPerson in steps: resolves once the model's run has started (on a session in a model
 * thread, models/onnx.ts ModelThread, the caller's JavaScript goes on meanwhile), with the mask at
 * the model's size (`small`) and placed at full resolution (`mask`: a resize and a blur in sharp,
 * on a libuv thread, ~14 ms at 1 MP, which goes on in the background while the caller runs its
 * next model). The placement's time counts in no stage; the caller times its wait for `mask`.
 */
export async function segmentPersonSoon(
  session: ModelSession,
  image: RgbImage,
  W: number,
  H: number,
  t: StageTimer,
  { output = 'sigmoid', feather = 1, stages = MODEL_STAGES }: SegmentOptions = {},
): Promise<{ small: Promise<Uint8Array>; mask: Promise<Uint8Array> }> {
  const tensor = await t.time(stages[0], async () => scaledFloats(await resizeRgb(image, W, H), 255));
  const run = t.infer(stages[1], () => session.run({ [session.inputNames[0]!]: { data: tensor, dims: [1, H, W, 3] } }));
  const small = run.then((out) =>
    t.time(stages[2], () => {
      const y = out[session.outputNames[0]!]!.data;
      const probs = new Uint8Array(W * H);
      for (let i = 0; i < W * H; i++) {
        // Two logits (background, person): the softmax's person share.
        const p = output === 'softmax2' ? 1 / (1 + Math.exp(y[2 * i]! - y[2 * i + 1]!)) : y[i]!;
        probs[i] = Math.round(Math.min(1, Math.max(0, p)) * 255);
      }
      return probs;
    }),
  );
  const mask = small.then((probs) => placeMask(probs, W, H, image.width, image.height, feather, { width: image.width, height: image.height, left: 0, top: 0 }));
  // Awaited by the caller later; a failure before then must not count as unhandled.
  small.catch(() => {});
  mask.catch(() => {});
  return { small, mask };
}
