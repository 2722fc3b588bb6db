// Step: the target face of a photo, the one a single-person pipeline works on: the largest, most
// central face. Score = area x (1 - 0.6 x the centre's distance from the picture's centre, relative
// to half the diagonal): in a group photo cropped around one person that person wins over an equally
// large neighbour at the edge, and a clearly larger face still wins from anywhere. One rule for every
// pipeline, so the face the hairstyle changes is the face the try-on protects and the face the
// face-parsing version parses.
import { AppError } from '../errors/codes.ts';
import type { Face } from './face-detection.ts';

/** How a face ranks as the target in a width x height picture. */
export function targetScore(f: Face, width: number, height: number): number {
  const cx = f.box.x + f.box.width / 2 - width / 2;
  const cy = f.box.y + f.box.height / 2 - height / 2;
  const off = Math.hypot(cx, cy) / (Math.hypot(width, height) / 2);
  return f.box.width * f.box.height * (1 - 0.6 * Math.min(1, off));
}

/** The largest, most central face, or undefined when there is none. */
export function largestFace(faces: readonly Face[], width: number, height: number): Face | undefined {
  let best: Face | undefined;
  for (const f of faces) if (!best || targetScore(f, width, height) > targetScore(best, width, height)) best = f;
  return best;
}

/** The target face, or NO_FACE_FOUND naming the photo (`what`). */
export function targetFace(faces: readonly Face[], width: number, height: number, what = 'the image'): Face {
  const face = largestFace(faces, width, height);
  if (!face) throw new AppError('NO_FACE_FOUND', `no face found in ${what}`);
  return face;
}

/**
 * 1 where a pixel is nearer another face than the target, in face widths from each face's centre
 * (a Voronoi split scaled by face size): the pixels of other people a single-person pipeline must
 * not touch, without needing a mask per person.
 */
export function othersMask(target: Face, others: readonly Face[], width: number, height: number): Uint8Array {
  const out = new Uint8Array(width * height);
  if (others.length === 0) return out;
  // Squared distances over squared sizes (the same order as distance / size), in flat arrays:
  // Math.hypot and a destructured tuple per pixel and face made this 300+ ms on a 1 MP photo.
  const n = others.length;
  const ox = new Float64Array(n), oy = new Float64Array(n), ow2 = new Float64Array(n);
  others.forEach((f, k) => {
    ox[k] = f.box.x + f.box.width / 2;
    oy[k] = f.box.y + f.box.height / 2;
    ow2[k] = Math.max(f.box.width, f.box.height) ** 2;
  });
  const tx = target.box.x + target.box.width / 2, ty = target.box.y + target.box.height / 2;
  const tw2 = Math.max(target.box.width, target.box.height) ** 2;
  for (let y = 0; y < height; y++) {
    const py = y + 0.5;
    for (let x = 0; x < width; x++) {
      const px = x + 0.5;
      const dt = ((px - tx) ** 2 + (py - ty) ** 2) / tw2;
      for (let k = 0; k < n; k++) {
        if (((px - ox[k]!) ** 2 + (py - oy[k]!) ** 2) / ow2[k]! < dt) {
          out[y * width + x] = 1;
          break;
        }
      }
    }
  }
  return out;
}
