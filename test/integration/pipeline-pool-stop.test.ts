// Stopping a run (Cancel-After deadline, or a hand-back) with real threads and real pipelines on
// the CPU provider: the caller is answered at once with the stop reason, the thread stops the run at
// its next stage boundary and answers, and it then serves the next run (it is not retired or replaced).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError, isAppError } from '../../src/errors/codes.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { PipelinePool } from '../../src/queue/pipeline-pool.ts';

const registry = loadRegistry(path.resolve('models'));
const face = registry.byName('face-detection-blazeface')!;
const hair = registry.byName('hairstyle-bisenet')!;
const photo = fs.readFileSync('test/fixtures/astronaut.png');
const warnings: string[] = [];
const pool = new PipelinePool(
  { modelsDir: path.resolve('models'), provider: 'cpu', intraOpThreads: 1, allowSpinning: false, maxPixels: 4e7, warm: [face.id], sharpConcurrency: 1 },
  1,
  (m) => warnings.push(m),
  { runTimeoutMs: 60_000 },
);
afterAll(() => pool.close());

const detectFaces = () => pool.run(face.id, { image: 'http://fixtures/astronaut.png' }, { image: [Uint8Array.from(photo)] });
const hairstyle = (signal: AbortSignal) =>
  pool.run(hair.id, { image_files: ['http://fixtures/astronaut.png'], hair_color: 'blonde', hairstyle: 'Long Wave', num_outputs: 4 }, { image_files: [Uint8Array.from(photo)] }, signal);

describe('stopping a run', () => {
  it('answers the caller with the reason at once; the thread stops at a stage boundary and serves the next run', async () => {
    await pool.ready();
    const stop = new AbortController();
    const running = hairstyle(stop.signal);
    stop.abort(new AppError('RUN_STOPPED', 'the task reached its Cancel-After deadline'));
    const err = await running.then(() => null, (e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('RUN_STOPPED');
    expect(isAppError(err) && err.message).toBe('the task reached its Cancel-After deadline');
    // The next run waits for the thread to let go of the stopped one, then runs there.
    expect((await detectFaces()).files.map((f) => f.name)).toContain('faces.json');
    expect(pool.size).toBe(1);
    expect(warnings.filter((w) => /retir|died/.test(w))).toEqual([]);
  }, 60_000);

  it('a run stopped before it started is never run', async () => {
    const stop = new AbortController();
    stop.abort();
    const err = await hairstyle(stop.signal).then(() => null, (e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('RUN_STOPPED');
    expect((await detectFaces()).files.length).toBeGreaterThan(0);
  }, 60_000);
});
