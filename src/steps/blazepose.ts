// Step: single-person body landmarks with MediaPipe BlazePose (detector + Full landmark model,
// imported from TF.js), the way MediaPipe's pose_landmark graph runs on one image.
//   detector   "input"     float32 [1, 224, 224, 3] NHWC, RGB in [-1, 1], the photo letterboxed
//              "Identity"  float32 [1, 2254, 13] per anchor: score logit, box (cx, cy, w, h) and 4
//                          keypoints (hip centre, full-body circle point, shoulder centre, upper-body
//                          circle point), in input pixels relative to the anchor
//   landmarks  "input_1"     float32 [1, 256, 256, 3] NHWC, RGB in [0, 1]: the body crop turned
//                            upright (hip centre -> circle point vertical), edges zero
//              "Identity_2"  [1, 195] 39 x (x, y, z, visibility logit, presence logit) in crop
//                            pixels (33 body landmarks, then 6 auxiliary ROI points)
//              "Identity_3"  [1, 1] pose presence; "Identity_1" [1, 256, 256, 1] person probability
//                            (both after the graph's sigmoids)
//              (the heatmap "Identity" and world landmarks "Identity_4" are not used)
// -> 33 named landmarks in image pixels, and the person mask (0..255) at full resolution.
import { sampleAffine, type RgbImage } from '../imaging/image.ts';
import type { ModelSession } from '../models/onnx.ts';
import { MODEL_STAGES, type StageTimer, type StepStages } from '../domain/stage-timer.ts';
import { decodeDetections, hardNms, letterboxRoi, projectDetection, projectLandmarks, roiSampler, ssdAnchors, type Anchor, type Detection, type Roi, type SsdAnchorConfig } from './mediapipe.ts';

/** MediaPipe's pose landmark names, in model output order. */
export const BLAZEPOSE_LANDMARKS = [
  'nose', 'left_eye_inner', 'left_eye', 'left_eye_outer', 'right_eye_inner', 'right_eye', 'right_eye_outer', 'left_ear', 'right_ear',
  'mouth_left', 'mouth_right', 'left_shoulder', 'right_shoulder', 'left_elbow', 'right_elbow', 'left_wrist', 'right_wrist',
  'left_pinky', 'right_pinky', 'left_index', 'right_index', 'left_thumb', 'right_thumb', 'left_hip', 'right_hip',
  'left_knee', 'right_knee', 'left_ankle', 'right_ankle', 'left_heel', 'right_heel', 'left_foot_index', 'right_foot_index',
] as const;
export type BodyLandmarkName = (typeof BLAZEPOSE_LANDMARKS)[number];

/** MediaPipe's POSE_CONNECTIONS (body only; the face is drawn as points). */
export const BODY_CONNECTIONS: Array<[BodyLandmarkName, BodyLandmarkName]> = [
  ['left_shoulder', 'right_shoulder'], ['left_shoulder', 'left_elbow'], ['left_elbow', 'left_wrist'], ['left_wrist', 'left_pinky'],
  ['left_wrist', 'left_index'], ['left_wrist', 'left_thumb'], ['left_pinky', 'left_index'], ['right_shoulder', 'right_elbow'],
  ['right_elbow', 'right_wrist'], ['right_wrist', 'right_pinky'], ['right_wrist', 'right_index'], ['right_wrist', 'right_thumb'],
  ['right_pinky', 'right_index'], ['left_shoulder', 'left_hip'], ['right_shoulder', 'right_hip'], ['left_hip', 'right_hip'],
  ['left_hip', 'left_knee'], ['left_knee', 'left_ankle'], ['left_ankle', 'left_heel'], ['left_heel', 'left_foot_index'],
  ['left_ankle', 'left_foot_index'], ['right_hip', 'right_knee'], ['right_knee', 'right_ankle'], ['right_ankle', 'right_heel'],
  ['right_heel', 'right_foot_index'], ['right_ankle', 'right_foot_index'],
];

/**
 * The pose detector's SSD anchors (MediaPipe pose_detection.pbtxt: 5 layers, strides 8, 16, 32,
 * 32, 32 on 224x224, fixed-size anchors, 2 per cell and layer): 28x28x2 + 14x14x2 + 7x7x6 = 2254.
 */
export const POSE_DETECTOR_ANCHORS: SsdAnchorConfig = { inputSize: 224, strides: [8, 16, 32, 32, 32], anchorsPerLayer: 2 };

