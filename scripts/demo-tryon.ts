// The try-on demo: result + debug sheet (see demo.ts).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp, { type OverlayOptions } from 'sharp';
import { CLOTHES_TYPES, type ClothesType } from '../src/domain/job.ts';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { SessionCache } from '../src/models/sessions.ts';
import { tryon } from '../src/pipelines/tryon/pipeline.ts';

export async function demoTryon(garmentFile: string | undefined, args: string[]): Promise<void> {
  const [personFile, type, ...rest] = args;
  const { values } = parseArgs({ args: rest, options: { out: { type: 'string' } } });
  if (!garmentFile || !personFile || !(CLOTHES_TYPES as readonly string[]).includes(type ?? '')) {
    console.error('usage: npm run demo -- tryon <garment> <person> <upper_body|lower_body|dresses> [--out result.jpg]');
    process.exit(2);
  }
  const registry = loadRegistry(path.resolve('models'));
  await fetchAll(registry);
  const v = registry.byName('tryon-classic')!;
  const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: console.warn });
  const ctx = { params: v.manifest.params, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 };
  const garment = fs.readFileSync(garmentFile);
  const person = fs.readFileSync(personFile);
  const input = { clothes_image: 'http://demo/g', custom_model: 'http://demo/p', clothes_type: type as ClothesType };
  const r = await tryon.run(ctx, input, { clothes_image: [garment], custom_model: [person] });
  const out = values.out ?? 'tryon-result.jpg';
  fs.writeFileSync(out, r.files[0]!.data);
  const json = JSON.parse(Buffer.from(r.files[2]!.data).toString());

  // The warped grid: the same warp applied to a grid drawn over the garment.
  const gm = await sharp(garment).metadata();
  const lines = [];
  for (let x = 0; x < gm.width!; x += 20) lines.push(`<line x1="${x}" y1="0" x2="${x}" y2="${gm.height}" stroke="#00e5ff" stroke-width="3"/>`);
  for (let y = 0; y < gm.height!; y += 20) lines.push(`<line x1="0" y1="${y}" x2="${gm.width}" y2="${y}" stroke="#ff4081" stroke-width="3"/>`);
  const gridded = await sharp(garment).composite([{ input: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${gm.width}" height="${gm.height}">${lines.join('')}</svg>`), blend: 'over' }]).png().toBuffer();
  const grid = await tryon.run(ctx, input, { clothes_image: [gridded], custom_model: [person] });

  const dot = (x: number, y: number, c: string) => `<circle cx="${x}" cy="${y}" r="6" fill="${c}" stroke="#000" stroke-width="1"/>`;
  const marks = (pts: Record<string, number[]>, c: string) => Object.values(pts).map(([x, y]) => dot(x!, y!, c)).join('');
  const pm = await sharp(person).metadata();
  const kp = Object.values(json.keypoints as Record<string, { x: number; y: number; score: number }>).filter((k) => k.score > 0.25).map((k) => dot(k.x, k.y, '#ffeb3b')).join('');
  const garmentPanel = await sharp(garment).composite([{ input: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${gm.width}" height="${gm.height}">${marks(json.garment_landmarks, '#ff1744')}</svg>`) }]).png().toBuffer();
  const personPanel = await sharp(person).composite([{ input: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${pm.width}" height="${pm.height}">${kp}${marks(json.body_targets, '#ff1744')}</svg>`) }]).png().toBuffer();
  const H = 480;
  const panels = [garmentPanel, personPanel, Buffer.from(r.files[1]!.data), Buffer.from(grid.files[0]!.data), Buffer.from(r.files[0]!.data)];
  const resized = await Promise.all(panels.map((p) => sharp(p).resize({ height: H }).toColourspace('srgb').png().toBuffer({ resolveWithObject: true })));
  let left = 0;
  const tiles: OverlayOptions[] = resized.map((p) => {
    const t = { input: p.data, left, top: 0 };
    left += p.info.width + 8;
    return t;
  });
  const sheet = out.replace(/(\.[a-z]+)?$/, '-debug.jpg');
  await sharp({ create: { width: left, height: H, channels: 3, background: '#111' } }).composite(tiles).jpeg({ quality: 85 }).toFile(sheet);
  console.log(`wrote ${out} and ${sheet} (garment landmarks red, keypoints yellow, body targets red; mask; warped grid; result)`);
  await sessions.releaseAll();
}
