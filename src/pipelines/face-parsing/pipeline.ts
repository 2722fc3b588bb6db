// Face parsing with BiSeNetV2 (CelebAMask-HQ, 19 classes; imported from TF.js).
//   detector: BlazeFace (face-detection pipeline) finds the faces; the largest one is parsed
//   input  "input_tensor"  float32 [1, 512, 512, 3] NHWC, RGB in [-1, 1]: a square crop around the
//          face (crop_scale x the face box, shifted up for the hair), edges repeated past the photo
//   output "final_output"  int64 [512, 512] class per pixel
// Back at full resolution: labels.png (class ids, nearest), hair_mask.png and face_mask.png (soft,
// bilinear + feather), preview.jpg (classes tinted), parsing.json (class fractions, face, crop).
import { AppError } from '../../errors/codes.ts';
import { cropSquare, decodeImage, encodeJpeg, encodePng, placeMask, type RgbImage } from '../../imaging/image.ts';
import { detectFaces } from '../face-detection/pipeline.ts';
import type { Face } from '../face-detection/pipeline.ts';
import { ImageOnlyInput } from '../inputs.ts';
import { jsonFile, numberParam } from '../params.ts';
import { stageTimer, type PipelineRunner, type StageTimer } from '../types.ts';
import type { ModelSession } from '../../models/onnx.ts';

export const CELEBAMASK_CLASSES = [
  'background', 'skin', 'l_brow', 'r_brow', 'l_eye', 'r_eye', 'eye_g', 'l_ear', 'r_ear', 'ear_r',
  'nose', 'mouth', 'u_lip', 'l_lip', 'neck', 'neck_l', 'cloth', 'hair', 'hat',
] as const;
export const CLASS = Object.fromEntries(CELEBAMASK_CLASSES.map((c, i) => [c, i])) as Record<(typeof CELEBAMASK_CLASSES)[number], number>;

const PALETTE: Array<[number, number, number]> = [
  [0, 0, 0], [255, 204, 153], [102, 51, 0], [102, 51, 0], [0, 153, 255], [0, 153, 255], [204, 204, 0], [255, 102, 102], [255, 102, 102], [255, 255, 0],
  [255, 153, 51], [204, 0, 102], [255, 0, 102], [255, 0, 153], [153, 204, 0], [102, 153, 0], [0, 102, 204], [153, 0, 204], [255, 0, 0],
];

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
  featherPx: number;
}

export function readParsingParams(p: Readonly<Record<string, unknown>>): FaceParsingParams {
  return { parserSize: numberParam(p, 'parser_size', 'face-parsing'), cropScale: numberParam(p, 'crop_scale', 'face-parsing'), featherPx: numberParam(p, 'feather_px', 'face-parsing') };
}

/** Crop geometry around a face: square, crop_scale x the face size, centred a little above it for the hair. */
export function cropAround(face: Face, cropScale: number): { x: number; y: number; size: number } {
  const side = cropScale * Math.max(face.box.width, face.box.height);
  const cx = face.box.x + face.box.width / 2;
  const cy = face.box.y + face.box.height / 2 - 0.12 * side;
  return { x: cx - side / 2, y: cy - side / 2, size: side };
}

/** Runs BiSeNet on the crop around `face` and maps the labels back to full resolution. */
export async function parseFace(session: ModelSession, image: RgbImage, face: Face, p: FaceParsingParams, t: StageTimer): Promise<FaceParse> {
  const S = p.parserSize;
  const crop = cropAround(face, p.cropScale);
  const tensor = await t.time('preprocess', async () => Float32Array.from(await cropSquare(image, crop.x, crop.y, crop.size, S), (v) => v / 127.5 - 1));
  const out = await t.infer('inference', () => session.runAny({ [session.inputNames[0]!]: { data: tensor, dims: [1, S, S, 3] } }));
  return t.time('postprocess', () => {
    const raw = out[session.outputNames[0]!]!.data;
    const small = new Uint8Array(S * S);
    for (let i = 0; i < small.length; i++) small[i] = Number(raw[i]);
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

/** The largest detected face, or NO_FACE_FOUND. */
export function largestFace(faces: Face[], what = 'the image'): Face {
  const face = [...faces].sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0];
  if (!face) throw new AppError('NO_FACE_FOUND', `no face found in ${what}`);
  return face;
}

export const faceParsing: PipelineRunner = {
  async run(ctx, rawInput, files) {
    ImageOnlyInput.parse(rawInput);
    const p = readParsingParams(ctx.params);
    const det = {
      input_size: numberParam(ctx.params, 'detector_size', 'face-parsing'),
      min_score: numberParam(ctx.params, 'min_score', 'face-parsing'),
      iou_threshold: numberParam(ctx.params, 'iou_threshold', 'face-parsing'),
      max_faces: numberParam(ctx.params, 'max_faces', 'face-parsing'),
    };
    const t = stageTimer();
    const [detector, parser] = await Promise.all([ctx.session('detector'), ctx.session('parser')]);
    const image = await t.time('decode', () => decodeImage(files.image!, { maxPixels: ctx.maxPixels }));
    const face = largestFace(await detectFaces(detector, image, det, det.min_score, t));
    const parse = await parseFace(parser, image, face, p, t);
    const outFiles = await t.time('render', async () => {
      const hair = await softClassMask(parse, image, [CLASS.hair], p.featherPx);
      const skin = await softClassMask(parse, image, [CLASS.skin, CLASS.nose, CLASS.l_brow, CLASS.r_brow, CLASS.l_eye, CLASS.r_eye, CLASS.mouth, CLASS.u_lip, CLASS.l_lip], p.featherPx);
      const counts = new Array<number>(CELEBAMASK_CLASSES.length).fill(0);
      for (const l of parse.small) counts[l]!++;
      const preview = Uint8Array.from(image.data);
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
  },
};
