// Step: BiSeNetV2 face parsing (CelebAMask-HQ, 19 classes; imported from TF.js).
//   input  "input_tensor"  float32 [1, S, S, 3] NHWC, RGB in [-1, 1]: a square crop around the face
//          (crop_scale x the face box, shifted up for the hair), edges repeated past the photo
//   output "final_output"  int64 [S, S] class per pixel
// -> labels at full resolution (nearest) and soft class masks (bilinear + feather).
import { cropSquare, placeMask, scaledFloats, type RgbImage } from '../imaging/image.ts';
import { resampleSquare } from '../imaging/resample.ts';
import type { AnyTensor, ModelSession } from '../models/onnx.ts';
import { numberParam } from '../models/params.ts';
import type { StageTimer } from '../domain/stage-timer.ts';
import type { Face } from './face-detection.ts';

export const CELEBAMASK_CLASSES = [
  'background', 'skin', 'l_brow', 'r_brow', 'l_eye', 'r_eye', 'eye_g', 'l_ear', 'r_ear', 'ear_r',
  'nose', 'mouth', 'u_lip', 'l_lip', 'neck', 'neck_l', 'cloth', 'hair', 'hat',
] as const;
export const CLASS = Object.fromEntries(CELEBAMASK_CLASSES.map((c, i) => [c, i])) as Record<(typeof CELEBAMASK_CLASSES)[number], number>;

/** The face region's classes: skin, brows, eyes, glasses, ears, earring, nose, mouth, lips (1-13). */
export const FACE_CLASSES: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];

export interface FaceParse {
  face: Face;
  /** The square crop the parser saw, in original pixels (may reach past the photo). */
  crop: { x: number; y: number; size: number };
  /** Class id per pixel at full resolution (nearest), 0 outside the crop. */
  labels: Uint8Array;
  size: number;
  /** Parser output at its own resolution. */
  small: Uint8Array;
}

export interface FaceParsingParams {
  parserSize: number;
  cropScale: number;
  /** How far above the face the crop's centre sits, as a fraction of its side (default 0.12). */
  cropShift?: number;
  featherPx: number;
  /**
   * The crop's resampling: sharp (cropSquare, the default) or JS (area average)
   * (imaging/resample.ts, which the try-on uses: no round trip through libvips; values within a
   * few levels of sharp's).
   */
  resample?: 'sharp' | 'js';
}

/** `parser_size`, `crop_scale`, `feather_px` and the optional `crop_shift` from a version's params. */
export function readParsingParams(p: Readonly<Record<string, unknown>>): FaceParsingParams {
  return {
    parserSize: numberParam(p, 'parser_size', 'face parsing'),
    cropScale: numberParam(p, 'crop_scale', 'face parsing'),
    ...(p.crop_shift === undefined ? {} : { cropShift: numberParam(p, 'crop_shift', 'face parsing') }),
    featherPx: numberParam(p, 'feather_px', 'face parsing'),
  };
}

/** Crop geometry around a face: square, crop_scale x the face size, centred a little above it for the hair. */
export function cropAround(face: Face, cropScale: number, cropShift = 0.12): { x: number; y: number; size: number } {
  const side = cropScale * Math.max(face.box.width, face.box.height);
  const cx = face.box.x + face.box.width / 2;
  const cy = face.box.y + face.box.height / 2 - cropShift * side;
  return { x: cx - side / 2, y: cy - side / 2, size: side };
}

/** Runs BiSeNet on the crop around `face` and maps the labels back to full resolution. */
export async function parseFace(session: ModelSession, image: RgbImage, face: Face, p: FaceParsingParams, t: StageTimer): Promise<FaceParse> {
  return (await parseFaceSoon(session, image, face, p, t)).parse;
}

/**
 * parseFace in two steps: resolves once BiSeNet's run has started, with its labels to come. On a
 * session in a model thread (models/onnx.ts ModelThread) the caller's JavaScript runs meanwhile.
 */
export async function parseFaceSoon(session: ModelSession, image: RgbImage, face: Face, p: FaceParsingParams, t: StageTimer): Promise<{ parse: Promise<FaceParse> }> {
  const S = p.parserSize;
  const crop = cropAround(face, p.cropScale, p.cropShift);
  const tensor = await t.time('preprocess', async () =>
    scaledFloats(p.resample === 'js' ? resampleSquare(image, crop.x, crop.y, crop.size, S) : await cropSquare(image, crop.x, crop.y, crop.size, S), 127.5, -1),
  );
  const run = t.infer('inference', () => session.runAny({ [session.inputNames[0]!]: { data: tensor, dims: [1, S, S, 3] } }));
  const parse = run.then((out) => labelsOf(session, out, image, face, crop, S, t));
  // Awaited by the caller later; a failure before then must not count as unhandled.
  parse.catch(() => {});
  return { parse };
}

function labelsOf(session: ModelSession, out: Record<string, AnyTensor>, image: RgbImage, face: Face, crop: FaceParse['crop'], S: number, t: StageTimer): Promise<FaceParse> {
  return t.time('postprocess', () => {
    const raw = out[session.outputNames[0]!]!.data;
    const small = new Uint8Array(S * S);
    if (raw instanceof BigInt64Array) {
      // Class ids (0..18) are the low 32 bits of each little-endian int64: read them as int32
      // pairs rather than converting 262k BigInts one by one (several times slower).
      const words = new Int32Array(raw.buffer, raw.byteOffset, 2 * S * S);
      for (let i = 0; i < small.length; i++) small[i] = words[2 * i]!;
    } else {
      for (let i = 0; i < small.length; i++) small[i] = Number(raw[i]);
    }
    const labels = new Uint8Array(image.width * image.height);
    const k = S / crop.size;
    for (let y = Math.max(0, Math.floor(crop.y)); y < Math.min(image.height, Math.ceil(crop.y + crop.size)); y++) {
      const sy = Math.floor((y + 0.5 - crop.y) * k);
      if (sy < 0 || sy >= S) continue;
      for (let x = Math.max(0, Math.floor(crop.x)); x < Math.min(image.width, Math.ceil(crop.x + crop.size)); x++) {
        const sx = Math.floor((x + 0.5 - crop.x) * k);
        if (sx >= 0 && sx < S) labels[y * image.width + x] = small[sy * S + sx]!;
      }
    }
    return { face, crop, labels, size: S, small };
  });
}

/** A soft full-resolution mask of some classes (bilinear from the parser's resolution, feathered). */
export async function softClassMask(parse: FaceParse, image: RgbImage, classes: number[], featherPx: number): Promise<Uint8Array> {
  const bin = new Uint8Array(parse.small.length);
  for (let i = 0; i < bin.length; i++) bin[i] = classes.includes(parse.small[i]!) ? 255 : 0;
  return placeMask(bin, parse.size, parse.size, parse.crop.size, parse.crop.size, featherPx, {
    width: image.width,
    height: image.height,
    left: parse.crop.x,
    top: parse.crop.y,
  });
}

