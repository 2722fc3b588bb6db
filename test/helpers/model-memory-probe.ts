// Child process for test/integration/model-memory.test.ts: runs one task of every version, twice
// round, through a real one-thread PipelinePool with MODEL_MEMORY budget argv[2] MB (0: none), then
// prints one JSON line: RSS (MB), tasks run, failures, and the notes that report reloads.
import fs from 'node:fs';
import path from 'node:path';
import { loadRegistry } from '../../src/models/registry.ts';
import { PipelinePool } from '../../src/queue/pipeline-pool.ts';
import { tshirt } from './garments.ts';

const budgetMb = Number(process.argv[2] ?? 0);
const registry = loadRegistry(path.resolve('models'));
const pool = new PipelinePool(
  { modelsDir: path.resolve('models'), provider: 'cpu', intraOpThreads: 1, allowSpinning: false, maxPixels: 4e7, warm: [], modelMemoryBytes: budgetMb * 2 ** 20 },
  1,
  () => {},
);
await pool.ready();
const photo = fs.readFileSync('test/fixtures/astronaut.png');
const person = fs.readFileSync('test/fixtures/person-standing.jpg');
const garment = await tshirt();
const jobs = (pipeline: string): { input: Record<string, unknown>; files: Record<string, Uint8Array[]> } => {
  if (pipeline === 'hairstyle') return { input: { image_files: ['http://x/a'], hair_color: 'red', num_outputs: 1 }, files: { image_files: [Buffer.from(photo)] } };
  if (pipeline === 'tryon') return { input: { clothes_image: 'http://x/g', custom_model: 'http://x/p', clothes_type: 'upper_body' }, files: { clothes_image: [Buffer.from(garment)], custom_model: [Buffer.from(person)] } };
  return { input: { image: 'http://x/a' }, files: { image: [Buffer.from(pipeline === 'pose' || pipeline === 'person-segmentation' ? person : photo)] } };
};
let runs = 0;
const failures: string[] = [];
const reloads: string[] = [];
let peak = 0;
for (let round = 0; round < 2; round++) {
  for (const v of registry.versions.values()) {
    const { input, files } = jobs(v.manifest.pipeline);
    try {
      const r = await pool.run(v.id, input, files);
      reloads.push(...r.notes.filter((n) => n.startsWith('model memory:')));
      runs++;
    } catch (e) {
      failures.push(`${v.manifest.name}: ${(e as Error).message}`);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
  }
}
const model = pool.modelStats();
console.log(JSON.stringify({ budgetMb, runs, failures, reloads, model, rssMb: Math.round(process.memoryUsage().rss / 2 ** 20), peakMb: Math.round(peak / 2 ** 20) }));
await pool.close();
process.exit(0);
