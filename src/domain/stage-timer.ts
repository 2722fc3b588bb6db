// The one stopwatch for stage timings: pipelines time their steps with it on the inference thread,
// the task processor times download and store with it on the worker's event loop.
import type { StageTimings } from './task.ts';

export interface StageTimer {
  stages: StageTimings;
  /** Milliseconds spent in model runs (infer) so far. */
  readonly predictMs: number;
  /** Times a stage. */
  time<T>(stage: string, fn: () => Promise<T> | T): Promise<T>;
  /** Times a stage that is a model run; its time also counts as predict time. */
  infer<T>(stage: string, fn: () => Promise<T>): Promise<T>;
}

/**
 * On a model run's result: the run's own milliseconds, where the caller's wall time is not that
 * (a run in another thread: models/onnx.ts ModelThread). StageTimer.infer counts it instead.
 */
export const RUN_MS: unique symbol = Symbol('model run ms');

/** Stage names a shared model step reports under: the usual three, or a pipeline's own names. */
export type StepStages = readonly [pre: string, infer: string, post: string];
export const MODEL_STAGES: StepStages = ['preprocess', 'inference', 'postprocess'];

/**
 * Stopwatch that appends [stage, ms] pairs (a stage met twice is summed under one name). With a
 * `signal`, each stage start is a stopping point: once the signal has aborted (the task was
 * canceled at its Cancel-After deadline, or its worker hands it back), the next stage throws the
 * signal's reason instead of starting. A stage in progress (a model run) is never interrupted:
 * onnxruntime cannot be, and a half-run stage is worth nothing.
 */
export function stageTimer(signal?: AbortSignal): StageTimer {
  const stages: StageTimings = [];
  let predictMs = 0;
  const add = (stage: string, ms: number) => {
    const hit = stages.find(([s]) => s === stage);
    if (hit) hit[1] += ms;
    else stages.push([stage, ms]);
  };
  // A stage's time; a model run's (`model`) counts as predict time too, and where the run reports
  // its own time (a run in a model thread) that is counted: the wall time would also hold the wait
  // for this thread, busy with other work when the run ended.
  const measure = async <T>(stage: string, fn: () => Promise<T> | T, model: boolean): Promise<T> => {
    signal?.throwIfAborted();
    const t0 = performance.now();
    let ms: number | undefined;
    try {
      const result = await fn();
      const own = model ? (result as { [RUN_MS]?: unknown } | null)?.[RUN_MS] : undefined;
      if (typeof own === 'number') ms = own;
      return result;
    } finally {
      ms ??= performance.now() - t0;
      add(stage, ms);
      if (model) predictMs += ms;
    }
  };
  return {
    stages,
    get predictMs() {
      return predictMs;
    },
    time: (stage, fn) => measure(stage, fn, false),
    infer: (stage, fn) => measure(stage, fn, true),
  };
}
