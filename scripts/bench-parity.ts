// npm run bench -- parity <provider>
// Picture parity of a GPU node: the hairstyle (both versions) and try-on (three clothes types)
// pictures the benches draw, once with every graph on the cpu provider and once on <provider>
// (cuda or webgpu), compared pixel by pixel: mean absolute difference, the share of pixels that
// differ by more than 30 levels in a channel, and the largest difference. The models' outputs
// differ in their last digits between providers (`npm run bench -- gpu`); this shows what that
// does to the pictures a user gets, where a label or a mask's threshold flips. Every session must
// open on <provider> itself: a fallback to cpu is an error (bench-setup.ts), so a cuda row is a
// cuda row. PNG outputs, one picture a job, the same photos and garments as the benches.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { SessionCache } from '../src/models/sessions.ts';
import { hairstyle } from '../src/pipelines/hairstyle/pipeline.ts';
import { tryon } from '../src/pipelines/tryon/pipeline.ts';
import { decodeImage, type RgbImage } from '../src/imaging/image.ts';
import { modelThreadGraphs, modelThreadSpareGraphs } from '../src/pipelines/index.ts';
import type { ExecutionProvider } from '../src/models/onnx.ts';
import type { ClothesType } from '../src/domain/job.ts';
import { benchPhotos, benchSessionOptions } from './bench-setup.ts';
import { dress, trousers, tshirt } from '../test/helpers/garments.ts';

const provider = (process.argv[3] ?? 'cuda') as ExecutionProvider;
const registry = loadRegistry(path.resolve('models'));
await fetchAll(registry);
const base = benchSessionOptions();
const astronaut = fs.readFileSync('test/fixtures/astronaut.png');
const { hair: devHair, tryon: devTryon } = await benchPhotos();
const standing = fs.readFileSync('test/fixtures/person-standing.jpg');
const garments: Array<[ClothesType, Buffer]> = [['upper_body', await tshirt()], ['lower_body', await trousers()], ['dresses', await dress()]];

type Job = { what: string; version: string; run: (ctx: Parameters<typeof hairstyle.run>[0]) => Promise<Uint8Array> };
const picture = (files: Array<{ name: string; data: Uint8Array }>) => files.find((f) => /^result(-1)?\.png$/.test(f.name))!.data;
const jobs: Job[] = [];
for (const version of ['hairstyle-bisenet', 'hairstyle-selfie']) {
  for (const [what, photo] of [['astronaut 512x512', astronaut], ['dev photo 1029x1029', devHair]] as const) {
    jobs.push({ what: `${what}, Long Wave blonde`, version, run: async (ctx) => picture((await hairstyle.run(ctx, { image_files: ['http://parity/a.png'], hairstyle: 'Long Wave', hair_color: 'blonde', num_outputs: 1, output_format: 'png' }, { image_files: [photo] })).files) });
    jobs.push({ what: `${what}, Buzz Cut black`, version, run: async (ctx) => picture((await hairstyle.run(ctx, { image_files: ['http://parity/a.png'], hairstyle: 'Buzz Cut', hair_color: 'black', num_outputs: 1, output_format: 'png' }, { image_files: [photo] })).files) });
  }
}
for (const [what, person] of [['person 360x962', standing], ['1 MP photo 732x1366', devTryon]] as const) {
  for (const [type, garment] of garments) {
    jobs.push({ what: `${what}, ${type}`, version: 'tryon-classic', run: async (ctx) => picture((await tryon.run(ctx, { clothes_image: 'http://parity/g', custom_model: 'http://parity/p', clothes_type: type, forced_cutting: false, output_format: 'png' }, { clothes_image: [garment], custom_model: [person] })).files) });
  }
}

/** Every job's picture on one provider (its own session cache per version, released after). */
async function pictures(p: ExecutionProvider): Promise<RgbImage[]> {
  const out: RgbImage[] = [];
  for (const version of new Set(jobs.map((j) => j.version))) {
    const v = registry.byName(version)!;
    const sessions = new SessionCache(registry, { ...base, provider: p, modelThread: modelThreadGraphs(registry), modelThreadSpare: modelThreadSpareGraphs(registry) });
    const ctx = { params: v.manifest.params, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 };
    for (const j of jobs.filter((j) => j.version === version)) out[jobs.indexOf(j)] = await decodeImage(await j.run(ctx), { maxPixels: 4e7 });
    await sessions.releaseAll();
  }
  return out;
}

console.log(`bench parity: ${os.cpus()[0]?.model ?? 'cpu'} x${os.availableParallelism()}, cpu against ${provider}, ${base.intraOpThreads} intra-op thread(s)`);
const cpu = await pictures('cpu');
const other = await pictures(provider);
let worst = 0;
const shares: number[] = [];
for (const [k, j] of jobs.entries()) {
  const a = cpu[k]!, b = other[k]!;
  if (a.width !== b.width || a.height !== b.height) {
    console.log(`${j.version}, ${j.what}: sizes differ (${a.width}x${a.height} against ${b.width}x${b.height})`);
    worst = Infinity;
    shares[k] = 0;
    continue;
  }
  let sum = 0, far = 0, max = 0;
  const n = a.width * a.height;
  for (let i = 0; i < n; i++) {
    let m = 0;
    for (let c = 0; c < 3; c++) {
      const d = Math.abs(a.data[3 * i + c]! - b.data[3 * i + c]!);
      sum += d;
      if (d > m) m = d;
    }
    if (m > 30) far++;
    if (m > max) max = m;
  }
  worst = Math.max(worst, far / n);
  shares[k] = far / n;
  console.log(`${j.version}, ${j.what}: MAD ${(sum / (3 * n)).toFixed(3)} levels, ${((100 * far) / n).toFixed(2)}% of pixels differ by more than 30, largest difference ${max}`);
}
console.log(`largest share of pixels differing by more than 30 levels: ${(100 * worst).toFixed(2)}%`);
// PARITY_OUT=<folder>: the two jobs whose pictures differ most, as PNGs (cpu, the provider's, and
// their difference x4), to see where the providers part.
if (process.env.PARITY_OUT) {
  const dir = process.env.PARITY_OUT;
  fs.mkdirSync(dir, { recursive: true });
  const png = (img: RgbImage, file: string) => sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } }).png().toFile(path.join(dir, file));
  for (const k of [...shares.keys()].sort((a, b) => shares[b]! - shares[a]!).slice(0, 2)) {
    const a = cpu[k]!, b = other[k]!;
    const name = `${jobs[k]!.version}-${jobs[k]!.what}`.replace(/[^A-Za-z0-9.-]+/g, '_');
    const diff = { width: a.width, height: a.height, data: Uint8Array.from(a.data, (v, i) => Math.min(255, 4 * Math.abs(v - b.data[i]!))) };
    await Promise.all([png(a, `${name}-cpu.png`), png(b, `${name}-${provider}.png`), png(diff, `${name}-diff.png`)]);
  }
}
