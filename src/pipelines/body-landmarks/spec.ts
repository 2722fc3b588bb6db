// Task input of the body-landmarks pipeline (zod only).
import { z } from 'zod';
import { imageUrl, pipelineSpec } from '../spec.ts';

export const BodyLandmarksInput = z.strictObject({
  image: imageUrl,
  /** Landmarks less visible than this are not drawn in the preview. Default: the version's. */
  min_visibility: z.number().min(0).max(1).optional(),
});

export const bodyLandmarksSpec = pipelineSpec({ name: 'body-landmarks', algorithmVersion: 1, input: BodyLandmarksInput, fileFields: ['image'] });
