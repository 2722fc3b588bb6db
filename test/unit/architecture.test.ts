// The layering rules, checked on the source: imports point one way
// (main -> api | queue -> pipelines -> steps -> models, imaging, store -> domain, errors), build
// tooling is imported by nothing at run time, no pipeline imports another pipeline, there are no
// import cycles, and each outside library has one owner module. (What a process really loads is
// checked on the running process: test/e2e/api-process-modules.redis.test.ts.)
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, layerOf, SRC } from '../../scripts/lib/import-graph.ts';

const graph = importGraph();
const files = [...graph.keys()];
const rel = (f: string) => path.relative(SRC, f);

const ALLOWED: Record<string, string[]> = {
  config: [],
  domain: [],
  errors: [],
  imaging: ['errors', 'domain'],
  models: ['errors', 'domain'],
  store: ['errors', 'domain'],
  steps: ['models', 'imaging', 'errors', 'domain'],
  pipelines: ['steps', 'models', 'imaging', 'errors', 'domain'],
  // Build-time only (scripts and tests import it); no run-time layer lists it.
  tooling: ['steps', 'models', 'imaging', 'errors', 'domain'],
  queue: ['pipelines', 'models', 'imaging', 'store', 'errors', 'domain'],
  api: ['queue', 'pipelines', 'models', 'imaging', 'store', 'errors', 'domain'],
  main: ['config', 'api', 'queue', 'pipelines', 'models', 'imaging', 'store', 'errors', 'domain'],
};

const OWNERS: Record<string, string> = {
  'onnxruntime-node': 'models/onnx.ts',
  'onnx-proto': 'tooling/onnx-builder.ts',
  sharp: 'imaging/image.ts',
  ioredis: 'store/redis.ts',
  pino: 'main/logger.ts',
  undici: 'queue/outbound-http.ts',
  'ipaddr.js': 'domain/addresses.ts',
  '@aws-sdk/client-s3': 'store/s3-blob-store.ts',
  'prom-client': 'domain/metrics.ts',
};

describe('architecture', () => {
  it('every source folder is a known layer', () => {
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) expect(Object.keys(ALLOWED)).toContain(layerOf(f));
  });

  it('imports point one way', () => {
    const bad: string[] = [];
    for (const [f, deps] of graph) {
      const from = layerOf(f);
      for (const d of deps.local) {
        const to = layerOf(d.file);
        if (to !== from && !ALLOWED[from]!.includes(to)) bad.push(`${rel(f)} -> ${rel(d.file)}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('no pipeline imports another pipeline (shared work lives in steps/)', () => {
    const bad: string[] = [];
    const pipelineOf = (f: string) => {
      const parts = rel(f).split(path.sep);
      return parts[0] === 'pipelines' && parts.length > 2 ? parts[1] : null;
    };
    for (const [f, deps] of graph) {
      const mine = pipelineOf(f);
      if (!mine) continue;
      for (const d of deps.local) {
        const theirs = pipelineOf(d.file);
        if (theirs && theirs !== mine) bad.push(`${rel(f)} -> ${rel(d.file)}`);
      }
    }
    expect(bad).toEqual([]);
    // The table files at pipelines/ root may import every pipeline; nothing in a step may.
    expect([...graph].filter(([f, d]) => layerOf(f) === 'steps' && d.local.some((x) => layerOf(x.file) === 'pipelines')).map(([f]) => rel(f))).toEqual([]);
  });

  it('no import cycles among run-time imports (type-only imports excepted)', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'active' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, 'active');
      stack.push(f);
      for (const d of graph.get(f)?.local ?? []) {
        if (d.typeOnly) continue;
        const s = state.get(d.file);
        if (s === 'active') cycles.push([...stack.slice(stack.indexOf(d.file)), d.file].map(rel).join(' -> '));
        else if (!s) visit(d.file);
      }
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it('each outside library is imported by its owner module only', () => {
    const bad: string[] = [];
    for (const [f, deps] of graph) {
      for (const spec of deps.packages) {
        const owner = OWNERS[spec];
        if (owner && rel(f) !== owner) bad.push(`${rel(f)} imports ${spec}`);
        if (spec === 'bullmq' && layerOf(f) !== 'queue') bad.push(`${rel(f)} imports bullmq`);
      }
    }
    expect(bad).toEqual([]);
    // The owners exist (a renamed owner must not make this check vacuous).
    for (const owner of Object.values(OWNERS)) expect(fs.existsSync(path.join(SRC, owner)), owner).toBe(true);
  });
});
