// Pipeline name -> runner (loaded by inference threads only). Checked against the spec table and
// the registry at worker start-up.
import { bodyLandmarksPipeline } from './body-landmarks/pipeline.ts';
import { faceDetection } from './face-detection/pipeline.ts';
import { faceLandmarks } from './face-landmarks/pipeline.ts';
import { faceParsing } from './face-parsing/pipeline.ts';
import { hairstyle } from './hairstyle/pipeline.ts';
import { personMatting } from './person-matting/pipeline.ts';
import { personSegmentation } from './person-segmentation/pipeline.ts';
import { pose } from './pose/pipeline.ts';
import { PIPELINE_SPECS, checkVersionsAgainstSpecs, type ManifestRef } from './specs.ts';
import { tryon } from './tryon/pipeline.ts';
import type { PipelineRunner } from './types.ts';
import type { Registry } from '../models/registry.ts';
import type { VersionId } from '../domain/version-id.ts';

export const PIPELINES: Readonly<Record<string, PipelineRunner>> = Object.freeze(
  Object.fromEntries([faceDetection, faceLandmarks, faceParsing, personSegmentation, pose, hairstyle, tryon, bodyLandmarksPipeline, personMatting].map((r) => [r.spec.name, r])),
);

/**
 * Fails loudly when the runner and spec tables disagree (a pipeline without its runner or spec, or
 * a runner built on another spec object) or when a version does not fit its pipeline.
 */
export function checkPipelineTables(versions: Iterable<ManifestRef> = []): void {
  const a = Object.keys(PIPELINES).sort().join(',');
  const b = Object.keys(PIPELINE_SPECS).sort().join(',');
  if (a !== b) throw new Error(`pipeline tables disagree: runners [${a}] vs specs [${b}]`);
  for (const [name, runner] of Object.entries(PIPELINES)) {
    if (runner.spec !== PIPELINE_SPECS[name]) throw new Error(`pipeline ${name}: its runner is not built on the spec the API validates with`);
  }
  checkVersionsAgainstSpecs(versions);
}

/**
 * Which graphs of which version run in a model thread (SessionCacheOptions.modelThread): those its
 * pipeline's runner names (PipelineRunner.modelThread).
 */
export function modelThreadGraphs(registry: Registry): (version: VersionId, graph: string) => boolean {
  return (version, graph) => runnerOf(registry, version)?.modelThread?.includes(graph) ?? false;
}

/** Which model-thread graphs take a spare core (SessionCacheOptions.modelThreadSpare): those of pipelines whose runner says so. */
export function modelThreadSpareGraphs(registry: Registry): (version: VersionId, graph: string) => boolean {
  return (version) => runnerOf(registry, version)?.modelThreadSpare ?? false;
}

/** The runner of a version's pipeline (none for an unknown version or pipeline). */
function runnerOf(registry: Registry, version: VersionId): PipelineRunner | undefined {
  const pipeline = registry.get(version)?.manifest.pipeline;
  return pipeline === undefined ? undefined : PIPELINES[pipeline];
}
