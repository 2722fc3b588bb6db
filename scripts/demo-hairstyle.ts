// npm run demo -- hairstyle <photo|dev:NAME>[,<photo>...] [--colors blonde,red] [--styles "Bowl Cut,..."] [--version NAME] [--out FILE]
//   One photo: renders hairstyle templates in the chosen colours and writes a contact sheet
//   (rows: styles, columns: colours). Several photos (comma-separated): a grid, originals on top,
//   a row per style (its colour cycling through --colors), a column per photo. Beside either (<out>-debug.jpg), a debug sheet: target and
//   other faces with the head frame, the target's old hair, what the removal fills with what
//   (background blue, skin orange, clothing green), the fill alone, the new hair's alpha with its
//   contact shadow, the result. `dev:NAME` takes a development photo (scripts/lib/dev-photos.ts),
//   e.g. dev:s6-centre-left or dev:s5-right@rot40.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp, { type OverlayOptions } from 'sharp';
import { HAIRSTYLES, HAIR_COLORS, type HairColor, type Hairstyle } from '../src/domain/job.ts';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { SessionCache } from '../src/models/sessions.ts';
import { analyzeComplete } from '../src/pipelines/hairstyle/analysis.ts';
import { fromFrame } from '../src/pipelines/hairstyle/frame.ts';
import { UNDER } from '../src/pipelines/hairstyle/hair.ts';
import { pictureOf } from '../src/pipelines/hairstyle/composite.ts';
import { renderHair } from '../src/pipelines/hairstyle/render.ts';
import { variantFor } from '../src/pipelines/hairstyle/templates.ts';
import { stageTimer } from '../src/domain/stage-timer.ts';
import { copyImage, decodeImage, drawSegments, type RgbImage } from '../src/imaging/image.ts';
import { hairPhoto, type Variant } from './lib/dev-photos.ts';
import { modelThreadGraphs } from '../src/pipelines/index.ts';

/** A photo argument: a file, or dev:NAME[@rotN|@mirror|@xS] for a development photo. */
export async function photoBytes(arg: string): Promise<Buffer> {
  if (!arg.startsWith('dev:')) return fs.readFileSync(arg);
  const [base, v] = arg.slice(4).split('@');
  const variant: Variant = {};
  if (v?.startsWith('rot')) variant.rotate = Number(v.slice(3));
  else if (v === 'mirror') variant.mirror = true;
  else if (v?.startsWith('x')) variant.scale = Number(v.slice(1));
  return (await hairPhoto(base!, variant)).bytes;
}

const rgbTile = (img: RgbImage, cell: number) => sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } }).resize(cell, cell, { fit: 'contain', background: '#111' }).png().toBuffer();

function label(text: string, width: number, h = 26): OverlayOptions['input'] {
  const safe = text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${h}"><rect width="100%" height="100%" fill="#111"/><text x="8" y="19" font-family="sans-serif" font-size="16" fill="#fff">${safe}</text></svg>`);
}

/**
 * Several photos (`a,b,c`): a grid with the originals on top, then one row per style, each photo
 * a column; the row's colour cycles through --colors, so every colour shows.
 */
async function gridSheet(files: string[], styles: Hairstyle[], colors: HairColor[], ctx: Parameters<typeof analyzeComplete>[0], cell: number, outFile: string): Promise<void> {
  const head = 26;
  const tiles: OverlayOptions[] = [];
  const analyses = [];
  for (const f of files) analyses.push(await analyzeComplete(ctx, [await decodeImage(await photoBytes(f), { maxPixels: 4e7 })], stageTimer()));
  tiles.push({ input: label(`before: ${files.map((f) => f.replace(/^dev:/, '')).join(', ')}`, cell * files.length), left: 0, top: 0 });
  for (const [c, a] of analyses.entries()) tiles.push({ input: await rgbTile(a.analysis.image, cell), left: c * cell, top: head });
  for (const [r, style] of styles.entries()) {
    const color = colors[r % colors.length]!;
    const top = (r + 1) * (cell + head);
    tiles.push({ input: label(`${style}, ${color}`, cell * files.length), left: 0, top });
    for (const [c, { analysis, look }] of analyses.entries()) {
      const layer = renderHair(analysis, look, style, variantFor(7, 0));
      tiles.push({ input: await rgbTile(pictureOf(analysis, layer, color, look, 7).picture, cell), left: c * cell, top: top + head });
    }
  }
  await sharp({ create: { width: cell * files.length, height: (styles.length + 1) * (cell + head), channels: 3, background: '#111' } })
    .composite(tiles)
    .jpeg({ quality: 82 })
    .toFile(outFile);
  console.log(`wrote ${outFile} (${styles.length} styles on ${files.length} photos)`);
}

