// A fixed pool of inference threads (queue/pipeline-thread.ts). The worker process's main thread
// only does I/O (BullMQ, Redis lock renewal, downloads, blob writes); every pipeline runs here.
// A thread that dies fails its in-flight request with a retryable error and is replaced.
import { Worker } from 'node:worker_threads';
import { AppError, type SerializedAppError } from '../errors/codes.ts';
import { ensureSharpLoadedInMainThread } from '../imaging/image.ts';
import type { VersionId } from '../domain/version-id.ts';
import type { ExecutionProvider } from '../models/onnx.ts';
import type { PipelineResult } from '../pipelines/types.ts';

export interface ThreadInit {
  modelsDir: string;
  provider: ExecutionProvider;
  intraOpThreads: number;
  allowSpinning: boolean;
  maxPixels: number;
  /** Versions whose sessions each thread loads at start, before it takes requests. */
  warm: VersionId[];
}

export type ThreadRequest = { type: 'run'; id: number; version: VersionId; input: Record<string, unknown>; files: Record<string, Uint8Array> };

export type ThreadResponse =
  | { type: 'done'; id: number; result: PipelineResult }
  | { type: 'error'; id: number; error: SerializedAppError }
  | { type: 'ready'; providers: ExecutionProvider[] }
  | { type: 'ready-error'; error: SerializedAppError }
  | { type: 'warn'; message: string };

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
}

interface Slot {
  worker: Worker;
  busy: Pending | null;
  ready: boolean;
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
  ) {
    // sharp's shared libraries must be loaded by the main thread before threads use them
    // (sharp docs, "worker threads"), or the process may crash when a thread exits.
    ensureSharpLoadedInMainThread();
    for (let i = 0; i < slotsWanted; i++) this.slots.push(this.spawn());
  }

  get size(): number {
    return this.slots.length;
  }

  private spawn(): Slot {
    const worker = IS_TS ? new Worker(BOOT_TS, { eval: true, workerData: this.init }) : new Worker(THREAD_URL, { workerData: this.init });
    const slot: Slot = { worker, busy: null, ready: false };
    const readiness = {} as Readiness;
    readiness.promise = new Promise((resolve, reject) => Object.assign(readiness, { resolve, reject }));
    readiness.promise.catch(() => {});
    if (this.readiness.length < this.slotsWanted) this.readiness.push(readiness);
    worker.on('message', (msg: ThreadResponse) => {
      if (msg.type === 'warn') return this.warn(msg.message);
      if (msg.type === 'ready') {
        slot.ready = true;
        return readiness.resolve(msg.providers);
      }
      if (msg.type === 'ready-error') return readiness.reject(AppError.fromJSON(msg.error));
      if (!slot.busy || msg.id !== slot.busy.request.id) return;
      const p = slot.busy;
      slot.busy = null;
      p?.resolve(msg);
      this.pump();
    });
    worker.on('error', (e) => this.onExit(slot, e, readiness));
    worker.on('exit', (code) => this.onExit(slot, new Error(`inference thread exited with code ${code}`), readiness));
    return slot;
  }

  private onExit(slot: Slot, e: Error, readiness: Readiness): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    const failure = new AppError('INTERNAL', `inference thread failed: ${e.message}`);
    readiness.reject(failure);
    const p = slot.busy;
    slot.busy = null;
    p?.reject(failure);
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

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const next = this.queue.shift();
      if (!next) return;
      slot.busy = next;
      slot.worker.postMessage(next.request, transferables(Object.values(next.request.files)));
    }
  }

  private submit(request: ThreadRequest): Promise<ThreadResponse> {
    if (this.closed) return Promise.reject(new AppError('INTERNAL', 'pipeline pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.pump();
    });
  }

  private static unwrap(r: ThreadResponse): ThreadResponse {
    if (r.type === 'error') throw AppError.fromJSON(r.error);
    return r;
  }

  /** Runs a version's pipeline on some thread. File buffers are moved to the thread when possible. */
  async run(version: VersionId, input: Record<string, unknown>, files: Record<string, Uint8Array>): Promise<PipelineResult> {
    const r = PipelinePool.unwrap(await this.submit({ type: 'run', id: this.nextId++, version, input, files }));
    if (r.type !== 'done') throw new AppError('INTERNAL', `unexpected thread reply ${r.type}`);
    return r.result;
  }

  /** Resolves once every initial thread has loaded its warm versions; the providers in use. */
  async ready(): Promise<ExecutionProvider[]> {
    return (await Promise.all(this.readiness.map((r) => r.promise))).flat();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new AppError('INTERNAL', 'pipeline pool closed'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }
}
