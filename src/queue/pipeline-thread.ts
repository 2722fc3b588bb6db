// Inference thread: runs whole pipelines (decode, preprocess, onnxruntime, postprocess, encode) off
// the worker process's event loop, with its own session cache. The pool gives it one request at a
// time by default (onnxruntime-node's run blocks the calling thread anyway), or several
// (tasksPerThread), whose model calls are then batched for versions that declare it.
//
// Messages in:  { type: 'run', id, version, input, files } | { type: 'stop', id, reason } | { type: 'retire' }
// Messages out: { type: 'done', id, result } | { type: 'error', id, error } | { type: 'ready', providers }
//               | { type: 'ready-error', error } | { type: 'warn', message }
import { parentPort, workerData } from 'node:worker_threads';
import { SessionCache } from '../models/sessions.ts';
import { loadRegistry } from '../models/registry.ts';
import { PIPELINES, checkPipelineTables, modelThreadGraphs, modelThreadSpareGraphs } from '../pipelines/index.ts';
import { configureSharp } from '../imaging/image.ts';
import { AppError, toAppError } from '../errors/codes.ts';
import type { VersionId } from '../domain/version-id.ts';
import { transferables, type ThreadControl, type ThreadInit, type ThreadRequest, type ThreadResponse } from './pipeline-pool.ts';

const init = workerData as ThreadInit;
// After the imports: this thread's first import of sharp has just reset libvips' (process-wide) concurrency.
if (init.sharpConcurrency !== undefined) configureSharp({ concurrency: init.sharpConcurrency });
const registry = loadRegistry(init.modelsDir);
const sessions = new SessionCache(registry, {
  provider: init.provider,
  intraOpThreads: init.intraOpThreads,
  allowSpinning: init.allowSpinning,
  warn: (message) => parentPort!.postMessage({ type: 'warn', message } satisfies ThreadResponse),
  budgetBytes: init.modelMemoryBytes ?? 0,
  batching: (init.tasksPerThread ?? 1) > 1,
  modelThread: modelThreadGraphs(registry),
  modelThreadSpare: modelThreadSpareGraphs(registry),
});

// Load the configured versions before taking requests, and say so (the worker reports ready then).
// The runners must cover the spec table the API validates with and fit every version; a mismatch
// fails the worker's start-up (ready-error), here where the runners are loaded anyway, so the
// worker's event loop never loads pipeline or onnxruntime code.
const warmed = Promise.resolve()
  .then(() => checkPipelineTables(registry.versions.values()))
  .then(() => Promise.all(init.warm.map((v) => sessions.warm(v, init.pinned === true))))
  .then(
  (loaded) => {
    const providers = loaded.flatMap((l) => Object.values(l).map((s) => s.provider));
    parentPort!.postMessage({ type: 'ready', providers } satisfies ThreadResponse);
  },
  (e: unknown) => parentPort!.postMessage({ type: 'ready-error', error: toAppError(e).toJSON() } satisfies ThreadResponse),
);

function versionOf(id: VersionId) {
  const v = registry.get(id);
  if (!v) throw new AppError('VERSION_NOT_FOUND', `version ${id} is not in this worker's registry`);
  return v;
}

/** Stop switches of the runs in progress, by request id (a 'stop' message aborts one). */
const stops = new Map<number, AbortController>();

async function handle(msg: ThreadRequest, signal: AbortSignal): Promise<ThreadResponse> {
  await warmed;
  const v = versionOf(msg.version);
  const runner = PIPELINES[v.manifest.pipeline];
  if (!runner) throw new AppError('MODEL_UNAVAILABLE', `pipeline ${v.manifest.pipeline} is not available on this worker`);
  // The cache keeps the graphs of the runs in progress loaded and trims to the memory budget once
  // none is left; a graph evicted earlier and loaded again says so in the task's logs.
  const { result, notes } = await sessions.run(() =>
    runner.run({ params: v.manifest.params, session: (g) => sessions.get(v.id, g), maxPixels: init.maxPixels, signal }, msg.input, msg.files),
  );
  return { type: 'done', id: msg.id, result: notes.length ? { ...result, notes: [...result.notes, ...notes] } : result, batch: sessions.batchStats(), memory: sessions.stats() };
}

/** Runs in progress here (several when the pool gives this thread more than one at a time). */
const inFlight = new Set<Promise<void>>();

parentPort!.on('message', (msg: ThreadRequest | ThreadControl) => {
  if (msg.type === 'retire') {
    // The pool gave up on this thread (a run passed its deadline) and has started another. Leave
    // once the run settles, never during it: an exit while an onnxruntime call is in flight aborts
    // the whole process (see PipelinePool.expire).
    void Promise.allSettled([...inFlight]).then(() => process.exit(0));
    return;
  }
  if (msg.type === 'stop') {
    // The run throws this at its next stage boundary (stageTimer), and answers it as its error.
    stops.get(msg.id)?.abort(AppError.fromJSON(msg.reason));
    return;
  }
  const stop = new AbortController();
  stops.set(msg.id, stop);
  const done = handle(msg, stop.signal).then(
    (res) => {
      const transfer = res.type === 'done' ? transferables(res.result.files.map((f) => f.data)) : [];
      parentPort!.postMessage(res, transfer);
    },
    (e: unknown) => parentPort!.postMessage({ type: 'error', id: msg.id, error: toAppError(e).toJSON() } satisfies ThreadResponse),
  );
  inFlight.add(done);
  void done.finally(() => (inFlight.delete(done), stops.delete(msg.id)));
});
