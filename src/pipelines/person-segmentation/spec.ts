// Task input of the person-segmentation pipeline (zod only).
import { ImageOnlyInput, pipelineSpec } from '../spec.ts';

export const personSegmentationSpec = pipelineSpec({ name: 'person-segmentation', algorithmVersion: 1, input: ImageOnlyInput, fileFields: ['image'] });
