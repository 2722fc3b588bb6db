// Task input of the face-detection pipeline. Imports zod only: the API validates with it and
// never loads a model.
import { z } from 'zod';

export const FaceDetectionInput = z.strictObject({
  /** Photo to analyse: an http(s) URL to a JPEG, PNG or WebP image. */
  image: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  /** Detections scoring below this are dropped. Default: the version's params.min_score. */
  min_score: z.number().min(0).max(1).optional(),
});
export type FaceDetectionInput = z.infer<typeof FaceDetectionInput>;
