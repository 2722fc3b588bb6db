// Dynamic batching of the face detector, on the real graphs imported at batch 1 to 64: calls
// batched together give what each gives alone (batch-N graphs against the batch-1 graph), split
// into the largest imported sizes; and a pool whose thread runs several tasks at once batches
// their model calls while every task's output stays what it is unbatched.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { letterboxToTensor, decodeImage } from '../../src/imaging/image.ts';
import { DynamicBatcher } from '../../src/models/batcher.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { PipelinePool } from '../../src/queue/pipeline-pool.ts';

const registry = loadRegistry(path.resolve('models'));
const version = registry.byName('face-detection-blazeface-batched')!;
const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: () => {} });
afterAll(() => sessions.releaseAll());

const photos = async (n: number) => {
  const base = fs.readFileSync('test/fixtures/group-four.jpg');
  // Different inputs per call: crops and flips of one photo.
  return Promise.all(Array.from({ length: n }, (_, i) => sharp(base).extract({ left: (i * 13) % 200, top: (i * 7) % 100, width: 700, height: 460 }).flop(i % 2 === 1).png().toBuffer()));
};

describe('dynamic batching', () => {
  it('37 calls batched as 32 + 4 + 1 give what each gives alone', async () => {
    const sizes = [1, 2, 4, 8, 16, 32, 64];
    const variants = new Map(await Promise.all(sizes.map(async (n) => [n, await sessions.get(version.id, n === 1 ? 'detector' : `detector_b${n}`)] as const)));
    const batcher = new DynamicBatcher(variants, { maxBatchSize: 64, maxQueueDelayMs: 50 });
    const single = variants.get(1)!;
    const inputs = await Promise.all(
      (await photos(37)).map(async (p) => {
        const { tensor } = await letterboxToTensor(await decodeImage(p, { maxPixels: 4e7 }), 256, [-1, 1]);
        return { input: { data: tensor, dims: [1, 256, 256, 3] } };
      }),
    );
    const batched = await Promise.all(inputs.map((f) => batcher.run(f)));
    expect(batcher.stats()).toEqual({ inferences: 37, executions: 3 });
    let maxDiff = 0;
    for (const [i, f] of inputs.entries()) {
      const alone = await single.run(f);
      for (const name of single.outputNames) {
        expect(batched[i]![name]!.dims).toEqual(alone[name]!.dims);
        const a = alone[name]!.data, b = batched[i]![name]!.data;
        for (let k = 0; k < a.length; k++) maxDiff = Math.max(maxDiff, Math.abs(a[k]! - b[k]!));
      }
    }
    console.log(`max |batched - alone| over 37 calls: ${maxDiff.toExponential(2)}`);
    expect(maxDiff).toBeLessThan(1e-3);
  }, 120_000);

  it('a thread running 12 tasks at once batches their detector calls; each task outputs what it does alone', async () => {
    const inputs = await photos(12);
    const run = async (tasksPerThread: number) => {
      const pool = new PipelinePool({ modelsDir: path.resolve('models'), provider: 'cpu', intraOpThreads: 1, allowSpinning: false, maxPixels: 4e7, warm: [version.id], tasksPerThread }, 1);
      try {
        await pool.ready();
        const results = await Promise.all(inputs.map((p) => pool.run(version.id, { image: 'http://x/a' }, { image: [p] })));
        return { faces: results.map((r) => JSON.parse(Buffer.from(r.files[0]!.data).toString()).faces), stats: pool.batchStats() };
      } finally {
        await pool.close();
      }
    };
    const alone = await run(1);
    const together = await run(12);
    expect(alone.stats).toEqual({ inferences: 0, executions: 0 });
    expect(together.stats.inferences).toBe(12);
    expect(together.stats.executions).toBeLessThan(12);
    expect(together.faces.map((f: unknown[]) => f.length)).toEqual(alone.faces.map((f: unknown[]) => f.length));
    expect(together.faces.flat().length).toBeGreaterThan(12);
    for (const [i, faces] of together.faces.entries()) {
      for (const [j, face] of faces.entries()) {
        const ref = alone.faces[i][j];
        expect(Math.abs(face.box.x - ref.box.x) + Math.abs(face.box.y - ref.box.y)).toBeLessThan(0.5);
        expect(Math.abs(face.score - ref.score)).toBeLessThan(1e-3);
      }
    }
  }, 120_000);
});
