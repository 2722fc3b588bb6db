// Step: the target face of a photo, the one a single-person pipeline works on: the largest face box
// (by area). One rule for every pipeline, so the face the hairstyle changes is the face the try-on
// protects and the face the face-parsing version parses.
import { AppError } from '../errors/codes.ts';
import type { Face } from './face-detection.ts';

/** The largest face, or undefined when there is none. */
export function largestFace(faces: readonly Face[]): Face | undefined {
  let best: Face | undefined;
  for (const f of faces) if (!best || f.box.width * f.box.height > best.box.width * best.box.height) best = f;
  return best;
}

/** The largest face, or NO_FACE_FOUND naming the photo (`what`). */
export function targetFace(faces: readonly Face[], what = 'the image'): Face {
  const face = largestFace(faces);
  if (!face) throw new AppError('NO_FACE_FOUND', `no face found in ${what}`);
  return face;
}
