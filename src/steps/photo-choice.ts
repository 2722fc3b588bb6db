// Step: the best of several photos of one person (hairstyle takes 1 to 4): the target face on each,
// refusals that name the photo, and a score for detail, frontality and sharpness.
import { AppError, pastLimit } from '../errors/codes.ts';
import type { RgbImage } from '../imaging/image.ts';
import type { ModelSession } from '../models/onnx.ts';
import type { StageTimer } from '../domain/stage-timer.ts';
import { detectFaces, type Face, type FaceDetectionParams } from './face-detection.ts';
import { targetFace } from './target-face.ts';

export interface PhotoRules {
  detector: FaceDetectionParams;
  /** Smallest face width accepted, as a fraction of the photo's short side. */
  minFaceFraction: number;
  /** Largest in-plane roll of the eye line accepted, in degrees. */
  maxRollDegrees: number;
}

export interface Candidate {
  index: number;
  image: RgbImage;
  face: Face;
  /** The other faces on the photo: people whose pixels the pipeline must leave alone. */
  others: Face[];
  fraction: number;
  frontal: number;
  sharpness: number;
}

/** Variance of the Laplacian over the face box (grey, on a 96 px wide copy): a sharpness measure. */
function sharpness(img: RgbImage, face: Face): number {
  const { x, y, width, height } = face.box;
  const step = Math.max(1, width / 96);
  const cols = Math.floor(width / step);
  const rows = Math.floor(height / step);
  const g = (c: number, r: number) => {
    const px = Math.min(img.width - 1, Math.floor(x + c * step));
    const py = Math.min(img.height - 1, Math.floor(y + r * step));
    const o = (py * img.width + px) * 3;
    return 0.299 * img.data[o]! + 0.587 * img.data[o + 1]! + 0.114 * img.data[o + 2]!;
  };
  let sum = 0, sum2 = 0, n = 0;
  for (let r = 1; r < rows - 1; r++) {
    for (let c = 1; c < cols - 1; c++) {
      const l = 4 * g(c, r) - g(c - 1, r) - g(c + 1, r) - g(c, r - 1) - g(c, r + 1);
      sum += l;
      sum2 += l * l;
      n++;
    }
  }
  return n ? sum2 / n - (sum / n) ** 2 : 0;
}

/** 1 - how far the nose sits off the eyes' midpoint, relative to the eye distance (0 = profile). */
function frontality(face: Face): number {
  const { right_eye: r, left_eye: l, nose_tip: n } = face.keypoints;
  const eyes = Math.hypot(l.x - r.x, l.y - r.y) || 1;
  return Math.max(0, 1 - (2 * Math.abs(n.x - (r.x + l.x) / 2)) / eyes);
}

/**
 * Detects the target (largest, most central) face on each photo, refuses a photo by name when it has no face, too
 * small a face or too much roll, and picks the best photo: largest face in pixels (more detail to
 * work with) x most frontal x sharpest.
 */
export async function chooseBestPhoto(detector: ModelSession, images: readonly RgbImage[], rules: PhotoRules, t: StageTimer): Promise<{ best: Candidate; notes: string[] }> {
  const candidates: Candidate[] = [];
  for (const [i, image] of images.entries()) {
    const which = images.length > 1 ? `image ${i + 1}` : 'the image';
    const faces = await detectFaces(detector, image, rules.detector, rules.detector.min_score, t);
    const face = targetFace(faces, image.width, image.height, which);
    const fraction = face.box.width / Math.min(image.width, image.height);
    if (fraction < rules.minFaceFraction) {
      throw new AppError('FACE_TOO_SMALL', `the face in ${which} is ${pastLimit(fraction * 100, rules.minFaceFraction * 100)}% of the picture's short side; at least ${rules.minFaceFraction * 100}% is needed`);
    }
    const { right_eye: r, left_eye: l } = face.keypoints;
    const roll = (Math.atan2(l.y - r.y, l.x - r.x) * 180) / Math.PI;
    if (Math.abs(roll) > rules.maxRollDegrees) {
      throw new AppError('FACE_TILTED', `the face in ${which} is tilted ${pastLimit(Math.abs(roll), rules.maxRollDegrees)} degrees; at most ${rules.maxRollDegrees} are accepted`);
    }
    candidates.push({ index: i, image, face, others: faces.filter((f) => f !== face), fraction, frontal: frontality(face), sharpness: sharpness(image, face) });
  }
  // Largest in pixels (more detail to work with), most frontal, sharpest.
  const maxSharp = Math.max(...candidates.map((c) => c.sharpness), 1e-6);
  const maxWidth = Math.max(...candidates.map((c) => c.face.box.width));
  const score = (c: Candidate) => (c.face.box.width / maxWidth) * (0.5 + c.frontal) * (0.5 + c.sharpness / maxSharp);
  const best = [...candidates].sort((a, b) => score(b) - score(a))[0]!;
  const describe = (c: Candidate) =>
    `image ${c.index + 1}: face ${Math.round(c.face.box.width)} px wide (${Math.round(c.fraction * 100)}% of the short side), frontal ${c.frontal.toFixed(2)}, sharpness ${Math.round(c.sharpness)}`;
  const notes = [`chosen: image ${best.index + 1} (largest x most frontal x sharpest face)`, ...candidates.map(describe)];
  return { best, notes };
}

