// Pipeline name -> runner. Checked against PIPELINE_INPUTS and the registry at start-up.
import { faceDetection } from './face-detection/pipeline.ts';
import { faceLandmarks } from './face-landmarks/pipeline.ts';
import { faceParsing } from './face-parsing/pipeline.ts';
import { personSegmentation } from './person-segmentation/pipeline.ts';
import { pose } from './pose/pipeline.ts';
import { hairstyle } from './hairstyle/pipeline.ts';
import { tryon } from './tryon/pipeline.ts';
import { PIPELINE_INPUTS } from './inputs.ts';
import type { PipelineRunner } from './types.ts';

export const PIPELINES: Readonly<Record<string, PipelineRunner>> = {
  'face-detection': faceDetection,
  'face-landmarks': faceLandmarks,
  'face-parsing': faceParsing,
  'person-segmentation': personSegmentation,
  pose,
  hairstyle,
  tryon,
};

/** Fails loudly when a pipeline lacks its input spec or runner. */
export function checkPipelineTables(): void {
  const a = Object.keys(PIPELINES).sort().join(',');
  const b = Object.keys(PIPELINE_INPUTS).sort().join(',');
  if (a !== b) throw new Error(`pipeline tables disagree: runners [${a}] vs inputs [${b}]`);
}
