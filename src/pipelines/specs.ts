// Pipeline name -> spec (input schema, file fields, algorithm version). The API process loads this
// table only; the worker's runners (index.ts) must cover the same names with the same specs.
import { bodyLandmarksSpec } from './body-landmarks/spec.ts';
import { faceDetectionSpec } from './face-detection/spec.ts';
import { faceLandmarksSpec } from './face-landmarks/spec.ts';
import { faceParsingSpec } from './face-parsing/spec.ts';
import { hairstyleSpec } from './hairstyle/spec.ts';
import { personMattingSpec } from './person-matting/spec.ts';
import { personSegmentationSpec } from './person-segmentation/spec.ts';
import { poseSpec } from './pose/spec.ts';
import type { PipelineSpec } from './spec.ts';
import { tryonSpec } from './tryon/spec.ts';

const all: PipelineSpec<never, string>[] = [faceDetectionSpec, faceLandmarksSpec, faceParsingSpec, personSegmentationSpec, poseSpec, hairstyleSpec, tryonSpec, bodyLandmarksSpec, personMattingSpec] as never;

export const PIPELINE_SPECS: Readonly<Record<string, PipelineSpec>> = Object.freeze(Object.fromEntries(all.map((s) => [s.name, s as unknown as PipelineSpec])));

/** A version's manifest names a known pipeline with the algorithm version the code implements. */
export interface ManifestRef {
  file: string;
  manifest: { name: string; pipeline: string; algorithm_version?: number | undefined };
}

/**
 * Fails loudly at start-up when a version names an unknown pipeline or pins another algorithm
 * version than the code implements (outputs would not be what its id promises).
 */
export function checkVersionsAgainstSpecs(versions: Iterable<ManifestRef>): void {
  for (const v of versions) {
    const spec = PIPELINE_SPECS[v.manifest.pipeline];
    if (!spec) throw new Error(`${v.file}: unknown pipeline "${v.manifest.pipeline}" (known: ${Object.keys(PIPELINE_SPECS).join(', ')})`);
    const pinned = v.manifest.algorithm_version ?? 1;
    if (pinned !== spec.algorithmVersion) {
      throw new Error(`${v.file}: algorithm_version ${pinned}, but the ${spec.name} pipeline implements ${spec.algorithmVersion} (pin a version for this code)`);
    }
  }
}
