// One task, end to end, on a worker: claim -> download inputs -> pipeline (inference thread) ->
// store outputs -> succeed. Checks for cancel before the pipeline; a cancel that lands later makes
// the final succeed conflict, and the stored outputs are removed. Fails the record itself when the
// error is permanent or this is the last attempt; otherwise rethrows so BullMQ retries.
// Cancel-After: a task claimed past its deadline is canceled without starting; one running when
// its deadline comes is stopped (downloads abort, the pipeline stops at its next stage boundary)
// and canceled, refunded (see deadline-sweeper.ts for the refund rule).
import { AppError, causeText, isFinalFailure, taskErrorText, toAppError } from '../errors/codes.ts';
import { formatStageLogs, type StageTimings } from '../domain/task.ts';
import type { Logger } from '../domain/logger.ts';
import type { Metrics } from '../domain/metrics.ts';
import type { Registry } from '../models/registry.ts';
import { PIPELINE_SPECS } from '../pipelines/specs.ts';
import { stageTimer } from '../domain/stage-timer.ts';
import { storedInputKey, taskOutputKey, taskPrefix } from '../domain/blob-keys.ts';
import type { BlobStore } from '../store/blob-store.ts';
import type { TaskStore } from '../store/task-store.ts';
import { fetchImageInput, type InputLimits } from './fetch-input.ts';
import type { OutboundHttp } from './outbound-http.ts';
import type { PipelinePool } from './pipeline-pool.ts';
import { deadlineCancel } from './deadline-sweeper.ts';

export interface ProcessorDeps {
  tasks: TaskStore;
  blobs: BlobStore;
  registry: Registry;
  pool: PipelinePool;
  limits: InputLimits;
  http: OutboundHttp;
  log: Logger;
  /** Counts queue wait, stage times and tasks in flight. */
  metrics?: Metrics;
  /** Called after the task reached a terminal status (e.g. to queue its webhook at once). */
  onEnded?: () => void;
}

export interface Attempt {
  /** 1-based number of this attempt. */
  number: number;
  max: number;
  /** Earlier attempts of this task that ended in INFERENCE_TIMEOUT (kept in the job's data). */
  inferenceTimeouts?: number;
}

export type Outcome = 'succeeded' | 'failed' | 'canceled' | 'skipped' | 'handed-back';

/**
 * One input file: an http(s) URL is downloaded; "blob:<key>" (what the job APIs store) is read
 * from the blob store, and only from this task's own folder.
 */
