// Sessions of one inference thread, cached per (graph sha256, provider): versions that share a graph
// (the BlazeFace detector, BiSeNet, FaceMesh, the inpainting graph ...) share one session and one
// copy of its weights. Loads are memoized as promises, so concurrent first uses share one load, and
// evicted on failure, so a later task can retry the load.
//
// Memory budget: with `budgetBytes`, the cache is an LRU over graphs. A graph's cost is its file
// size (the weights onnxruntime holds; its arena and pre-packed copies come on top, which the
// budget does not see, so set it with headroom). When a run ends above the budget, the least
// recently used graphs are released until it fits, except pinned graphs (WARM_VERSIONS) and the
// ones the current run uses. A later run that needs an evicted graph loads it again and says so.
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { AppError } from '../errors/codes.ts';
import { DynamicBatcher, type BatcherStats } from './batcher.ts';
import type { VersionId } from '../domain/version-id.ts';
import { createSession, ModelThread, type ExecutionProvider, type ModelSession } from './onnx.ts';
import type { Registry } from './registry.ts';

export interface SessionCacheOptions {
  provider: ExecutionProvider;
  intraOpThreads: number;
  allowSpinning: boolean;
  warn: (message: string) => void;
  /** Bytes of graphs this cache may hold (0 or absent: no limit). */
  budgetBytes?: number;
  /**
   * Batch the calls of versions that declare `params.batching` (their graph imported at several
   * batch sizes); worth it only where a thread runs several tasks at once. @defaultValue false
   */
  batching?: boolean;
  /**
   * The graphs to run in a thread of their own (one ModelThread for the cache), so the caller's
   * JavaScript goes on while they run (pipelines/index.ts modelThreadGraphs); the others run on
   * the caller's thread. @defaultValue none
   */
  modelThread?: (version: VersionId, graph: string) => boolean;
  /**
   * Of the graphs in the model thread, those whose caller mostly waits for them: their sessions
   * take one intra-op thread more, the core the caller's JavaScript leaves (the hairstyle's
   * drawing ends well before its BiSeNet does: 0.93x at 1 MP; the try-on's parse overlaps work
   * that does not wait, 1.01x). @defaultValue none
   */
  modelThreadSpare?: (version: VersionId, graph: string) => boolean;
}

/** A version's `params.batching`: which graph, and the batcher's limits (defaults: all sizes, 2 ms). */
interface BatchingParams {
  graph: string;
  max_batch_size?: number;
  max_queue_delay_ms?: number;
}

export interface SessionCacheStats {
  loads: number;
  evictions: number;
  /** Bytes of the graphs loaded now (their file sizes). */
  bytes: number;
  graphs: number;
}

interface Entry {
  session: Promise<ModelSession>;
  bytes: number;
  /** What loaded it, for messages: "<version name>/<graph>". */
  label: string;
}

export class SessionCache {
  /** Map order is recency: the last entry is the most recently used. */
  private readonly entries = new Map<string, Entry>();
  private readonly pinned = new Set<string>();
  private readonly evicted = new Set<string>();
  /** Graphs used since the cache was last idle (no run in progress): kept through eviction. */
  private readonly inRun = new Set<string>();
  private activeRuns = 0;
  /** The notes of the run a `get` belongs to (runs may overlap in a thread that runs several). */
  private readonly runNotes = new AsyncLocalStorage<string[]>();
  /** Per batched graph: its batcher while it is built, the batcher itself once built (read by batchStats). */
  private readonly batchers = new Map<string, Promise<DynamicBatcher> | DynamicBatcher>();
  private loads = 0;
  private evictions = 0;
  /** Where the sessions run (modelThread): made on the first load, again if it dies. */
  private thread: ModelThread | null = null;

  constructor(
    private readonly registry: Registry,
    private readonly opts: SessionCacheOptions,
  ) {}

  /** The session of one graph of a version, loading it on first use. */
  get(version: VersionId, graph: string): Promise<ModelSession> {
    const batching = this.batchingOf(version, graph);
    if (batching) return this.batcher(version, batching);
    return this.graph(version, graph);
  }

