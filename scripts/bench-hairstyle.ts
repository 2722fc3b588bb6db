// npm run bench -- hairstyle
// The hairstyle pipeline on the astronaut photo (512x512), CPU provider, in this process:
// per-stage medians over runs with num_outputs 4, the latency per picture, and per version.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { SessionCache } from '../src/models/sessions.ts';
import { hairstyle } from '../src/pipelines/hairstyle/pipeline.ts';
import { stats } from './bench-setup.ts';

const { median } = stats;
const RUNS = 5;
const registry = loadRegistry(path.resolve('models'));
await fetchAll(registry);
const threads = Math.max(1, os.availableParallelism() - 1);
const photo = fs.readFileSync('test/fixtures/astronaut.png');
console.log(`bench hairstyle: ${os.cpus()[0]?.model ?? 'cpu'} x${os.availableParallelism()}, cpu provider, ${threads} intra-op thread(s); 512x512 photo, num_outputs 4, median of ${RUNS} runs`);
for (const name of ['hairstyle-bisenet', 'hairstyle-selfie']) {
  const v = registry.byName(name)!;
  const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: threads, allowSpinning: false, warn: () => {} });
  const ctx = { params: v.manifest.params, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 };
  const input = { image_files: ['http://bench/a.png'], hair_color: 'blonde', hairstyle: 'Long Wave', num_outputs: 4 };
  await hairstyle.run(ctx, input, { image_files: [photo] }); // warm-up: sessions load
  const perStage = new Map<string, number[]>();
  const totals: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await hairstyle.run(ctx, input, { image_files: [photo] });
    totals.push(performance.now() - t0);
    for (const [s, ms] of r.stages) perStage.set(s, [...(perStage.get(s) ?? []), ms]);
  }
  const stages = [...perStage].map(([s, ms]) => `${s} ${median(ms).toFixed(1)}`).join(', ');
  console.log(`${name}: total ${median(totals).toFixed(0)} ms for 4 pictures = ${(median(totals) / 4).toFixed(0)} ms per picture`);
  console.log(`  stages (ms, per run; render/removal/composite/encode summed over the 4 pictures): ${stages}`);
  await sessions.releaseAll();
}
