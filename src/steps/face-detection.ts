// Step: BlazeFace face detection (the 256x256 back-camera model).
//   input  float32 [1, S, S, 3] NHWC, RGB in [-1, 1]: the photo letterboxed to S x S (S = input_size)
//   output two score tensors [1, n, 1] and two regression tensors [1, n, 16] (see blazeface.ts)
// -> faces (box, score, 6 keypoints) in original pixels, best score first.
import { AppError } from '../errors/codes.ts';
import { letterboxToTensor, type Letterbox, type RgbImage } from '../imaging/image.ts';
import { describeFeeds, type FloatTensor, type ModelSession } from '../models/onnx.ts';
import { numberParam } from '../models/params.ts';
import type { StageTimer } from '../domain/stage-timer.ts';
import { BLAZEFACE_BACK_LAYERS, KEYPOINT_NAMES, decodeLayer, makeAnchors, weightedNms, type KeypointName, type RawDetection } from './blazeface.ts';

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
  /** The letterbox's resampling (letterboxToTensor): sharp by default, JS for the try-on. */
  resample?: 'sharp' | 'js';
}

const ANCHORS = BLAZEFACE_BACK_LAYERS.map(makeAnchors);
const round2 = (v: number) => Math.round(v * 100) / 100;

/** The detector's settings from a version's params: `input_size`, `min_score`, `iou_threshold`, `max_faces`. */
export function readDetectorParams(params: Readonly<Record<string, unknown>>): FaceDetectionParams {
  const num = (k: string) => numberParam(params, k, 'face detection');
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
  const { tensor, letterbox } = await t.time('preprocess', () => letterboxToTensor(image, params.input_size, [-1, 1], params.resample));
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

