// A fixed pool of inference threads (queue/pipeline-thread.ts). The worker process's main thread
// only does I/O (BullMQ, Redis lock renewal, downloads, blob writes); every pipeline runs here.
// A thread that dies fails its in-flight request with a retryable error and is replaced. A run that
// passes its deadline fails with INFERENCE_TIMEOUT at once and a new thread takes its slot; the old
// thread retires when its run settles (see expire() for why it is not terminated).
//
// Why not piscina: it would give the queue, respawn and (with an AbortSignal per task) termination
// of a thread whose task is aborted, but not this pool's start-up protocol (each thread loads its
// warm versions and reports ready with its providers, or fails start-up; 'warn' messages from
// the session cache), and it takes a module file name where Node 20 needs the tsx boot below for
// a .ts entry; and aborting a piscina task terminate()s its thread, which aborts the process while
// onnxruntime is mid-run (expire()). The deadline is ~40 lines here.
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { AppError, type SerializedAppError } from '../errors/codes.ts';
import { configureSharp, ensureSharpLoadedInMainThread } from '../imaging/image.ts';
import type { VersionId } from '../domain/version-id.ts';
import type { ExecutionProvider } from '../models/onnx.ts';
import type { BatcherStats } from '../models/batcher.ts';
import type { SessionCacheStats } from '../models/sessions.ts';
import type { PipelineFiles, PipelineResult } from '../pipelines/types.ts';

export interface ThreadInit {
  modelsDir: string;
  provider: ExecutionProvider;
  intraOpThreads: number;
  allowSpinning: boolean;
  maxPixels: number;
  /** Versions whose sessions each thread loads at start, before it takes requests. */
  warm: VersionId[];
  /** Keep the warm versions loaded whatever the memory budget (WARM_VERSIONS was set). */
  pinned?: boolean;
  /** Bytes of graphs each thread's session cache may hold (0: no limit). */
  modelMemoryBytes?: number;
  /**
   * Runs one thread takes at once (default 1). Above 1, their model calls of versions that declare
   * `params.batching` are batched (models/batcher.ts); pre- and post-processing interleave.
   */
  tasksPerThread?: number;
  /** libvips threads per sharp operation (sharp.concurrency), set by each thread: see configureSharp. */
  sharpConcurrency?: number;
  /** Initial V8 old-generation size of the threads, MB (INFERENCE_HEAP_MB; unset or 0: V8's default). */
  initialHeapMb?: number;
}

export interface PoolSettings {
  /**
   * Deadline of one run, counted from the moment a ready thread takes it (queueing and a new
   * thread's warm-up are not counted; a version loaded on first use is).
   */
  runTimeoutMs: number;
}

export type ThreadRequest = { type: 'run'; id: number; version: VersionId; input: Record<string, unknown>; files: PipelineFiles };

/**
 * retire: leave once the current runs settle (sent to a thread whose run passed its deadline).
 * stop: stop run `id` at its next stage boundary (its task was canceled at its Cancel-After
 * deadline, or handed back); it then answers an error.
 */
export type ThreadControl = { type: 'retire' } | { type: 'stop'; id: number; reason: SerializedAppError };

export type ThreadResponse =
  | { type: 'done'; id: number; result: PipelineResult; batch: BatcherStats; memory: SessionCacheStats }
  | { type: 'error'; id: number; error: SerializedAppError }
  | { type: 'ready'; providers: ExecutionProvider[] }
  | { type: 'ready-error'; error: SerializedAppError }
  | { type: 'warn'; message: string };

/** Why a run was stopped: the signal's reason when it is one of ours, else RUN_STOPPED. */
function stopReason(signal: AbortSignal): AppError {
  return signal.reason instanceof AppError ? signal.reason : new AppError('RUN_STOPPED');
}

/** ArrayBuffers that can be moved, not copied: only those a view owns whole (never Buffer's shared pool). */
export function transferables(views: Uint8Array[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const v of views) {
    if (v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && v.buffer instanceof ArrayBuffer) out.add(v.buffer);
  }
  return [...out];
}

interface Pending {
  request: ThreadRequest;
  resolve: (r: ThreadResponse) => void;
  reject: (e: Error) => void;
  /** Deadline timer of the run, once a ready thread has it. */
  deadline?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  /** Runs the thread has now, by request id (at most tasksPerThread). */
  busy: Map<number, Pending>;
  ready: boolean;
  /** The thread's batched model calls and runs so far (from its last answer). */
  batch: BatcherStats;
  /** The thread's graph loads, evictions and loaded bytes (from its last answer). */
  memory: SessionCacheStats;
}

interface Readiness {
  promise: Promise<ExecutionProvider[]>;
  resolve: (p: ExecutionProvider[]) => void;
  reject: (e: Error) => void;
}

