// npm run bench -- hairstyle
// The hairstyle pipeline in this process (CPU provider; BENCH_PROVIDER=cuda on a GPU host, see
// bench-setup.ts): on the astronaut photo (512x512) with num_outputs 4, and on a 1 MP development
// photo (s6-centre-left x1.25, 1029x1029, from face-api's sample6 via scripts/lib/dev-photos.ts)
// with one output, and with four (BiSeNet): per-stage
// medians, latency per picture, per version; then a 4.2 MP portrait with a face over the version's
// max_work_face, worked at that scale against the photo's own resolution. Stages overlap: the first picture's hair is drawn
// (render) while the models run in their thread (a model stage counts the run's own time, as the
// thread reports it), so the stages sum to more than the total.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { SessionCache } from '../src/models/sessions.ts';
import { hairstyle } from '../src/pipelines/hairstyle/pipeline.ts';
import { benchPhotos, benchSessionOptions, stats, warmUp } from './bench-setup.ts';
import { modelThreadGraphs, modelThreadSpareGraphs } from '../src/pipelines/index.ts';

const { median } = stats;
const RUNS = 5, WARMUP = 3;
const registry = loadRegistry(path.resolve('models'));
await fetchAll(registry);
const sessionOptions = benchSessionOptions();
const astronaut = fs.readFileSync('test/fixtures/astronaut.png');
const dev = (await benchPhotos()).hair;
console.log(`bench hairstyle: ${os.cpus()[0]?.model ?? 'cpu'} x${os.availableParallelism()}, ${sessionOptions.provider} provider, ${sessionOptions.intraOpThreads} intra-op thread(s), load average ${os.loadavg()[0]!.toFixed(1)}; median of ${RUNS} runs after ${WARMUP} warm-up runs`);
const cases = [
  { name: 'hairstyle-bisenet', photo: astronaut, what: 'astronaut 512x512', outputs: 4 },
  { name: 'hairstyle-selfie', photo: astronaut, what: 'astronaut 512x512', outputs: 4 },
  { name: 'hairstyle-bisenet', photo: dev, what: 'dev photo 1029x1029 (1.06 MP)', outputs: 1 },
  { name: 'hairstyle-selfie', photo: dev, what: 'dev photo 1029x1029 (1.06 MP)', outputs: 1 },
  // The bound is per output picture: with 4 outputs the analysis (detection, landmarks,
  // parsing, segmentation) is shared, and what each picture adds is render, removal, composite, encode.
  { name: 'hairstyle-bisenet', photo: dev, what: 'dev photo 1029x1029 (1.06 MP)', outputs: 4 },
];
for (const { name, photo, what, outputs } of cases) {
  const v = registry.byName(name)!;
  const sessions = new SessionCache(registry, { ...sessionOptions, modelThread: modelThreadGraphs(registry), modelThreadSpare: modelThreadSpareGraphs(registry) });
  const ctx = { params: v.manifest.params, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 };
  const input = { image_files: ['http://bench/a.png'], hair_color: 'blonde', hairstyle: 'Long Wave', num_outputs: outputs };
  // (The code a 1 MP photo's long hair past the parser's crop takes is compiled in the warm-up.)
  const warm = await warmUp(WARMUP, () => hairstyle.run(ctx, input, { image_files: [photo] }));
  const perStage = new Map<string, number[]>();
  const totals: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await hairstyle.run(ctx, input, { image_files: [photo] });
    totals.push(performance.now() - t0);
    for (const [s, ms] of r.stages) perStage.set(s, [...(perStage.get(s) ?? []), ms]);
  }
  const stages = [...perStage].map(([s, ms]) => `${s} ${median(ms).toFixed(1)}`).join(', ');
  console.log(`${name}, ${what}: total ${median(totals).toFixed(0)} ms for ${outputs} picture(s) = ${(median(totals) / outputs).toFixed(0)} ms per picture (warm-up runs ${warm.map((ms) => ms.toFixed(0)).join(', ')} ms)`);
  console.log(`  stages (ms, per run; render/removal/composite/encode summed over the pictures; render overlaps the models, so they sum to more than the total): ${stages}`);
  await sessions.releaseAll();
}

// A portrait whose face is larger than the version's max_work_face (s6-centre-left enlarged 2.5
// times: 2058 px square, the face ~620 px wide, as a phone portrait): worked at the smaller scale
// (the version as shipped) against the same version at the photo's own resolution (max_work_face
// out of reach), the two alternated run by run on one warm session; medians and their ratio.
{
  const { hairPhoto } = await import('./lib/dev-photos.ts');
  const portrait = (await hairPhoto('s6-centre-left', { scale: 2.5 })).bytes;
  const v = registry.byName('hairstyle-bisenet')!;
  const sessions = new SessionCache(registry, { ...sessionOptions, modelThread: modelThreadGraphs(registry), modelThreadSpare: modelThreadSpareGraphs(registry) });
  const input = { image_files: ['http://bench/p.jpg'], hair_color: 'blonde', hairstyle: 'Buzz Cut', num_outputs: 1 };
  const ctxs = {
    scaled: { params: v.manifest.params, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 },
    full: { params: { ...v.manifest.params, max_work_face: 1e9 }, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 },
  };
  const times: Record<keyof typeof ctxs, number[]> = { scaled: [], full: [] };
  for (let i = 0; i < 4; i++) {
    for (const k of ['scaled', 'full'] as const) {
      const t0 = performance.now();
      await hairstyle.run(ctxs[k], input, { image_files: [portrait] });
      // The first pair warms up.
      if (i > 0) times[k].push(performance.now() - t0);
    }
  }
  const [a, b] = [median(times.scaled), median(times.full)];
  console.log(`hairstyle-bisenet, portrait 2058x2058 (4.2 MP, face ~620 px), Buzz Cut, 1 picture: worked at the face's max_work_face scale ${a.toFixed(0)} ms, at the photo's own resolution ${b.toFixed(0)} ms (medians of 3 alternated runs; ratio ${(a / b).toFixed(2)})`);
  await sessions.releaseAll();
}
