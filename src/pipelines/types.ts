// The contract between the worker (queue/) and a pipeline. A pipeline is pure: bytes and
// parameters in, files and stage timings out. It never touches Redis or HTTP; the caller
// downloads inputs and stores outputs.
import type { StageTimings } from '../domain/task.ts';
import type { ModelSession } from '../models/onnx.ts';

export interface OutputFile {
  /** File name under the task's output folder, e.g. "faces.json". */
  name: string;
  contentType: string;
  data: Uint8Array;
}

export interface PipelineResult {
  files: OutputFile[];
  /** Stage timings in run order (decode, preprocess, inference, postprocess, ...). */
  stages: StageTimings;
  /** Time inside model runs, milliseconds (reported as predict_time). */
  predictMs: number;
  /** Extra log lines (e.g. which photo was chosen and why). */
  notes: string[];
}

export interface PipelineContext {
  /** Manifest parameters of the version being run. */
  params: Readonly<Record<string, unknown>>;
  /** The session of one of the version's graphs. */
  session(graph: string): Promise<ModelSession>;
  maxPixels: number;
}

export interface PipelineRunner {
  run(ctx: PipelineContext, input: Record<string, unknown>, files: Record<string, Uint8Array>): Promise<PipelineResult>;
}

export interface StageTimer {
  stages: StageTimings;
  /** Milliseconds spent in model runs (infer) so far. */
  readonly predictMs: number;
  /** Times a stage. */
  time<T>(stage: string, fn: () => Promise<T> | T): Promise<T>;
  /** Times a stage that is a model run; its time also counts as predict time. */
  infer<T>(stage: string, fn: () => Promise<T>): Promise<T>;
}

/** Stage names a shared model step reports under: the usual three, or a pipeline's own names. */
export type StepStages = readonly [pre: string, infer: string, post: string];
export const MODEL_STAGES: StepStages = ['preprocess', 'inference', 'postprocess'];

/** Stopwatch that appends [stage, ms] pairs (a stage met twice is summed under one name). */
export function stageTimer(): StageTimer {
  const stages: StageTimings = [];
  let predictMs = 0;
  const add = (stage: string, ms: number) => {
    const hit = stages.find(([s]) => s === stage);
    if (hit) hit[1] += ms;
    else stages.push([stage, ms]);
  };
  const time = async <T>(stage: string, fn: () => Promise<T> | T): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      add(stage, performance.now() - t0);
    }
  };
  return {
    stages,
    get predictMs() {
      return predictMs;
    },
    time,
    async infer(stage, fn) {
      const t0 = performance.now();
      try {
        return await time(stage, fn);
      } finally {
        predictMs += performance.now() - t0;
      }
    },
  };
}
