// Task input of the face-parsing pipeline (zod only).
import { ImageOnlyInput, pipelineSpec } from '../spec.ts';

export const faceParsingSpec = pipelineSpec({ name: 'face-parsing', algorithmVersion: 1, input: ImageOnlyInput, fileFields: ['image'] });