export async function demoHairstyle(file: string | undefined, rest: string[]): Promise<void> {
  const { values } = parseArgs({ args: rest, options: { colors: { type: 'string' }, styles: { type: 'string' }, version: { type: 'string' }, out: { type: 'string' }, size: { type: 'string' } } });
  if (!file) {
    console.error('usage: npm run demo -- hairstyle <photo|dev:NAME> [--colors blonde,red] [--styles "Bowl Cut,Mohawk"] [--version hairstyle-bisenet] [--out sheet.jpg]');
    process.exit(2);
  }
  const colors = (values.colors ?? 'black,blonde,red,blue').split(',') as HairColor[];
  for (const c of colors) if (!(HAIR_COLORS as readonly string[]).includes(c)) throw new Error(`unknown colour ${c}`);
  const styles = (values.styles ? values.styles.split(',') : HAIRSTYLES) as Hairstyle[];
  for (const s of styles) if (!(HAIRSTYLES as readonly string[]).includes(s)) throw new Error(`unknown style ${s}`);
  const registry = loadRegistry(path.resolve('models'));
  await fetchAll(registry);
  const version = registry.byName(values.version ?? 'hairstyle-bisenet')!;
  const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: console.warn, modelThread: modelThreadGraphs(registry) });
  const ctx = { params: version.manifest.params, session: (g: string) => sessions.get(version.id, g), maxPixels: 4e7 };
  const cellSize = Number(values.size ?? 220);
  const outFile = values.out ?? (file.includes(',') ? 'hairstyle-grid.jpg' : 'hairstyle-contact-sheet.jpg');
  const several = file.includes(',');
  if (several) {
    const files = file.split(',');
    await gridSheet(files, styles, colors, ctx, cellSize, outFile);
    // The debug sheet (below) is of the first photo.
    file = files[0]!;
  }
  const image = await decodeImage(await photoBytes(file), { maxPixels: 4e7 });
  const { analysis, look, chosen } = await analyzeComplete(ctx, [image], stageTimer());
  const cell = cellSize;
  const head = 26;
  const tiles: OverlayOptions[] = [];
  for (const [r, style] of (several ? [] : styles).entries()) {
    for (const [c, color] of colors.entries()) {
      const layer = renderHair(analysis, look, style, variantFor(7, 0));
      tiles.push({ input: await rgbTile(pictureOf(analysis, layer, color, look, 7).picture, cell), left: c * cell, top: r * (cell + head) + head });
    }
    tiles.push({ input: label(`${style}: ${colors.join(', ')}`, cell * colors.length), left: 0, top: r * (cell + head) });
  }
  if (!several) {
    await sharp({ create: { width: cell * colors.length, height: styles.length * (cell + head), channels: 3, background: '#111' } })
      .composite(tiles)
      .jpeg({ quality: 85 })
      .toFile(outFile);
    console.log(`wrote ${outFile} (${styles.length} styles x ${colors.length} colours, ${version.manifest.name})`);
  }

  // Debug sheet for the first style and colour.
  const { width: W, height: H } = analysis.image;
  const layer = renderHair(analysis, look, styles[0]!, variantFor(7, 0));
  const { picture: result, hole, filled } = pictureOf(analysis, layer, colors[0]!, look, 7);
  const faces = copyImage(analysis.image);
  const box = (b: { x: number; y: number; width: number; height: number }, rgb: number[]) =>
    drawSegments(faces, [[b.x, b.y, b.x + b.width, b.y], [b.x + b.width, b.y, b.x + b.width, b.y + b.height], [b.x + b.width, b.y + b.height, b.x, b.y + b.height], [b.x, b.y + b.height, b.x, b.y]], rgb, 3);
  box(chosen.face.box, [0, 255, 0]);
  for (const o of chosen.others) box(o.box, [255, 0, 0]);
  const f = analysis.frame;
  const [ox, oy] = fromFrame(f, 0, 0);
  const [ax, ay] = fromFrame(f, 0.6, 0);
  const [bx, by] = fromFrame(f, 0, -0.8);
  drawSegments(faces, [[ox, oy, ax, ay]], [255, 255, 0], 3);
  drawSegments(faces, [[ox, oy, bx, by]], [0, 255, 255], 3);
  const tinted = (mask: (i: number) => readonly number[] | null, base: RgbImage) => {
    const out = copyImage(base);
    for (let i = 0; i < W * H; i++) {
      const c = mask(i);
      if (!c) continue;
      for (let k = 0; k < 3; k++) out.data[3 * i + k] = Math.round(0.35 * out.data[3 * i + k]! + 0.65 * c[k]!);
    }
    return out;
  };
  const oldHair = tinted((i) => (analysis.others[i] ? [255, 0, 0] : analysis.hair[i]! > 77 ? [255, 0, 255] : analysis.protect[i] ? [0, 200, 0] : null), analysis.image);
  const GROUP_RGB: Record<number, number[]> = { [UNDER.background]: [40, 90, 255], [UNDER.skin]: [255, 150, 40], [UNDER.clothing]: [40, 200, 80] };
  const groups = tinted((i) => (hole[i] ? GROUP_RGB[analysis.under[i] || 1]! : null), analysis.image);
  const alpha = tinted((i) => (layer.alpha[i]! > 0.02 ? [255 * layer.alpha[i]!, 255 * layer.alpha[i]!, 255 * layer.alpha[i]!] : layer.shadow[i]! > 0.02 ? [80 + 175 * layer.shadow[i]!, 0, 0] : [0, 0, 0]), analysis.image);
  const panels: Array<[string, RgbImage]> = [
    ['target (green), others (red), frame', faces],
    ['old hair (magenta), protected face', oldHair],
    ['removal: fill with bg/skin/cloth', groups],
    ['fill alone', filled],
    ['new hair alpha, shadow (red)', alpha],
    [`${styles[0]} ${colors[0]}`, result],
  ];
  const big = 320;
  const dtiles: OverlayOptions[] = [];
  for (const [k, [name, img]] of panels.entries()) {
    const x = (k % 3) * big, y = Math.floor(k / 3) * (big + head);
    dtiles.push({ input: label(name, big), left: x, top: y }, { input: await rgbTile(img, big), left: x, top: y + head });
  }
  const debugFile = outFile.replace(/(\.[a-z]+)?$/i, '-debug.jpg');
  await sharp({ create: { width: 3 * big, height: 2 * (big + head), channels: 3, background: '#111' } }).composite(dtiles).jpeg({ quality: 88 }).toFile(debugFile);
  console.log(`wrote ${debugFile} (target, old hair, removal groups, fill, new alpha, result); look ${JSON.stringify(look)}`);
  // Awaited: demo.ts exits right after, and a model thread still closing then aborted the process at times.
  await sessions.releaseAll();
}
