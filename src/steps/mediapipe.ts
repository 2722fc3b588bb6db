// MediaPipe face-mesh geometry, the way its TF.js solution computes it (so the ONNX pipeline gives
// the same landmarks): SSD anchors, detection decoding, hard NMS, detection -> rotated rect, rect
// scaling, the crop's affine map, and the landmark projection back to the image.
import type { Affine } from '../imaging/image.ts';
import { boxIou, type Box } from './geometry.ts';

export interface Anchor {
  x: number;
  y: number;
}

export interface SsdAnchorConfig {
  inputSize: number;
  strides: number[];
  /** Anchors per cell for one stride layer: aspect ratios (1) plus the interpolated one. */
  anchorsPerLayer: number;
}

/** Short-range face detector (128x128): strides 8, 16, 16, 16 -> 16x16x2 + 8x8x6 = 896 anchors. */
export const SHORT_RANGE_ANCHORS: SsdAnchorConfig = { inputSize: 128, strides: [8, 16, 16, 16], anchorsPerLayer: 2 };

/** Fixed-size SSD anchor centres; consecutive layers of one stride share a grid. */
export function ssdAnchors(cfg: SsdAnchorConfig): Anchor[] {
  const anchors: Anchor[] = [];
  let layer = 0;
  while (layer < cfg.strides.length) {
    let last = layer;
    while (last < cfg.strides.length && cfg.strides[last] === cfg.strides[layer]) last++;
    const perCell = (last - layer) * cfg.anchorsPerLayer;
    const cells = Math.ceil(cfg.inputSize / cfg.strides[layer]!);
    for (let y = 0; y < cells; y++) for (let x = 0; x < cells; x++) for (let a = 0; a < perCell; a++) anchors.push({ x: (x + 0.5) / cells, y: (y + 0.5) / cells });
    layer = last;
  }
  return anchors;
}

export interface Detection {
  /** Box and keypoints normalized to the detector input. */
  xMin: number;
  yMin: number;
  width: number;
  height: number;
  keypoints: Array<{ x: number; y: number }>;
  score: number;
}

/**
 * Decodes [numAnchors x (5 + 2 * numKeypoints)] rows: score logit, then x, y, w, h and the keypoints
 * (x, y), in input pixels relative to the anchor (MediaPipe's reverse_output_order layout). BlazeFace
 * has 6 keypoints (17 per row), the BlazePose detector 4 (13 per row).
 */
export function decodeDetections(raw: ArrayLike<number>, anchors: Anchor[], scale: number, minScore: number, numKeypoints = 6): Detection[] {
  const out: Detection[] = [];
  const stride = 5 + 2 * numKeypoints;
  for (let i = 0; i < anchors.length; i++) {
    const r = i * stride;
    const logit = Math.min(100, Math.max(-100, raw[r]!));
    const score = 1 / (1 + Math.exp(-logit));
    if (score < minScore) continue;
    const a = anchors[i]!;
    const cx = raw[r + 1]! / scale + a.x;
    const cy = raw[r + 2]! / scale + a.y;
    const w = raw[r + 3]! / scale;
    const h = raw[r + 4]! / scale;
    if (w < 0 || h < 0) continue;
    const keypoints = [];
    for (let k = 0; k < numKeypoints; k++) keypoints.push({ x: raw[r + 5 + 2 * k]! / scale + a.x, y: raw[r + 6 + 2 * k]! / scale + a.y });
    out.push({ xMin: cx - w / 2, yMin: cy - h / 2, width: w, height: h, keypoints, score });
  }
  return out;
}

const boxOf = (d: Detection): Box => ({ x: d.xMin, y: d.yMin, width: d.width, height: d.height });

/** Greedy hard NMS (tf.image.nonMaxSuppression): best first, drop what overlaps a kept one above the threshold. */
export function hardNms(dets: Detection[], iouThreshold: number, max: number): Detection[] {
  const sorted = [...dets].sort((a, b) => b.score - a.score);
  const kept: Detection[] = [];
  for (const d of sorted) {
    if (kept.length >= max) break;
    if (kept.every((k) => boxIou(boxOf(k), boxOf(d)) <= iouThreshold)) kept.push(d);
  }
  return kept;
}

/** Square region of the image the detector saw: the photo padded to its long side, centred. */
export interface Roi {
  xCenter: number;
  yCenter: number;
  width: number;
  height: number;
  rotation: number;
}

export function letterboxRoi(imageW: number, imageH: number): Roi {
  const side = Math.max(imageW, imageH);
  return { xCenter: imageW / 2, yCenter: imageH / 2, width: side, height: side, rotation: 0 };
}

/**
 * Affine map (output pixel -> input pixel) that samples a rotated rectangle `roi` (pixels) into an
 * outW x outH tensor, as tf.image.transform applies it in MediaPipe's TF.js pre-processing.
 */
export function roiSampler(roi: Roi, outW: number, outH: number): Affine {
  const c = Math.cos(roi.rotation);
  const s = Math.sin(roi.rotation);
  const a = roi.width;
  const b = roi.height;
  return [
    (a * c) / outW,
    (-b * s) / outH,
    -0.5 * a * c + 0.5 * b * s + roi.xCenter,
    (a * s) / outW,
    (b * c) / outH,
    -0.5 * b * c - 0.5 * a * s + roi.yCenter,
  ];
}

/** Detection (normalized to the detector input) -> pixels, through the un-rotated letterbox roi. */
export function projectDetection(d: Detection, roi: Roi): Detection {
  const px = (u: number) => roi.xCenter + roi.width * (u - 0.5);
  const py = (v: number) => roi.yCenter + roi.height * (v - 0.5);
  return {
    xMin: px(d.xMin),
    yMin: py(d.yMin),
    width: d.width * roi.width,
    height: d.height * roi.height,
    keypoints: d.keypoints.map((k) => ({ x: px(k.x), y: py(k.y) })),
    score: d.score,
  };
}

function normalizeRadians(angle: number): number {
  return angle - 2 * Math.PI * Math.floor((angle + Math.PI) / (2 * Math.PI));
}

/**
 * The face's crop for the landmark model (pixels): the detection box, turned so the eye line
 * (keypoints 0 -> 1) is level, squared on its long side and scaled by `scale`.
 */
export function faceRect(d: Detection, scale: number): Roi {
  const [e0, e1] = d.keypoints as [{ x: number; y: number }, { x: number; y: number }];
  const rotation = normalizeRadians(-Math.atan2(-(e1.y - e0.y), e1.x - e0.x));
  const side = Math.max(d.width, d.height) * scale;
  return { xCenter: d.xMin + d.width / 2, yCenter: d.yMin + d.height / 2, width: side, height: side, rotation };
}

/** Landmarks normalized to the crop ([0, 1] x/y, z in crop widths) -> image pixels. */
export function projectLandmarks(lm: Float32Array, count: number, rect: Roi): Array<[number, number, number]> {
  const c = Math.cos(rect.rotation);
  const s = Math.sin(rect.rotation);
  const out: Array<[number, number, number]> = [];
  for (let i = 0; i < count; i++) {
    const x = lm[3 * i]! - 0.5;
    const y = lm[3 * i + 1]! - 0.5;
    out.push([(c * x - s * y) * rect.width + rect.xCenter, (s * x + c * y) * rect.height + rect.yCenter, lm[3 * i + 2]! * rect.width]);
  }
  return out;
}
