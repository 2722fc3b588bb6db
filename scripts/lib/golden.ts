// Golden outputs: what each model version produces on the fixture photos, pinned as perceptual
// digests (images: a 24x24 area-averaged RGB thumbnail, compared with a tolerance, so libvips or
// JPEG encoder noise does not count; JSON: values compared with a numeric tolerance). A version's
// outputs may only change together with its manifest's `algorithm_version` (or its graphs, which
// change its id): `test/integration/golden-outputs.test.ts` fails otherwise, and
// `npm run models -- golden` re-pins after a deliberate change.
//
// Files: models/golden/<version name>.json
//   { version, algorithm_version, cases: { <case>: { <output file>: ImageDigest | JsonDigest } } }
import fs from 'node:fs';
import path from 'node:path';
import { decodeImage } from '../../src/imaging/image.ts';
import type { ModelVersion, Registry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { PIPELINES } from '../../src/pipelines/index.ts';
import { tshirt, trousers, dress } from '../../test/helpers/garments.ts';
import { modelThreadGraphs } from '../../src/pipelines/index.ts';

const GRID = 24;
/** Mean and worst-cell differences (levels of 255) an image digest tolerates. */
export const IMAGE_TOLERANCE = { mean: 2.5, max: 48 };

export interface ImageDigest {
  type: 'image';
  width: number;
  height: number;
  channels: number;
  /** GRID x GRID x 3 bytes, base64: the picture area-averaged to a GRID x GRID grid. */
  thumb: string;
}
export interface JsonDigest {
  type: 'json';
  value: unknown;
}
export type Digest = ImageDigest | JsonDigest;

export interface GoldenFile {
  version: string;
  algorithm_version: number;
  cases: Record<string, Record<string, Digest>>;
}

interface GoldenCase {
  name: string;
  input: Record<string, unknown>;
  /** Field -> fixture bytes (one per file). */
  files: () => Promise<Record<string, Buffer[]>>;
}

const fixture = (name: string) => fs.readFileSync(path.resolve('test/fixtures', name));
const image = (name: string): GoldenCase => ({ name, input: { image: 'http://fixture.invalid/x' }, files: async () => ({ image: [fixture(name)] }) });

/** The cases run for each pipeline: small, deterministic, covering each output file. */
const CASES: Record<string, GoldenCase[]> = {
  'face-detection': [image('astronaut.png'), image('group-four.jpg')],
  'face-landmarks': [image('astronaut.png')],
  'face-parsing': [image('astronaut.png')],
  'person-segmentation': [image('person-standing.jpg')],
  pose: [image('person-standing.jpg')],
  'body-landmarks': [image('person-standing.jpg'), image('group-four.jpg')],
  'person-matting': [image('person-standing.jpg'), image('group-four.jpg')],
  hairstyle: [
    {
      name: 'astronaut/Mohawk/blue',
      input: { image_files: ['http://fixture.invalid/x'], hairstyle: 'Mohawk', hair_color: 'blue', num_outputs: 1, output_format: 'png' },
      files: async () => ({ image_files: [fixture('astronaut.png')] }),
    },
    {
      name: 'astronaut/Bombshell Curls/blonde',
      input: { image_files: ['http://fixture.invalid/x'], hairstyle: 'Bombshell Curls', hair_color: 'blonde', num_outputs: 1, output_format: 'png' },
      files: async () => ({ image_files: [fixture('astronaut.png')] }),
    },
  ],
  tryon: (['upper_body', 'lower_body', 'dresses'] as const).map((type) => ({
    name: `person-standing/${type}`,
    input: { clothes_image: 'http://fixture.invalid/g', custom_model: 'http://fixture.invalid/p', clothes_type: type, output_format: 'png' },
    files: async () => ({
      clothes_image: [await (type === 'upper_body' ? tshirt() : type === 'lower_body' ? trousers() : dress())],
      custom_model: [fixture('person-standing.jpg')],
    }),
  })),
};

export const goldenPath = (modelsDir: string, v: ModelVersion) => path.join(modelsDir, 'golden', `${v.manifest.name}.json`);

/** Area average of a decoded picture to GRID x GRID RGB (grey and alpha pictures by their first channels). */
async function imageDigest(bytes: Uint8Array): Promise<ImageDigest> {
  const img = await decodeImage(bytes, { maxPixels: 1e8 });
  const { width: W, height: H, data } = img;
  const sum = new Float64Array(GRID * GRID * 3);
  const count = new Float64Array(GRID * GRID);
  for (let y = 0; y < H; y++) {
    const gy = Math.min(GRID - 1, Math.floor((y * GRID) / H));
    for (let x = 0; x < W; x++) {
      const g = gy * GRID + Math.min(GRID - 1, Math.floor((x * GRID) / W));
      const o = (y * W + x) * 3;
      sum[3 * g]! += data[o]!;
      sum[3 * g + 1]! += data[o + 1]!;
      sum[3 * g + 2]! += data[o + 2]!;
      count[g]!++;
    }
  }
  const thumb = Buffer.from(Array.from(sum, (s, i) => Math.round(s / Math.max(1, count[Math.floor(i / 3)]!))));
  return { type: 'image', width: W, height: H, channels: 3, thumb: thumb.toString('base64') };
}

/** Runs one version's golden cases in this process on the CPU provider; file name -> digest per case. */
export async function computeGolden(registry: Registry, v: ModelVersion): Promise<GoldenFile> {
  const cases = CASES[v.manifest.pipeline];
  const runner = PIPELINES[v.manifest.pipeline];
  if (!cases || !runner) throw new Error(`no golden cases or runner for pipeline ${v.manifest.pipeline}`);
  const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 1, allowSpinning: false, warn: () => {}, modelThread: modelThreadGraphs(registry) });
  try {
    const out: GoldenFile['cases'] = {};
    for (const c of cases) {
      const files = await c.files();
      const result = await runner.run({ params: v.manifest.params, session: (g) => sessions.get(v.id, g), maxPixels: 4e7 }, c.input, files);
      const digests: Record<string, Digest> = {};
      for (const f of result.files) {
        digests[f.name] = f.contentType.startsWith('image/') ? await imageDigest(f.data) : { type: 'json', value: JSON.parse(Buffer.from(f.data).toString('utf8')) };
      }
      out[c.name] = digests;
    }
    return { version: v.manifest.name, algorithm_version: v.manifest.algorithm_version ?? 1, cases: out };
  } finally {
    await sessions.releaseAll();
  }
}