export interface BodyLandmark {
  x: number;
  y: number;
  /** Depth relative to the hips, same scale as x (pixels). */
  z: number;
  /** Probability the point is visible (not occluded), sigmoid of the model's logit. */
  visibility: number;
  /** Probability the point is inside the image. */
  presence: number;
}

export interface BodyPose {
  /** The detection the crop came from (pixels). */
  detection: Detection;
  /** The rotated crop the landmark model saw (pixels, radians). */
  roi: Roi;
  /** Pose presence flag of the landmark model, 0..1. */
  presence: number;
  landmarks: Record<BodyLandmarkName, BodyLandmark>;
  /**
   * Person probability 0..255 at full resolution (the crop's mask mapped back; 0 outside it).
   * Empty when not asked for (bodyLandmarks' `mask: false`: a person whose landmarks are all
   * that is used, whose full-resolution map cost as much as the target's).
   */
  mask: Uint8Array;
  /**
   * The mask as the model gave it: probabilities on its L x L crop (`roi`), kept where asked for
   * (bodyLandmarks' `prob`) so that the mask can be drawn later (poseMask) only where it is used,
   * without running the model again.
   */
  prob?: Float32Array;
}

const sigmoid = (v: number) => 1 / (1 + Math.exp(-Math.min(100, Math.max(-100, v))));

/**
 * The landmark model's crop (pixels) from a detection, as MediaPipe's pose_detection_to_roi does:
 * centred on the hip centre (keypoint 0), side twice the distance to the full-body circle point
 * (keypoint 1), turned so that direction points up (target angle 90 degrees), scaled by `scale`.
 */
export function poseRoi(d: Detection, scale: number): Roi {
  const [c, e] = d.keypoints as [{ x: number; y: number }, { x: number; y: number }];
  const side = 2 * Math.hypot(e.x - c.x, e.y - c.y) * scale;
  const angle = Math.PI / 2 - Math.atan2(-(e.y - c.y), e.x - c.x);
  const rotation = angle - 2 * Math.PI * Math.floor((angle + Math.PI) / (2 * Math.PI));
  return { xCenter: c.x, yCenter: c.y, width: side, height: side, rotation };
}

/** The detector on the letterboxed photo: detections in pixels, best first (after hard NMS). */
export async function detectBodies(
  detector: ModelSession,
  image: RgbImage,
  D: number,
  minScore: number,
  iou: number,
  t: StageTimer,
  stages: StepStages = MODEL_STAGES,
): Promise<Detection[]> {
  const roi = letterboxRoi(image.width, image.height);
  const input = await t.time(stages[0], () => sampleAffine(image, roiSampler(roi, D, D), D, D, 'zero', [-1, 1]));
  const out = await t.infer(stages[1], () => detector.run({ [detector.inputNames[0]!]: { data: input, dims: [1, D, D, 3] } }));
  return t.time(stages[2], () => hardNms(decodeDetections(out[detector.outputNames[0]!]!.data, ANCHORS, D, minScore, 4), iou, 8).map((d) => projectDetection(d, roi)));
}

const ANCHORS = ssdAnchors(POSE_DETECTOR_ANCHORS);

