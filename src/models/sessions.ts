// Sessions cached per (version, graph, provider), memoized as promises so concurrent first uses
// share one load, and evicted on failure so a later task can retry the load.
import fs from 'node:fs';
import { AppError } from '../errors/codes.ts';
import type { VersionId } from '../domain/version-id.ts';
import { createSession, type ExecutionProvider, type ModelSession } from './onnx.ts';
import type { Registry } from './registry.ts';

export interface SessionCacheOptions {
  provider: ExecutionProvider;
  intraOpThreads: number;
  allowSpinning: boolean;
  warn: (message: string) => void;
}

export class SessionCache {
  private readonly sessions = new Map<string, Promise<ModelSession>>();

  constructor(
    private readonly registry: Registry,
    private readonly opts: SessionCacheOptions,
  ) {}

  /** The session of one graph of a version, loading it on first use. */
  get(version: VersionId, graph: string): Promise<ModelSession> {
    const key = `${version}:${graph}:${this.opts.provider}`;
    let p = this.sessions.get(key);
    if (!p) {
      p = this.load(version, graph);
      this.sessions.set(key, p);
      p.catch(() => this.sessions.delete(key));
    }
    return p;
  }

  /** Loads every graph of a version (start-up warm-up). */
  async warm(version: VersionId): Promise<Record<string, ModelSession>> {
    const v = this.registry.get(version);
    if (!v) throw new AppError('VERSION_NOT_FOUND', `version ${version} not found`);
    const names = Object.keys(v.manifest.graphs);
    const sessions = await Promise.all(names.map((g) => this.get(version, g)));
    return Object.fromEntries(names.map((g, i) => [g, sessions[i]!]));
  }

  async releaseAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map(async (p) => (await p).release()));
  }

  private async load(version: VersionId, graph: string): Promise<ModelSession> {
    const v = this.registry.get(version);
    if (!v) throw new AppError('VERSION_NOT_FOUND', `version ${version} not found`);
    const spec = v.manifest.graphs[graph];
    if (!spec) throw new AppError('MODEL_UNAVAILABLE', `version ${v.manifest.name} has no graph "${graph}"`);
    const file = this.registry.graphPath(spec.sha256);
    if (!fs.existsSync(file)) {
      throw new AppError('MODEL_UNAVAILABLE', `graph ${graph} of ${v.manifest.name} is not fetched (run: npm run models -- fetch)`);
    }
    return createSession(file, {
      provider: this.opts.provider,
      intraOpThreads: this.opts.intraOpThreads,
      allowSpinning: this.opts.allowSpinning,
      onFallback: this.opts.warn,
    });
  }
}