  /** The batcher of a version's batched graph, built once from its imported batch sizes. */
  private batcher(version: VersionId, p: BatchingParams): Promise<DynamicBatcher> {
    const key = `${version}:${p.graph}`;
    const built = this.batchers.get(key);
    if (built) return Promise.resolve(built);
    const v = this.version(version);
    const sizes = [1, ...Object.keys(v.manifest.graphs).flatMap((g) => (g.startsWith(`${p.graph}_b`) ? [Number(g.slice(p.graph.length + 2))] : []))].filter((n) => Number.isInteger(n) && n > 0);
    const names = sizes.map((n) => (n === 1 ? p.graph : `${p.graph}_b${n}`));
    // The batcher holds these sessions for as long as it lives: keep them out of eviction.
    for (const g of names) this.pinned.add(this.locate(version, g).key);
    const b = Promise.all(names.map((g) => this.graph(version, g))).then(async (sessions) => {
      // One run of every batch size on zeros, at load: a provider's first run at a shape does its
      // set-up (cuDNN's algorithm search on CUDA took seconds), which must not land on a task.
      const source = v.manifest.graphs[p.graph]?.source;
      const shapes = source?.type === 'npm-tfjs' ? source.input_shapes : undefined;
      if (shapes) {
        await Promise.all(
          sessions.map((session, i) =>
            session.run(Object.fromEntries(Object.entries(shapes).map(([name, dims]) => {
              const d = [sizes[i]!, ...dims.slice(1)];
              return [name, { data: new Float32Array(d.reduce((a, x) => a * x, 1)), dims: d }];
            }))),
          ),
        );
      }
      return new DynamicBatcher(new Map(sizes.map((n, i) => [n, sessions[i]!])), { maxBatchSize: p.max_batch_size ?? Math.max(...sizes), maxQueueDelayMs: p.max_queue_delay_ms ?? 2 });
    });
    this.batchers.set(key, b);
    b.then(
      (batcher) => {
        if (this.batchers.get(key) === b) this.batchers.set(key, batcher);
      },
      () => {
        if (this.batchers.get(key) === b) this.batchers.delete(key);
      },
    );
    return b;
  }

  private batchingOf(version: VersionId, graph: string): BatchingParams | null {
    if (!this.opts.batching) return null;
    const p = this.registry.get(version)?.manifest.params.batching as BatchingParams | undefined;
    return p && typeof p === 'object' && p.graph === graph ? p : null;
  }

  /** Batched calls and model runs so far, summed over this cache's batchers. */
  batchStats(): BatcherStats {
    const total: BatcherStats = { inferences: 0, executions: 0 };
    for (const b of this.batchers.values()) {
      if (!(b instanceof DynamicBatcher)) continue;
      const s = b.stats();
      total.inferences += s.inferences;
      total.executions += s.executions;
    }
    return total;
  }