async function readInput(deps: ProcessorDeps, taskId: string, field: string, ref: string, signal?: AbortSignal): Promise<Uint8Array> {
  if (!ref.startsWith('blob:')) return (await fetchImageInput(deps.http, field, ref, deps.limits, signal)).bytes;
  const key = storedInputKey(ref, taskId);
  if (!key) throw new AppError('INPUT_INVALID', `input.${field}: not a file of this task`);
  const blob = await deps.blobs.open(key);
  if (!blob) throw new AppError('INPUT_UNREACHABLE', `input.${field}: the stored file is gone (retention ended?)`);
  const chunks: Buffer[] = [];
  for await (const c of blob.stream()) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * `signal` aborts the run when the worker hands the task back (drain timeout): downloads stop, no
 * further step runs and the record is left processing for the worker that takes it next.
 */
export async function processTask(
  deps: ProcessorDeps,
  { taskId, userId }: { taskId: string; userId: number },
  attempt: Attempt,
  signal?: AbortSignal,
): Promise<Outcome> {
  const { tasks, log } = deps;
  const claim = await tasks.claim(taskId, userId);
  if (claim.result !== 'ok') {
    // Canceled (or already ended) before we got to it, or the record expired: nothing to do.
    log.info({ taskId, claim }, 'task not claimable; skipped');
    return 'skipped';
  }
  if (claim.record.deadlineMs != null && claim.atMs >= claim.record.deadlineMs) {
    // Its deadline passed while it waited for a worker: it does not start at all.
    await tasks.cancel(taskId, userId, deadlineCancel(claim.record, { started: false }));
    log.info({ taskId }, 'task reached its Cancel-After deadline before it started; canceled');
    return 'canceled';
  }
  const { metrics } = deps;
  if (claim.previous === 'starting') metrics?.taskClaimed(claim.record.version, claim.atMs - claim.record.createdMs);
  metrics?.attemptStarted();
  // The deadline, timed from the claim on this process's clock (both ends of the difference are
  // Redis time, so clock skew between hosts does not matter).
  const deadline = new AbortController();
  const deadlineTimer =
    claim.record.deadlineMs == null
      ? undefined
      : setTimeout(() => deadline.abort(new AppError('RUN_STOPPED', 'the task reached its Cancel-After deadline')), claim.record.deadlineMs - claim.atMs);
  const pastDeadline = () => deadline.signal.aborted;
  // What downloads and the pipeline run watch: a hand-back or the deadline stops them.
  const stopSignal = signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal;
  const timer = stageTimer(stopSignal);
  const stages: StageTimings = timer.stages;
  const timed = timer.time;
  const canceled = async () => (await tasks.status(taskId)) === 'canceled';
  const handedBack = () => signal?.aborted === true;
  let notes: string[] = [`attempt: ${attempt.number}/${attempt.max}`];
  let stage = 'download';
  const cancelAtDeadline = async (): Promise<Outcome> => {
    // Anything stored belongs to nobody now.
    if (stage === 'store') await deps.blobs.removePrefix(taskPrefix(taskId));
    const r = await tasks.cancel(taskId, userId, deadlineCancel(claim.record, { started: true, stage, by: 'worker' }, formatStageLogs(stages, notes)));
    log.info({ taskId, stage, result: r.result }, 'task reached its Cancel-After deadline while running; stopped and canceled');
    return 'canceled';
  };

  try {
    const record = claim.record;
    if (record.version === null) {
      throw new AppError('MODEL_UNAVAILABLE', `no ${record.pipeline} model version is installed on this service yet`);
    }
    const version = deps.registry.get(record.version);
    if (!version) throw new AppError('VERSION_NOT_FOUND', `version ${record.version} is not known to this worker`);
    const spec = PIPELINE_SPECS[version.manifest.pipeline];
    if (!spec) throw new AppError('MODEL_UNAVAILABLE', `pipeline ${version.manifest.pipeline} is not available on this worker`);

    // A field holds one reference or a list; the pipeline gets a list per field, in input order.
    const files: Record<string, Uint8Array[]> = {};
    await timed('download', () =>
      Promise.all(
        spec.fileFields.map(async (field) => {
          const value = record.input[field];
          const refs = Array.isArray(value) ? value : [value];
          if (refs.length === 0 || refs.some((r) => typeof r !== 'string')) throw new AppError('INPUT_INVALID', `input.${field}: missing`);
          const name = (i: number) => (Array.isArray(value) ? `${field}[${i}]` : field);
          files[field] = await Promise.all(refs.map((ref, i) => readInput(deps, taskId, name(i), ref as string, stopSignal)));
        }),
      ),
    );
    if (handedBack()) return 'handed-back';
    if (pastDeadline()) return await cancelAtDeadline();
    if (await canceled()) return 'canceled';

    stage = 'pipeline';
    const result = await deps.pool.run(version.id, record.input, files, stopSignal);
    stages.push(...result.stages);
    notes = [...notes, ...result.notes];
    if (handedBack()) return 'handed-back';
    if (pastDeadline()) return await cancelAtDeadline();

    stage = 'store';
    const outputKeys = result.files.map((f) => taskOutputKey(taskId, f.name));
    await timed('store', () => Promise.all(result.files.map((f, i) => deps.blobs.put(outputKeys[i]!, f.data))));

    const done = await tasks.succeed(
      taskId,
      { outputKeys, logs: formatStageLogs(stages, notes), predictTimeS: result.predictMs / 1000 },
      userId,
    );
    if (done.result !== 'ok') {
      // Canceled while the pipeline ran or we stored: the outputs belong to nobody now.
      await deps.blobs.removePrefix(taskPrefix(taskId));
      return 'canceled';
    }
    deps.onEnded?.();
    return 'succeeded';
  } catch (e) {
    if (handedBack()) return 'handed-back';
    if (pastDeadline()) return await cancelAtDeadline();
    const err = toAppError(e);
    const final = isFinalFailure(err, attempt);
    log.warn({ taskId, code: err.code, err: err.message, cause: causeText(err), attempt: attempt.number, final }, 'task attempt failed');
    if (!final) throw err;
    await tasks.fail(taskId, taskErrorText(err), formatStageLogs(stages, notes), userId);
    deps.onEnded?.();
    return 'failed';
  } finally {
    clearTimeout(deadlineTimer);
    metrics?.stagesRan(claim.record.version, stages);
    metrics?.attemptEnded();
  }
}