/** A crop-space mask (L x L, probabilities) mapped back through the rotated roi to image pixels (bilinear). */
function maskToImage(prob: Float32Array, L: number, roi: Roi, W: number, H: number): Uint8Array {
  const out = new Uint8Array(W * H);
  const c = Math.cos(roi.rotation);
  const s = Math.sin(roi.rotation);
  // Only the crop's box is walked (a pixel outside it maps outside [-1, L] and stays 0): its
  // rotated square's half extents, grown by the half pixel the bilinear read reaches and 1 pixel.
  const a = roi.width * (0.5 + 0.5 / L), b = roi.height * (0.5 + 0.5 / L);
  const ex = Math.abs(c) * a + Math.abs(s) * b + 1, ey = Math.abs(s) * a + Math.abs(c) * b + 1;
  const left = Math.max(0, Math.floor(roi.xCenter - ex)), right = Math.min(W - 1, Math.ceil(roi.xCenter + ex));
  const top = Math.max(0, Math.floor(roi.yCenter - ey)), bottom = Math.min(H - 1, Math.ceil(roi.yCenter + ey));
  // The products of the rotation per column and per row, once (the same values as per pixel).
  const cx = new Float64Array(right - left + 1), sx = new Float64Array(right - left + 1);
  for (let x = left; x <= right; x++) {
    const dx = x + 0.5 - roi.xCenter;
    (cx[x - left] = c * dx), (sx[x - left] = -s * dx);
  }
  const w = roi.width, h = roi.height;
  for (let y = top; y <= bottom; y++) {
    const dy = y + 0.5 - roi.yCenter;
    const sy = s * dy, cy = c * dy;
    for (let x = left; x <= right; x++) {
      const u = ((cx[x - left]! + sy) / w + 0.5) * L - 0.5;
      const v = ((sx[x - left]! + cy) / h + 0.5) * L - 0.5;
      if (u < -1 || v < -1 || u > L || v > L) continue;
      const x0 = Math.floor(u);
      const y0 = Math.floor(v);
      const fx = u - x0;
      const fy = v - y0;
      // The four neighbours, 0 outside the crop (read inline: a closure per read was half the time).
      const inX0 = x0 >= 0 && x0 < L, inX1 = x0 + 1 >= 0 && x0 + 1 < L, inY0 = y0 >= 0 && y0 < L, inY1 = y0 + 1 >= 0 && y0 + 1 < L;
      const p00 = inX0 && inY0 ? prob[y0 * L + x0]! : 0, p10 = inX1 && inY0 ? prob[y0 * L + x0 + 1]! : 0;
      const p01 = inX0 && inY1 ? prob[(y0 + 1) * L + x0]! : 0, p11 = inX1 && inY1 ? prob[(y0 + 1) * L + x0 + 1]! : 0;
      const p = (1 - fy) * ((1 - fx) * p00 + fx * p10) + fy * ((1 - fx) * p01 + fx * p11);
      out[y * W + x] = Math.round(p * 255);
    }
  }
  return out;
}

/** The landmark model on one detection's rotated crop: presence, 33 landmarks and the mask, in image pixels. */
export async function bodyLandmarks(
  model: ModelSession,
  image: RgbImage,
  d: Detection,
  L: number,
  roiScale: number,
  t: StageTimer,
  stages: StepStages = MODEL_STAGES,
  { mask = true, prob = false }: { mask?: boolean; prob?: boolean } = {},
): Promise<BodyPose> {
  const roi = poseRoi(d, roiScale);
  const crop = await t.time(stages[0], () => sampleAffine(image, roiSampler(roi, L, L), L, L, 'zero', [0, 1]));
  const out = await t.infer(stages[1], () => model.run({ [model.inputNames[0]!]: { data: crop, dims: [1, L, L, 3] } }));
  return t.time(stages[2], () => {
    const named = (prefix: string) => out[model.outputNames.find((n) => n.startsWith(`${prefix}:`))!]!.data;
    const ld = named('Identity_2');
    const xyz = new Float32Array(33 * 3);
    for (let i = 0; i < 33; i++) for (let k = 0; k < 3; k++) xyz[3 * i + k] = ld[5 * i + k]! / L;
    const points = projectLandmarks(xyz, 33, roi);
    const landmarks = {} as Record<BodyLandmarkName, BodyLandmark>;
    BLAZEPOSE_LANDMARKS.forEach((name, i) => {
      const [x, y, z] = points[i]!;
      landmarks[name] = { x, y, z, visibility: sigmoid(ld[5 * i + 3]!), presence: sigmoid(ld[5 * i + 4]!) };
    });
    // The mask and the presence flag leave the graph through its own sigmoids: already 0..1.
    const probs = named('Identity_1');
    return {
      detection: d,
      roi,
      presence: named('Identity_3')[0]!,
      landmarks,
      mask: mask ? maskToImage(probs, L, roi, image.width, image.height) : new Uint8Array(0),
      ...(prob ? { prob: Float32Array.from(probs) } : {}),
    };
  });
}

/** The person mask (0..255) of a pose kept with its probabilities (`prob`), for a W x H picture in the pose's pixels. */
export function poseMask(p: BodyPose, W: number, H: number): Uint8Array {
  if (!p.prob) throw new Error('poseMask: the pose was found without its probabilities (bodyLandmarks prob: true)');
  return maskToImage(p.prob, Math.round(Math.sqrt(p.prob.length)), p.roi, W, H);
}
