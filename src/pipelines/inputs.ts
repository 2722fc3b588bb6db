// Pipeline name -> input schema and which input fields are files (http URLs the worker downloads).
// Zod only, so the API process can validate task input without loading pipelines or models.
import { z } from 'zod';
import { FaceDetectionInput } from './face-detection/input.ts';

export interface PipelineInputSpec {
  schema: z.ZodType<Record<string, unknown>>;
  fileFields: readonly string[];
}

/** An http(s) URL of a JPEG, PNG or WebP image. */
export const imageUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

export const ImageOnlyInput = z.strictObject({ image: imageUrl });

export const PoseInput = z.strictObject({
  image: imageUrl,
  /** Keypoints scoring below this are drawn faint and flagged not visible. Default: the version's. */
  min_score: z.number().min(0).max(1).optional(),
});

export const PIPELINE_INPUTS: Readonly<Record<string, PipelineInputSpec>> = {
  'face-detection': { schema: FaceDetectionInput, fileFields: ['image'] },
  'face-landmarks': { schema: ImageOnlyInput, fileFields: ['image'] },
  'face-parsing': { schema: ImageOnlyInput, fileFields: ['image'] },
  'person-segmentation': { schema: ImageOnlyInput, fileFields: ['image'] },
  pose: { schema: PoseInput, fileFields: ['image'] },
};
