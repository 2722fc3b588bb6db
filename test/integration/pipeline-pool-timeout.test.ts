// The per-run deadline of the inference pool, with real threads and real pipelines on the CPU
// provider: a hairstyle run (its graphs load on first use, then four pictures of the astronaut
// scaled to 2048x2048: several seconds; at 512x512 a fast machine finished it in 0.66 s) against a
// 1 s deadline fails with INFERENCE_TIMEOUT, its thread is terminated and replaced, and the same
// pool then serves a face-detection run (warm, well under a second).
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/errors/codes.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { PipelinePool } from '../../src/queue/pipeline-pool.ts';

const registry = loadRegistry(path.resolve('models'));
const face = registry.byName('face-detection-blazeface')!;
const hair = registry.byName('hairstyle-bisenet')!;
const photo = fs.readFileSync('test/fixtures/astronaut.png');
const bigPhoto = await sharp(photo).resize(2048, 2048).png({ compressionLevel: 1 }).toBuffer();
const TIMEOUT_MS = 1_000;
const warnings: string[] = [];
const pool = new PipelinePool(
  { modelsDir: path.resolve('models'), provider: 'cpu', intraOpThreads: 1, allowSpinning: false, maxPixels: 4e7, warm: [face.id], sharpConcurrency: 1 },
  1,
  (m) => warnings.push(m),
  { runTimeoutMs: TIMEOUT_MS },
);
afterAll(() => pool.close());

const detectFaces = () => pool.run(face.id, { image: 'http://fixtures/astronaut.png' }, { image: [Uint8Array.from(photo)] });

describe('inference deadline', () => {
  it('fails a run past its deadline with INFERENCE_TIMEOUT, replaces the thread, and serves the next run', async () => {
    await pool.ready();
    expect((await detectFaces()).files.length).toBeGreaterThan(0); // the thread works before

    const t0 = performance.now();
    const slow = pool.run(
      hair.id,
      { image_files: ['http://fixtures/astronaut.png'], hair_color: 'blonde', hairstyle: 'Long Wave', num_outputs: 4 },
      { image_files: [Uint8Array.from(bigPhoto)] },
    );
    const err = await slow.then(
      () => null,
      (e: unknown) => e,
    );
    const elapsed = performance.now() - t0;
    expect(isAppError(err) && err.code).toBe('INFERENCE_TIMEOUT');
    expect(isAppError(err) && err.retryable).toBe(true);
    expect(isAppError(err) && err.details).toEqual({ timeoutMs: TIMEOUT_MS, version: hair.id });
    // Answered at the deadline, not when the run would have ended.
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_500);
    expect(warnings.some((w) => w.includes('passed its 1000 ms deadline; retiring'))).toBe(true);

    // Same pool, one slot, a fresh thread: it warms the face version, then runs within the deadline.
    expect(pool.size).toBe(1);
    const next = await detectFaces();
    expect(next.files.map((f) => f.name)).toContain('faces.json');
    expect((await detectFaces()).files.length).toBe(next.files.length);
  }, 60_000);
});
