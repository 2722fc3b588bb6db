// Sessions in a model thread (models/onnx.ts ModelThread): real graphs run in a thread of their own
// give what they give on the calling thread, leave the caller's JavaScript running meanwhile, and a
// thread that is gone fails its calls by name; the session cache then loads into a new one.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { createSession, ModelThread, type ModelSession } from '../../src/models/onnx.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { modelThreadGraphs, modelThreadSpareGraphs } from '../../src/pipelines/index.ts';
import { RUN_MS, stageTimer } from '../../src/domain/stage-timer.ts';

const registry = loadRegistry(path.resolve('models'));
const graphOf = (name: string, graph: string) => registry.graphPath(registry.byName(name)!.manifest.graphs[graph]!.sha256);
const opts = { provider: 'cpu' as const, intraOpThreads: 1, allowSpinning: false };

/** The astronaut at S x S, RGB scaled to [-1, 1] (the parser's input). */
async function astronaut(S: number): Promise<Float32Array> {
  const rgb = await sharp(fs.readFileSync('test/fixtures/astronaut.png')).removeAlpha().resize(S, S, { fit: 'fill' }).raw().toBuffer();
  return Float32Array.from(rgb, (v) => v / 127.5 - 1);
}

/** Turns of this thread's event loop while `s` (BiSeNet) parses the astronaut. */
async function loopTurnsDuringParse(s: ModelSession): Promise<number> {
  const x = await astronaut(512);
  let n = 0;
  let on = true;
  const tick = () => {
    n++;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  await s.runAny({ [s.inputNames[0]!]: { data: x, dims: [1, 512, 512, 3] } });
  on = false;
  return n;
}

const thread = new ModelThread();
afterAll(() => thread.close());

describe('model thread', () => {
  it('runs a float graph (BlazeFace) and an int64-output graph (BiSeNet) to the same outputs as the calling thread', async () => {
    for (const [name, graph, S] of [
      ['face-detection-blazeface', 'detector', 256],
      ['face-parsing-bisenet', 'parser', 512],
    ] as const) {
      const here = await createSession(graphOf(name, graph), opts);
      const there = await createSession(graphOf(name, graph), { ...opts, thread });
      expect(there.inputNames).toEqual(here.inputNames);
      expect(there.outputNames).toEqual(here.outputNames);
      const x = S === 512 ? await astronaut(S) : (await astronaut(S)).map((v) => (v + 1) / 2);
      const feeds = { [here.inputNames[0]!]: { data: x, dims: [1, S, S, 3] } };
      const a = await here.runAny(feeds);
      const b = await there.runAny(feeds);
      // The caller's input is left as it was (copied to the thread, not moved).
      expect(feeds[here.inputNames[0]!]!.data.length).toBe(S * S * 3);
      for (const out of here.outputNames) {
        expect(b[out]!.dims).toEqual(a[out]!.dims);
        expect(b[out]!.data.constructor).toBe(a[out]!.data.constructor);
        expect(Buffer.from(b[out]!.data.buffer, b[out]!.data.byteOffset, b[out]!.data.byteLength).equals(Buffer.from(a[out]!.data.buffer, a[out]!.data.byteOffset, a[out]!.data.byteLength))).toBe(true);
      }
      await here.release();
      await there.release();
    }
  });

  it("leaves the caller's event loop running while the model runs, where the calling thread's own session blocks it", async () => {
    const file = graphOf('face-parsing-bisenet', 'parser');
    const here = await createSession(file, opts);
    const there = await createSession(file, { ...opts, thread });
    const blocked = await loopTurnsDuringParse(here);
    const free = await loopTurnsDuringParse(there);
    // On the calling thread the run starts on the loop's next turn and holds it to the end: a tick
    // or two. In the thread, BiSeNet's hundreds of milliseconds are turns of the caller's loop.
    expect(blocked).toBeLessThanOrEqual(3);
    expect(free).toBeGreaterThan(50);
    await here.release();
    await there.release();
  });

  it("reports a run's own time, which the stage timer counts instead of the caller's wait", async () => {
    const s = await createSession(graphOf('face-detection-blazeface', 'detector'), { ...opts, thread });
    const t = stageTimer();
    const feeds = { [s.inputNames[0]!]: { data: new Float32Array(256 * 256 * 3), dims: [1, 256, 256, 3] } };
    const pending = t.infer('inference', () => s.run(feeds));
    // This thread is busy while the model runs in its own: the run's end waits for it.
    const until = performance.now() + 300;
    while (performance.now() < until);
    const out = await pending;
    const own = (out as { [RUN_MS]?: number })[RUN_MS];
    expect(typeof own).toBe('number');
    expect(own).toBeGreaterThan(0);
    expect(t.stages).toEqual([['inference', own]]);
    expect(t.predictMs).toBe(own);
    // Not an output: the outputs are the graph's.
    expect(Object.keys(out).sort()).toEqual([...s.outputNames].sort());
    await s.release();
  });

  it('fails the calls of a closed thread by name', async () => {
    const t = new ModelThread();
    const s = await createSession(graphOf('face-detection-blazeface', 'detector'), { ...opts, thread: t });
    await t.close();
    expect(t.alive).toBe(false);
    await expect(s.run({ [s.inputNames[0]!]: { data: new Float32Array(256 * 256 * 3), dims: [1, 256, 256, 3] } })).rejects.toThrow(/model thread gone: closed/);
  });

  it('a session cache whose model thread died loads its graphs again in a new one', async () => {
    const warnings: string[] = [];
    const cache = new SessionCache(registry, { ...opts, warn: (m) => warnings.push(m), modelThread: () => true });
    const v = registry.byName('face-detection-blazeface')!;
    const feeds = (s: { inputNames: readonly string[] }) => ({ [s.inputNames[0]!]: { data: new Float32Array(256 * 256 * 3), dims: [1, 256, 256, 3] } });
    const s1 = await cache.get(v.id, 'detector');
    const before = await s1.run(feeds(s1));
    // The thread ends as a crash would end it (the worker gone, not closed by its owner).
    await (cache as unknown as { thread: { worker: { terminate(): Promise<number> } } }).thread.worker.terminate();
    await expect(s1.run(feeds(s1))).rejects.toThrow(/model thread gone: the model thread exited/);
    const s2 = await cache.get(v.id, 'detector');
    expect(s2).not.toBe(s1);
    const after = await s2.run(feeds(s2));
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(warnings).toEqual(['model thread gone: its graphs are loaded again']);
    expect(cache.stats().loads).toBe(2);
    await cache.releaseAll();
  });

  it("runs in a model thread just the graphs a pipeline overlaps: the hairstyle's person mask and BiSeNet, the try-on's BiSeNet", async () => {
    const inThread = modelThreadGraphs(registry);
    const hair = registry.byName('hairstyle-bisenet')!.id;
    expect(inThread(hair, 'parser')).toBe(true);
    expect(inThread(hair, 'segmenter')).toBe(true);
    expect(inThread(hair, 'landmarks')).toBe(false);
    // The try-on parses the target's face while its landmarks and instance are made.
    expect(inThread(registry.byName('tryon-classic')!.id, 'parser')).toBe(true);
    expect(inThread(registry.byName('tryon-classic')!.id, 'segmenter')).toBe(false);
    // The hairstyle waits for its model thread (its drawing ends first): those sessions take a
    // spare core; the try-on's parse overlaps work that does not wait.
    const spare = modelThreadSpareGraphs(registry);
    expect(spare(hair, 'parser')).toBe(true);
    expect(spare(registry.byName('tryon-classic')!.id, 'parser')).toBe(false);
    expect(inThread(registry.byName('face-parsing-bisenet')!.id, 'parser')).toBe(false);
    // Through a session cache: the hairstyle's BiSeNet leaves the caller's loop running.
    const cache = new SessionCache(registry, { ...opts, warn: () => {}, modelThread: inThread });
    expect(await loopTurnsDuringParse(await cache.get(hair, 'parser'))).toBeGreaterThan(50);
    await cache.releaseAll();
  });
});
