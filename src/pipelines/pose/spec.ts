// Task input of the pose pipeline (zod only).
import { z } from 'zod';
import { imageUrl, pipelineSpec } from '../spec.ts';

export const PoseInput = z.strictObject({
  image: imageUrl,
  /** Keypoints scoring below this are drawn faint and flagged not visible. Default: the version's. */
  min_score: z.number().min(0).max(1).optional(),
});

export const poseSpec = pipelineSpec({ name: 'pose', algorithmVersion: 1, input: PoseInput, fileFields: ['image'] });