/** Differences between a pinned digest set and a fresh one, as readable lines (empty: same). */
export function compareGolden(pinned: GoldenFile, fresh: GoldenFile): string[] {
  const bad: string[] = [];
  for (const [name, files] of Object.entries(pinned.cases)) {
    const now = fresh.cases[name];
    if (!now) {
      bad.push(`${name}: case not run`);
      continue;
    }
    const names = [...new Set([...Object.keys(files), ...Object.keys(now)])].sort();
    for (const f of names) {
      const a = files[f], b = now[f];
      const where = `${name}/${f}`;
      if (!a || !b) bad.push(`${where}: ${a ? 'no longer written' : 'new output file'}`);
      else if (a.type !== b.type) bad.push(`${where}: ${a.type} became ${b.type}`);
      else if (a.type === 'image' && b.type === 'image') bad.push(...compareImages(where, a, b));
      else bad.push(...compareJson(where, (a as JsonDigest).value, (b as JsonDigest).value));
    }
  }
  for (const name of Object.keys(fresh.cases)) if (!pinned.cases[name]) bad.push(`${name}: new case, not pinned`);
  return bad;
}

function compareImages(where: string, a: ImageDigest, b: ImageDigest): string[] {
  if (a.width !== b.width || a.height !== b.height) return [`${where}: size ${a.width}x${a.height} became ${b.width}x${b.height}`];
  const x = Buffer.from(a.thumb, 'base64'), y = Buffer.from(b.thumb, 'base64');
  let sum = 0, max = 0;
  for (let i = 0; i < x.length; i++) {
    const d = Math.abs(x[i]! - y[i]!);
    sum += d;
    max = Math.max(max, d);
  }
  const mean = sum / x.length;
  return mean > IMAGE_TOLERANCE.mean || max > IMAGE_TOLERANCE.max ? [`${where}: thumbnail differs (mean ${mean.toFixed(2)}, max ${max} levels)`] : [];
}

/** Numbers within 0.02 + 1% of the pinned value (coordinates, scores); everything else equal. */
function compareJson(where: string, a: unknown, b: unknown): string[] {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= 0.02 + 0.01 * Math.abs(a) ? [] : [`${where}: ${a} became ${b}`];
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return [`${where}: ${a.length} items became ${b.length}`];
    return a.flatMap((v, i) => compareJson(`${where}[${i}]`, v, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => compareJson(`${where}.${k}`, (a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [`${where}: ${JSON.stringify(a)} became ${JSON.stringify(b)}`];
}

export function readGolden(file: string): GoldenFile | null {
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as GoldenFile) : null;
}

export function writeGolden(file: string, g: GoldenFile): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(g, null, 1)}\n`);
}
