// Face detection: decode -> letterbox 256x256 in [-1, 1] -> BlazeFace -> anchor decode + weighted
// NMS -> boxes and keypoints in original pixels. Outputs faces.json and preview.jpg.
import { AppError } from '../../errors/codes.ts';
import { decodeImage, letterboxToTensor, renderOverlayJpeg, type Letterbox, type RgbImage } from '../../imaging/image.ts';
import { describeFeeds, type FloatTensor, type ModelSession } from '../../models/onnx.ts';
import { stageTimer, type PipelineContext, type PipelineResult, type PipelineRunner, type StageTimer } from '../types.ts';
import { BLAZEFACE_BACK_LAYERS, KEYPOINT_NAMES, decodeLayer, makeAnchors, weightedNms, type KeypointName, type RawDetection } from './blazeface.ts';
import { FaceDetectionInput } from './input.ts';

export interface Point {
  x: number;
  y: number;
}

export interface Face {
  box: { x: number; y: number; width: number; height: number };
  score: number;
  keypoints: Record<KeypointName, Point>;
}

export interface FaceDetectionParams {
  input_size: number;
  min_score: number;
  iou_threshold: number;
  max_faces: number;
}

const ANCHORS = BLAZEFACE_BACK_LAYERS.map(makeAnchors);
const round2 = (v: number) => Math.round(v * 100) / 100;

export function readParams(params: Readonly<Record<string, unknown>>): FaceDetectionParams {
  const num = (k: string) => {
    const v = params[k];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new AppError('MODEL_UNAVAILABLE', `face-detection: manifest param ${k} must be a number`);
    return v;
  };
  return { input_size: num('input_size'), min_score: num('min_score'), iou_threshold: num('iou_threshold'), max_faces: num('max_faces') };
}

/** Pairs the graph's outputs with the anchor layers by shape: [1, n, 1] scores, [1, n, 16] boxes. */
function splitOutputs(out: Record<string, FloatTensor>): Array<{ scores: Float32Array; boxes: Float32Array }> {
  return ANCHORS.map((anchors) => {
    const n = anchors.length / 2;
    const tensors = Object.values(out);
    const scores = tensors.find((t) => t.dims.length === 3 && t.dims[1] === n && t.dims[2] === 1);
    const boxes = tensors.find((t) => t.dims.length === 3 && t.dims[1] === n && t.dims[2] === 16);
    if (!scores || !boxes) throw new AppError('INFERENCE_FAILED', `blazeface: no outputs for ${n} anchors`);
    return { scores: scores.data, boxes: boxes.data };
  });
}

/** Letterbox-normalized detection -> original image pixels, clipped to the image. */
export function toImageSpace(d: RawDetection, lb: Letterbox, width: number, height: number): Face {
  const px = (v: number) => (v * lb.size - lb.padX) / lb.scale;
  const py = (v: number) => (v * lb.size - lb.padY) / lb.scale;
  const x0 = Math.max(0, px(d.cx - d.w / 2));
  const y0 = Math.max(0, py(d.cy - d.h / 2));
  const x1 = Math.min(width, px(d.cx + d.w / 2));
  const y1 = Math.min(height, py(d.cy + d.h / 2));
  const keypoints = {} as Record<KeypointName, Point>;
  KEYPOINT_NAMES.forEach((name, k) => {
    keypoints[name] = { x: round2(px(d.keypoints[2 * k]!)), y: round2(py(d.keypoints[2 * k + 1]!)) };
  });
  return {
    box: { x: round2(x0), y: round2(y0), width: round2(x1 - x0), height: round2(y1 - y0) },
    score: Math.round(d.score * 10000) / 10000,
    keypoints,
  };
}

export interface DetectionResult {
  faces: Face[];
  width: number;
  height: number;
}

/**
 * BlazeFace on a decoded image: letterbox, run, decode anchors, weighted NMS, map back to pixels.
 * Faces come best score first. Timed into `t` as preprocess / inference / postprocess.
 */
export async function detectFaces(session: ModelSession, image: RgbImage, params: FaceDetectionParams, minScore: number, t: StageTimer): Promise<Face[]> {
  const { tensor, letterbox } = await t.time('preprocess', () => letterboxToTensor(image, params.input_size, [-1, 1]));
  const feeds = { [session.inputNames[0]!]: { data: tensor, dims: [1, params.input_size, params.input_size, 3] } };
  const out = await t.infer('inference', async () => {
    try {
      return await session.run(feeds);
    } catch (e) {
      throw new AppError('INFERENCE_FAILED', `blazeface run failed (${describeFeeds(feeds)}): ${(e as Error).message}`);
    }
  });
  return t.time('postprocess', () => {
    const raw: RawDetection[] = [];
    splitOutputs(out).forEach(({ scores, boxes }, i) => decodeLayer(ANCHORS[i]!, scores, boxes, params.input_size, minScore, raw));
    return weightedNms(raw, params.iou_threshold, params.max_faces)
      .map((d) => toImageSpace(d, letterbox, image.width, image.height))
      .filter((f) => f.box.width > 0 && f.box.height > 0);
  });
}

export const faceDetection: PipelineRunner = {
  async run(ctx: PipelineContext, rawInput, files): Promise<PipelineResult> {
    const input = FaceDetectionInput.parse(rawInput);
    const params = readParams(ctx.params);
    const bytes = files.image;
    if (!bytes) throw new AppError('INPUT_INVALID', 'input.image: file missing');
    const t = stageTimer();
    const session = await ctx.session('detector');
    const image = await t.time('decode', () => decodeImage(bytes, { maxPixels: ctx.maxPixels }));
    const faces = await detectFaces(session, image, params, input.min_score ?? params.min_score, t);
    const outFiles = await t.time('render', async () => {
      const result: DetectionResult = { faces, width: image.width, height: image.height };
      const preview = await renderOverlayJpeg(image, { boxes: faces.map((f) => f.box), points: faces.flatMap((f) => Object.values(f.keypoints)) });
      return [
        { name: 'faces.json', contentType: 'application/json', data: Buffer.from(JSON.stringify(result, null, 2)) },
        { name: 'preview.jpg', contentType: 'image/jpeg', data: preview },
      ];
    });
    return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [`faces: ${faces.length}`, `provider: ${session.provider}`] };
  },
};
