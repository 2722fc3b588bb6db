// Task input of the face-landmarks pipeline (zod only).
import { ImageOnlyInput, pipelineSpec } from '../spec.ts';

export const faceLandmarksSpec = pipelineSpec({ name: 'face-landmarks', algorithmVersion: 1, input: ImageOnlyInput, fileFields: ['image'] });
