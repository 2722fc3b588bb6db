// The contract between the worker (queue/) and a pipeline. A pipeline is pure: bytes and
// parameters in, files and stage timings out. It never touches Redis or HTTP; the caller
// downloads inputs and stores outputs.
import type { StageTimings } from '../domain/task.ts';
import { AppError } from '../errors/codes.ts';
import type { ModelSession } from '../models/onnx.ts';
import type { PipelineSpec } from './spec.ts';

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
  /**
   * Aborts when the run should stop (its task's Cancel-After deadline passed, or its worker hands
   * it back): pass it to stageTimer, which stops the run at its next stage boundary.
   */
  signal?: AbortSignal;
}

/** Input files by field, each field a list (one item for a single-file field), in input order. */
export type PipelineFiles<F extends string = string> = Readonly<Record<F, readonly Uint8Array[]>>;

/** A pipeline as the inference thread runs it: raw task input in, validated by the spec first. */
export interface PipelineRunner {
  readonly spec: PipelineSpec;
  /**
   * Graphs whose sessions run in a model thread (models/onnx.ts ModelThread): the pipeline does
   * its own work while they run. Others run on the calling thread: a run handed to another thread
   * costs its feeds' copy, which pays only where something overlaps it (the try-on, running its
   * models one after another, was up to 35% slower with all of them in a model thread).
   */
  readonly modelThread?: readonly string[];
  /**
   * The pipeline mostly waits for its model-thread graphs (its own work ends before theirs): they
   * take one intra-op thread more (SessionCacheOptions.modelThreadSpare).
   */
  readonly modelThreadSpare?: boolean;
  run(ctx: PipelineContext, input: Record<string, unknown>, files: PipelineFiles): Promise<PipelineResult>;
}

/**
 * One typed table entry per pipeline: its spec and a `run` that receives the parsed input and one
 * list of files per file field (checked present and non-empty here, so runs need not).
 */
export function definePipeline<I extends Record<string, unknown>, F extends string>(
  spec: PipelineSpec<I, F>,
  run: (ctx: PipelineContext, input: I, files: PipelineFiles<F>) => Promise<PipelineResult>,
  opts: { modelThread?: readonly string[]; modelThreadSpare?: boolean } = {},
): PipelineRunner {
  return {
    spec: spec as unknown as PipelineSpec,
    modelThread: opts.modelThread,
    modelThreadSpare: opts.modelThreadSpare,
    async run(ctx, raw, files) {
      // Input written by another front (queue contract) reaches here unchecked by the API: a bad
      // one is the caller's error, not a bug of the pipeline.
      const parsed = spec.input.safeParse(raw);
      if (!parsed.success) {
        const why = parsed.error.issues.map((i) => `input.${i.path.join('.')}: ${i.message}`).join('; ');
        throw new AppError('INPUT_INVALID', why);
      }
      const input = parsed.data;
      for (const field of spec.fileFields) {
        if (!files[field]?.length) throw new AppError('INPUT_INVALID', `input.${field}: file missing`);
      }
      return run(ctx, input, files as PipelineFiles<F>);
    },
  };
}

