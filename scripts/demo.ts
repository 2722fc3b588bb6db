// npm run demo -- hairstyle <image> [--colors blonde,red,...] [--version NAME] [--out FILE]
//   Renders the 12 hairstyle templates in the chosen colours on one photo and writes a contact
//   sheet (rows: styles, columns: colours) for a person to look at.
// npm run demo -- tryon <garment> <person> <upper_body|lower_body|dresses> [--out FILE]
//   Writes the try-on result and a debug sheet beside it: garment mask and landmarks, person
//   keypoints and body targets, the warped grid, the result.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp, { type OverlayOptions } from 'sharp';
import { HAIRSTYLES, HAIR_COLORS, type HairColor } from '../src/domain/job.ts';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { SessionCache } from '../src/models/sessions.ts';
import { analyze } from '../src/pipelines/hairstyle/analysis.ts';
import { composite, removalMask, renderHair } from '../src/pipelines/hairstyle/render.ts';
import { variantFor } from '../src/pipelines/hairstyle/templates.ts';
import { stageTimer } from '../src/domain/stage-timer.ts';
import { inpaint } from '../src/steps/inpaint.ts';
import { decodeImage } from '../src/imaging/image.ts';

const [what, file, ...rest] = process.argv.slice(2);
if (what === 'tryon') {
  const { demoTryon } = await import('./demo-tryon.ts');
  await demoTryon(file, rest);
  process.exit(0);
}
const { values } = parseArgs({ args: rest, options: { colors: { type: 'string' }, version: { type: 'string' }, out: { type: 'string' }, size: { type: 'string' } } });
if (what !== 'hairstyle' || !file) {
  console.error('usage: npm run demo -- hairstyle <image> [--colors blonde,red] [--version hairstyle-bisenet] [--out sheet.jpg]\n       npm run demo -- tryon <garment> <person> <upper_body|lower_body|dresses> [--out result.jpg]');
  process.exit(2);
}
const colors = (values.colors ?? 'black,blonde,red,blue').split(',') as HairColor[];
for (const c of colors) if (!(HAIR_COLORS as readonly string[]).includes(c)) throw new Error(`unknown colour ${c}`);
const registry = loadRegistry(path.resolve('models'));
await fetchAll(registry);
const version = registry.byName(values.version ?? 'hairstyle-bisenet')!;
const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: console.warn });
const ctx = { params: version.manifest.params, session: (g: string) => sessions.get(version.id, g), maxPixels: 4e7 };
const image = await decodeImage(fs.readFileSync(file), { maxPixels: 4e7 });
const t = stageTimer();
const { analysis } = await analyze(ctx, [image], t);
const inpainter = await sessions.get(version.id, 'inpaint');
const cell = Number(values.size ?? 220);
const label = 26;
const tiles: OverlayOptions[] = [];
for (const [r, style] of HAIRSTYLES.entries()) {
  for (const [c, color] of colors.entries()) {
    const layer = renderHair(analysis, style, variantFor(7, 0));
    const filled = await inpaint(inpainter, analysis.image, removalMask(analysis, layer));
    const out = composite(filled, layer, color);
    const tile = await sharp(out.data, { raw: { width: out.width, height: out.height, channels: 3 } }).resize(cell, cell, { fit: 'cover' }).jpeg().toBuffer();
    tiles.push({ input: tile, left: label * 0 + c * cell, top: r * (cell + label) + label });
  }
  const text = `<svg xmlns="http://www.w3.org/2000/svg" width="${cell * colors.length}" height="${label}"><rect width="100%" height="100%" fill="#111"/><text x="8" y="19" font-family="sans-serif" font-size="16" fill="#fff">${style}: ${colors.join(', ')}</text></svg>`;
  tiles.push({ input: Buffer.from(text), left: 0, top: r * (cell + label) });
}
const outFile = values.out ?? 'hairstyle-contact-sheet.jpg';
await sharp({ create: { width: cell * colors.length, height: HAIRSTYLES.length * (cell + label), channels: 3, background: '#111' } })
  .composite(tiles)
  .jpeg({ quality: 85 })
  .toFile(outFile);
console.log(`wrote ${outFile} (${HAIRSTYLES.length} styles x ${colors.length} colours, ${version.manifest.name})`);
