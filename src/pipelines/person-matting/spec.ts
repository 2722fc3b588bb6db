// Task input of the person-matting pipeline (zod only).
import { ImageOnlyInput, pipelineSpec } from '../spec.ts';

export const personMattingSpec = pipelineSpec({ name: 'person-matting', algorithmVersion: 1, input: ImageOnlyInput, fileFields: ['image'] });
