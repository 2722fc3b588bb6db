// Task input of the face-detection pipeline (zod only: the API validates with it).
import { z } from 'zod';
import { imageUrl, pipelineSpec } from '../spec.ts';

export const FaceDetectionInput = z.strictObject({
  /** Photo to analyse: an http(s) URL to a JPEG, PNG or WebP image. */
  image: imageUrl,
  /** Detections scoring below this are dropped. Default: the version's params.min_score. */
  min_score: z.number().min(0).max(1).optional(),
});
export type FaceDetectionInput = z.infer<typeof FaceDetectionInput>;

export const faceDetectionSpec = pipelineSpec({ name: 'face-detection', algorithmVersion: 1, input: FaceDetectionInput, fileFields: ['image'] });
