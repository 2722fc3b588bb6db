// Pipeline name -> input schema and which input fields are files (http URLs the worker downloads).
// Zod only, so the API process can validate task input without loading pipelines or models.
import type { z } from 'zod';
import { FaceDetectionInput } from './face-detection/input.ts';

export interface PipelineInputSpec {
  schema: z.ZodType<Record<string, unknown>>;
  fileFields: readonly string[];
}

export const PIPELINE_INPUTS: Readonly<Record<string, PipelineInputSpec>> = {
  'face-detection': { schema: FaceDetectionInput, fileFields: ['image'] },
};
