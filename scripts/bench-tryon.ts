// npm run bench -- tryon
// The try-on pipeline on the standing person (360x962, 0.35 MP) and on a 1 MP development photo
// (s6-red-dress: 732x1366 from face-api's sample6, fetched by test/helpers/dev-photos.ts) with the
// project's garments, CPU provider (BENCH_PROVIDER=cuda on a GPU host, see bench-setup.ts):
// per-stage medians and the latency per picture, per clothes type; then a 5.5 MP photo over the
// version's max_work_pixels, worked on scaled down against its own resolution.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClothesType } from '../src/domain/job.ts';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { SessionCache } from '../src/models/sessions.ts';
import { tryon } from '../src/pipelines/tryon/pipeline.ts';
import { dress, trousers, tshirt } from '../test/helpers/garments.ts';
import { benchPhotos, benchSessionOptions, stats, warmUp } from './bench-setup.ts';
import { modelThreadGraphs } from '../src/pipelines/index.ts';

const { median } = stats;
const RUNS = 5, WARMUP = 3;
const registry = loadRegistry(path.resolve('models'));
await fetchAll(registry);
const v = registry.byName('tryon-classic')!;
const sessionOptions = benchSessionOptions();
const sessions = new SessionCache(registry, { ...sessionOptions, modelThread: modelThreadGraphs(registry) });
const ctx = { params: v.manifest.params, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 };
const PEOPLE: Array<[string, Buffer]> = [
  ['person 360x962', fs.readFileSync('test/fixtures/person-standing.jpg')],
  ['1 MP photo 732x1366', (await benchPhotos()).tryon],
];
console.log(`bench tryon: ${os.cpus()[0]?.model ?? 'cpu'} x${os.availableParallelism()}, ${sessionOptions.provider} provider, ${sessionOptions.intraOpThreads} intra-op thread(s); median of ${RUNS} runs after ${WARMUP} warm-up runs (one picture each)`);
for (const [what, person] of PEOPLE) {
  for (const [type, garment] of [['upper_body', await tshirt()], ['lower_body', await trousers()], ['dresses', await dress()]] as Array<[ClothesType, Buffer]>) {
    const input = { clothes_image: 'http://bench/g', custom_model: 'http://bench/p', clothes_type: type };
    const warm = await warmUp(WARMUP, () => tryon.run(ctx, input, { clothes_image: [garment], custom_model: [person] }));
    const totals: number[] = [];
    const perStage = new Map<string, number[]>();
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const r = await tryon.run(ctx, input, { clothes_image: [garment], custom_model: [person] });
      totals.push(performance.now() - t0);
      for (const [s, ms] of r.stages) perStage.set(s, [...(perStage.get(s) ?? []), ms]);
    }
    console.log(`${what} ${type}: ${median(totals).toFixed(0)} ms per picture; stages: ${[...perStage].map(([s, ms]) => `${s} ${median(ms).toFixed(0)}`).join(', ')} (warm-up runs ${warm.map((ms) => ms.toFixed(0)).join(', ')} ms)`);
  }
}
// A phone-sized photo (the standing person enlarged to 1440x3848, 5.5 MP) over the version's
// max_work_pixels: worked on scaled down (the version as shipped) against the same version at the
// photo's own resolution (max_work_pixels out of reach), alternated run by run; medians and ratio.
{
  const sharp = (await import('sharp')).default;
  const large = await sharp(fs.readFileSync('test/fixtures/person-standing.jpg')).resize(1440).jpeg({ quality: 92 }).toBuffer();
  const garment = await tshirt();
  const input = { clothes_image: 'http://bench/g', custom_model: 'http://bench/p', clothes_type: 'upper_body' as ClothesType };
  const ctxs = { scaled: ctx, full: { ...ctx, params: { ...v.manifest.params, max_work_pixels: 1e9 } } };
  const times: Record<keyof typeof ctxs, number[]> = { scaled: [], full: [] };
  for (let i = 0; i < 4; i++) {
    for (const k of ['scaled', 'full'] as const) {
      const t0 = performance.now();
      await tryon.run(ctxs[k], input, { clothes_image: [garment], custom_model: [large] });
      // The first pair warms up.
      if (i > 0) times[k].push(performance.now() - t0);
    }
  }
  const [a, b] = [median(times.scaled), median(times.full)];
  console.log(`phone-sized photo 1440x3848 (5.5 MP) upper_body: worked at max_work_pixels ${a.toFixed(0)} ms, at the photo's own resolution ${b.toFixed(0)} ms (medians of 3 alternated runs; ratio ${(a / b).toFixed(2)})`);
}
await sessions.releaseAll();
