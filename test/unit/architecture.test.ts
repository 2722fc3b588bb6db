// The layering rules, checked on the source: imports point one way
// (main -> api | queue -> pipelines -> models, imaging, store -> domain, errors), and each outside
// library has one owner module.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve('src');
const files = (fs.readdirSync(SRC, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => path.join(SRC, f));
const importsOf = (file: string) =>
  [...fs.readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
const layerOf = (file: string) => path.relative(SRC, file).split(path.sep)[0]!;

const ALLOWED: Record<string, string[]> = {
  config: [],
  domain: [],
  errors: [],
  imaging: ['errors', 'domain'],
  models: ['errors', 'domain'],
  store: ['errors', 'domain'],
  pipelines: ['models', 'imaging', 'errors', 'domain'],
  queue: ['pipelines', 'models', 'imaging', 'store', 'errors', 'domain'],
  api: ['queue', 'pipelines', 'models', 'imaging', 'store', 'errors', 'domain'],
  main: ['config', 'api', 'queue', 'pipelines', 'models', 'imaging', 'store', 'errors', 'domain'],
};

const OWNERS: Record<string, string> = {
  'onnxruntime-node': 'models/onnx.ts',
  sharp: 'imaging/image.ts',
  ioredis: 'store/redis.ts',
  pino: 'main/logger.ts',
  undici: 'queue/outbound-http.ts',
};

describe('architecture', () => {
  it('every source folder is a known layer', () => {
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) expect(Object.keys(ALLOWED)).toContain(layerOf(f));
  });

  it('imports point one way', () => {
    const bad: string[] = [];
    for (const f of files) {
      const from = layerOf(f);
      for (const spec of importsOf(f).filter((s) => s.startsWith('.'))) {
        const to = layerOf(path.resolve(path.dirname(f), spec));
        if (to !== from && !ALLOWED[from]!.includes(to)) bad.push(`${path.relative(SRC, f)} -> ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('each outside library is imported by its owner module only', () => {
    const bad: string[] = [];
    for (const f of files) {
      for (const spec of importsOf(f)) {
        const owner = OWNERS[spec];
        if (owner && path.relative(SRC, f) !== owner) bad.push(`${path.relative(SRC, f)} imports ${spec}`);
        if (spec === 'bullmq' && layerOf(f) !== 'queue') bad.push(`${path.relative(SRC, f)} imports bullmq`);
      }
    }
    expect(bad).toEqual([]);
  });
});