// Thread entry: the .ts source run through tsx, or compiled .js alongside this file. Node 20 does
// not carry a parent's loader hooks into worker threads, so a .ts entry is booted through tsx's
// register() first.
const IS_TS = import.meta.url.endsWith('.ts');
const THREAD_URL = new URL(`./pipeline-thread${IS_TS ? '.ts' : '.js'}`, import.meta.url);
const BOOT_TS = IS_TS
  ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(THREAD_URL.href)}); });`
  : '';
/** A thread that dies before it is ready is restarted after this delay, not in a tight loop. */
const RESPAWN_DELAY_MS = 1_000;
const DEFAULT_SETTINGS: PoolSettings = { runTimeoutMs: 120_000 };
/** Deadlines after its own that a retired thread may take to finish its run before it is terminated. */
const RETIRE_LIMIT = 10;

export class PipelinePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private readonly readiness: Readiness[] = [];

  constructor(
    private readonly init: ThreadInit,
    private readonly slotsWanted: number,
    private readonly warn: (message: string) => void = () => {},
    private readonly settings: PoolSettings = DEFAULT_SETTINGS,
  ) {
    // sharp's shared libraries must be loaded by the main thread before threads use them
    // (sharp docs, "worker threads"), or the process may crash when a thread exits.
    ensureSharpLoadedInMainThread();
    if (init.sharpConcurrency !== undefined) configureSharp({ concurrency: init.sharpConcurrency });
    // V8 reads its heap flags when an isolate is created: set here, before the threads start, the
    // flag sizes each thread's heap (this thread's own, already made, is not changed).
    if (init.initialHeapMb) v8.setFlagsFromString(`--initial-heap-size=${Math.round(init.initialHeapMb)}`);
    for (let i = 0; i < slotsWanted; i++) this.slots.push(this.spawn());
  }

  get size(): number {
    return this.slots.length;
  }

  private spawn(): Slot {
    const worker = IS_TS ? new Worker(BOOT_TS, { eval: true, workerData: this.init }) : new Worker(THREAD_URL, { workerData: this.init });
    const slot: Slot = { worker, busy: new Map(), ready: false, batch: { inferences: 0, executions: 0 }, memory: { loads: 0, evictions: 0, bytes: 0, graphs: 0 } };
    const readiness = {} as Readiness;
    readiness.promise = new Promise((resolve, reject) => Object.assign(readiness, { resolve, reject }));
    readiness.promise.catch(() => {});
    if (this.readiness.length < this.slotsWanted) this.readiness.push(readiness);
    worker.on('message', (msg: ThreadResponse) => {
      if (msg.type === 'warn') return this.warn(msg.message);
      if (msg.type === 'ready') {
        slot.ready = true;
        for (const p of slot.busy.values()) this.startDeadline(slot, p);
        return readiness.resolve(msg.providers);
      }
      if (msg.type === 'ready-error') return readiness.reject(AppError.fromJSON(msg.error));
      if (msg.type === 'done') (slot.batch = msg.batch), (slot.memory = msg.memory);
      const p = slot.busy.get(msg.id);
      if (!p) return;
      slot.busy.delete(msg.id);
      clearTimeout(p.deadline);
      p.resolve(msg);
      this.pump();
    });
    worker.on('error', (e) => this.onExit(slot, e, readiness));
    worker.on('exit', (code) => this.onExit(slot, new Error(`inference thread exited with code ${code}`), readiness));
    return slot;
  }

  private onExit(slot: Slot, e: Error, readiness: Readiness): void {
    const failure = new AppError('INTERNAL', `inference thread failed: ${e.message}`);
    // A retired thread (no longer in slots) that dies fails what it still had too.
    for (const p of slot.busy.values()) (clearTimeout(p.deadline), p.reject(failure));
    slot.busy.clear();
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    readiness.reject(failure);
    if (this.closed) return;
    this.warn(`inference thread died (${e.message}); starting a new one`);
    const respawn = () => {
      if (this.closed) return;
      this.slots.push(this.spawn());
      this.pump();
    };
    if (slot.ready) respawn();
    else setTimeout(respawn, RESPAWN_DELAY_MS).unref();
  }

  private startDeadline(slot: Slot, p: Pending): void {
    if (!slot.ready) return;
    clearTimeout(p.deadline);
    p.deadline = setTimeout(() => this.expire(slot, p), this.settings.runTimeoutMs);
    p.deadline.unref();
  }

  /**
   * A run passed its deadline: fail it, and replace its thread at once, so a slow or hung run never
   * holds a slot past the deadline. The old thread is asked to retire: it exits when its run
   * settles. It is not terminate()d straight away because terminating a thread while an
   * onnxruntime-node call is in flight aborts the whole process ("terminate called after throwing
   * an instance of 'Napi::Error'"; reproduced with onnxruntime-node 1.30 by terminating threads
   * mid-run, while sharp survives the same; the class of bug of microsoft/onnxruntime#13086). Nor
   * could terminate() interrupt a native call anyway: V8 stops JavaScript only. A thread still
   * there a deadline later is reported; one still there after RETIRE_LIMIT deadlines is stuck (in
   * JavaScript, say), and is terminated as a last resort: should that abort the process, BullMQ
   * hands its tasks to another worker, which beats leaking a thread per such task.
   */
  private expire(slot: Slot, p: Pending): void {
    if (slot.busy.get(p.request.id) !== p || this.closed) return;
    slot.busy.delete(p.request.id);
    const ms = this.settings.runTimeoutMs;
    p.reject(new AppError('INFERENCE_TIMEOUT', `model run took longer than ${ms} ms; its inference thread was restarted`, { timeoutMs: ms, version: p.request.version }));
    const i = this.slots.indexOf(slot);
    // Already retired (another of its runs passed its deadline): failing this one was all to do.
    if (i < 0) return;
    // Out of the slots: it takes no new runs; the runs it still has finish (or time out) there.
    this.slots.splice(i, 1);
    this.warn(`inference run of version ${p.request.version} passed its ${ms} ms deadline; retiring its thread and starting a new one`);
    slot.worker.postMessage({ type: 'retire' } satisfies ThreadControl);
    const late = setTimeout(() => this.warn(`a retired inference thread is still running ${ms} ms after its deadline`), ms);
    const lastResort = setTimeout(() => {
      this.warn(`a retired inference thread is still running ${RETIRE_LIMIT * ms} ms after its deadline; terminating it`);
      void slot.worker.terminate();
    }, RETIRE_LIMIT * ms);
    late.unref();
    lastResort.unref();
    slot.worker.once('exit', () => {
      clearTimeout(late);
      clearTimeout(lastResort);
    });
    this.slots.push(this.spawn());
    this.pump();
  }

  /** Hands queued runs to threads with room, the least busy first. */
  private pump(): void {
    const room = this.init.tasksPerThread ?? 1;
    while (this.queue.length) {
      let best: Slot | undefined;
      for (const slot of this.slots) if (slot.busy.size < room && (!best || slot.busy.size < best.busy.size)) best = slot;
      if (!best) return;
      const next = this.queue.shift()!;
      best.busy.set(next.request.id, next);
      this.startDeadline(best, next);
      best.worker.postMessage(next.request, transferables(Object.values(next.request.files).flat()));
    }
  }

  private submit(request: ThreadRequest, signal?: AbortSignal): Promise<ThreadResponse> {
    if (this.closed) return Promise.reject(new AppError('INTERNAL', 'pipeline pool is closed'));
    if (signal?.aborted) return Promise.reject(stopReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = () => this.stop(pending, stopReason(signal!));
      const pending: Pending = {
        request,
        resolve: (r) => (signal?.removeEventListener('abort', onAbort), resolve(r)),
        reject: (e) => (signal?.removeEventListener('abort', onAbort), reject(e)),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(pending);
      this.pump();
    });
  }

  /**
   * A run whose caller gave up (its signal aborted): a queued one is dropped; a running one is
   * asked to stop at its next stage boundary, and its caller is answered now. Its thread stays
   * busy with it until the thread answers (a model run in progress is not interrupted).
   */
  private stop(p: Pending, reason: AppError): void {
    const queued = this.queue.indexOf(p);
    if (queued >= 0) this.queue.splice(queued, 1);
    const slot = this.slots.find((s) => s.busy.get(p.request.id) === p);
    slot?.worker.postMessage({ type: 'stop', id: p.request.id, reason: reason.toJSON() } satisfies ThreadControl);
    p.reject(reason);
  }

  private static unwrap(r: ThreadResponse): ThreadResponse {
    if (r.type === 'error') throw AppError.fromJSON(r.error);
    return r;
  }

  /**
   * Runs a version's pipeline on some thread. File buffers are moved to the thread when possible.
   * `signal` stops the run (see stop()): it rejects at once with the signal's reason (an AppError)
   * or RUN_STOPPED.
   */
  async run(version: VersionId, input: Record<string, unknown>, files: PipelineFiles, signal?: AbortSignal): Promise<PipelineResult> {
    const r = PipelinePool.unwrap(await this.submit({ type: 'run', id: this.nextId++, version, input, files }, signal));
    if (r.type !== 'done') throw new AppError('INTERNAL', `unexpected thread reply ${r.type}`);
    return r.result;
  }

  /**
   * Batched model calls (inferences) and the model runs that served them (executions) over the
   * current threads: inferences / executions is the average batch size.
   */
  batchStats(): BatcherStats {
    const total: BatcherStats = { inferences: 0, executions: 0 };
    for (const s of this.slots) (total.inferences += s.batch.inferences), (total.executions += s.batch.executions);
    return total;
  }

  /**
   * Graph loads and evictions (MODEL_MEMORY_MB) and the bytes of graphs loaded now, over the
   * current threads, as of their last answers.
   */
  modelStats(): SessionCacheStats {
    const total: SessionCacheStats = { loads: 0, evictions: 0, bytes: 0, graphs: 0 };
    for (const s of this.slots) for (const k of ['loads', 'evictions', 'bytes', 'graphs'] as const) total[k] += s.memory[k];
    return total;
  }

  /** Resolves once every initial thread has loaded its warm versions; the providers in use. */
  async ready(): Promise<ExecutionProvider[]> {
    return (await Promise.all(this.readiness.map((r) => r.promise))).flat();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new AppError('INTERNAL', 'pipeline pool closed'));
    for (const s of this.slots) for (const p of s.busy.values()) clearTimeout(p.deadline);
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }
}