  private graph(version: VersionId, graph: string): Promise<ModelSession> {
    let where: { key: string; file: string; label: string; threaded: boolean; spare: boolean };
    try {
      where = this.locate(version, graph);
    } catch (e) {
      return Promise.reject(e);
    }
    const { key, file, label, threaded, spare } = where;
    // A dead model thread took its sessions with it: they are loaded again, in a new one.
    if (this.thread && !this.thread.alive) {
      this.opts.warn('model thread gone: its graphs are loaded again');
      for (const k of [...this.entries.keys()]) if (k.endsWith(':thread')) this.entries.delete(k);
      this.thread = null;
    }
    this.inRun.add(key);
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.session;
    }
    // The file is looked at only on a miss: a hit (every model call of every task) does no I/O.
    let bytes: number;
    try {
      bytes = fs.statSync(file).size;
    } catch {
      return Promise.reject(new AppError('MODEL_UNAVAILABLE', `graph ${graph} of ${this.version(version).manifest.name} is not fetched (run: npm run models -- fetch)`));
    }
    if (this.evicted.has(key)) this.runNotes.getStore()?.push(`model memory: ${label} loaded again (evicted earlier to stay within MODEL_MEMORY_MB)`);
    this.loads++;
    const entry: Entry = { session: this.load(file, threaded, spare), bytes, label };
    this.entries.set(key, entry);
    entry.session.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.session;
  }

  /** Loads every graph of a version (start-up warm-up); `pin` keeps them out of eviction. */
  async warm(version: VersionId, pin = false): Promise<Record<string, ModelSession>> {
    const v = this.version(version);
    const names = Object.keys(v.manifest.graphs);
    if (pin) for (const g of names) this.pinned.add(this.locate(version, g).key);
    const sessions = await Promise.all(names.map((g) => this.get(version, g)));
    this.inRun.clear();
    return Object.fromEntries(names.map((g, i) => [g, sessions[i]!]));
  }

  /**
   * Brackets one pipeline run: graphs it touches are not evicted while it runs; at the end the
   * cache is brought back within the budget. Returns the run's notes (reloads after eviction).
   */
  async run<T>(fn: () => Promise<T>): Promise<{ result: T; notes: string[] }> {
    const notes: string[] = [];
    this.activeRuns++;
    try {
      return { result: await this.runNotes.run(notes, fn), notes };
    } finally {
      // Trim only when the thread is idle: overlapping runs may still use what this one touched.
      if (--this.activeRuns === 0) {
        await this.enforceBudget();
        this.inRun.clear();
      }
    }
  }

  stats(): SessionCacheStats {
    let bytes = 0;
    for (const e of this.entries.values()) bytes += e.bytes;
    return { loads: this.loads, evictions: this.evictions, bytes, graphs: this.entries.size };
  }

  async releaseAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    this.batchers.clear();
    await Promise.allSettled(all.map(async (e) => (await e.session).release()));
    const thread = this.thread;
    this.thread = null;
    await thread?.close();
  }

  /** Releases least recently used graphs (not pinned, not in the current run) until within budget. */
  private async enforceBudget(): Promise<void> {
    const budget = this.opts.budgetBytes ?? 0;
    if (budget <= 0) return;
    let total = this.stats().bytes;
    const released: Array<Promise<void>> = [];
    for (const [key, e] of [...this.entries]) {
      if (total <= budget) break;
      if (this.pinned.has(key) || this.inRun.has(key)) continue;
      this.entries.delete(key);
      this.evicted.add(key);
      this.evictions++;
      total -= e.bytes;
      released.push(e.session.then((s) => s.release()).catch(() => {}));
    }
    await Promise.all(released);
    if (total > budget) this.opts.warn(`model memory: ${(total / 2 ** 20).toFixed(0)} MB of graphs are pinned or in use, above the ${(budget / 2 ** 20).toFixed(0)} MB budget`);
  }

  private version(version: VersionId) {
    const v = this.registry.get(version);
    if (!v) throw new AppError('VERSION_NOT_FOUND', `version ${version} not found`);
    return v;
  }

  private locate(version: VersionId, graph: string): { key: string; file: string; label: string; threaded: boolean; spare: boolean } {
    const v = this.version(version);
    const spec = v.manifest.graphs[graph];
    if (!spec) throw new AppError('MODEL_UNAVAILABLE', `version ${v.manifest.name} has no graph "${graph}"`);
    // A graph in the model thread is another session than the same graph on this thread.
    const threaded = this.opts.modelThread?.(version, graph) ?? false;
    // A spare-core session is another session too (its intra-op threads differ).
    const spare = threaded && (this.opts.modelThreadSpare?.(version, graph) ?? false);
    return { key: `${spec.sha256}:${this.opts.provider}${threaded ? ':thread' : ''}${spare ? '+1' : ''}`, file: this.registry.graphPath(spec.sha256), label: `${v.manifest.name}/${graph}`, threaded, spare };
  }

  private load(file: string, threaded: boolean, spare = false): Promise<ModelSession> {
    if (threaded) this.thread ??= new ModelThread();
    return createSession(file, {
      thread: threaded ? this.thread! : undefined,
      provider: this.opts.provider,
      intraOpThreads: this.opts.intraOpThreads + (spare ? 1 : 0),
      allowSpinning: this.opts.allowSpinning,
      onFallback: this.opts.warn,
    });
  }
}
