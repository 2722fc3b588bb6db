// The try-on demo: result + debug sheet (see demo.ts). The sheet shows, left to right: the garment
// photo with its parts and strips; the target's instance (green) over the person mask of everyone
// (red) with the body landmarks and other people's skeletons; the body part clips with the body
// strips; the warped parts each in its colour; occlusion (face and hair blue, hands yellow) and
// the patch-filled old clothing (magenta); the result.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp, { type OverlayOptions } from 'sharp';
import { CLOTHES_TYPES, type ClothesType } from '../src/domain/job.ts';
import { stageTimer } from '../src/domain/stage-timer.ts';
import { decodeImage, type RgbImage } from '../src/imaging/image.ts';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { SessionCache } from '../src/models/sessions.ts';
import type { PipelineContext } from '../src/pipelines/types.ts';
import { renderAtWorkSize, type TryonRender } from '../src/pipelines/tryon/pipeline.ts';
import type { Strip } from '../src/pipelines/tryon/parts.ts';
import { modelThreadGraphs } from '../src/pipelines/index.ts';

const COLORS: Record<string, [number, number, number]> = {
  torso: [230, 60, 60], sleeveL: [60, 140, 255], sleeveR: [40, 210, 120], pelvis: [230, 60, 60], legL: [60, 140, 255], legR: [40, 210, 120], skirt: [255, 170, 0],
};

const raw = (img: RgbImage) => sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } });

function tinted(img: RgbImage, layers: Array<[Uint8Array | Float32Array, [number, number, number], number]>): RgbImage {
  const out = Uint8Array.from(img.data);
  for (const [mask, c, s] of layers) {
    for (let i = 0; i < mask.length; i++) {
      const a = Math.min(1, mask[i]!) * s;
      if (a > 0) for (let k = 0; k < 3; k++) out[3 * i + k] = Math.round(out[3 * i + k]! * (1 - a) + c[k]! * a);
    }
  }
  return { data: out, width: img.width, height: img.height };
}

const stripSvg = (s: Strip, color: string) =>
  [s.centre, s.left, s.right].map((line) => `<polyline points="${line.map((p) => p.join(',')).join(' ')}" fill="none" stroke="${color}" stroke-width="3"/>`).join('') +
  [...s.left, ...s.right, ...s.centre].map(([x, y]) => `<circle cx="${x}" cy="${y}" r="4" fill="${color}" stroke="#000"/>`).join('');

async function withSvg(img: RgbImage, body: string): Promise<Buffer> {
  const base = await raw(img).png().toBuffer();
  const svg = await sharp(Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${img.width}" height="${img.height}" viewBox="0 0 ${img.width} ${img.height}">${body}</svg>`)).resize(img.width, img.height, { fit: 'fill' }).png().toBuffer();
  return sharp(base).composite([{ input: svg }]).png().toBuffer();
}

/** The debug sheet of one try-on (PNG), panels `height` pixels high. */
export async function debugSheet(r: TryonRender, height = 480): Promise<Buffer> {
  const { image, body: b } = r;
  const W = image.width, H = image.height;
  const hex = (c: [number, number, number]) => `rgb(${c.join(',')})`;
  // 1. Garment: part masks tinted, garment strips.
  const gImg = r.garment.image;
  const gParts = tinted(gImg, Object.entries(r.garment.parts.masks).map(([k, m]) => [m!, COLORS[k]!, 0.35] as [Uint8Array, [number, number, number], number]));
  const garmentPanel = await withSvg(gParts, Object.entries(r.garment.parts.strips).map(([k, s]) => stripSvg(s!, hex(COLORS[k]!))).join(''));
  // 2. Target instance over everyone's mask, landmarks, other skeletons.
  const everyone = Float32Array.from(r.person.person, (v) => (v > 127 ? 1 : 0));
  const inst = tinted(image, [[everyone, [255, 40, 40], 0.45], [r.person.instance, [40, 230, 90], 0.55]]);
  const joints = (['shoulder', 'elbow', 'wrist', 'index', 'hip', 'knee', 'ankle'] as const).flatMap((j) => [b.L[j], b.R[j]]);
  const bones = (s: 'L' | 'R') => `<polyline points="${[b[s].wrist, b[s].elbow, b[s].shoulder, b[s].hip, b[s].knee, b[s].ankle].map((p) => p.join(',')).join(' ')}" fill="none" stroke="${s === 'L' ? '#00e5ff' : '#ffeb3b'}" stroke-width="4"/>`;
  const others = r.person.others.flat().map((s) => ('poly' in s ? `<polygon points="${s.poly.map((p) => p.join(',')).join(' ')}" fill="none" stroke="#ff1744" stroke-width="3"/>` : `<line x1="${s.a[0]}" y1="${s.a[1]}" x2="${s.b[0]}" y2="${s.b[1]}" stroke="#ff1744" stroke-width="3"/>`)).join('');
  const face = r.person.face ? `<rect x="${r.person.face.box.x}" y="${r.person.face.box.y}" width="${r.person.face.box.width}" height="${r.person.face.box.height}" fill="none" stroke="#fff" stroke-width="3"/>` : '';
  const instancePanel = await withSvg(inst, bones('L') + bones('R') + `<line x1="${b.L.shoulder.join('" y1="')}" x2="${b.R.shoulder[0]}" y2="${b.R.shoulder[1]}" stroke="#fff" stroke-width="4"/>` + joints.map(([x, y]) => `<circle cx="${x}" cy="${y}" r="6" fill="#ff9100" stroke="#000"/>`).join('') + others + face);
  // 3. Body part clips and body strips.
  const clipPanel = await withSvg(tinted(image, Object.entries(r.parts.clips).map(([k, m]) => [m!, COLORS[k]!, 0.4] as [Uint8Array, [number, number, number], number])), Object.entries(r.parts.strips).map(([k, s]) => stripSvg(s!, hex(COLORS[k]!))).join(''));
  // 4. Warped parts, each alone over a dim photo.
  const dim = tinted(image, [[new Uint8Array(W * H).fill(1), [0, 0, 0], 0.6]]);
  const wdata = Uint8Array.from(dim.data);
  for (const w of r.warped) {
    const { x: rx, y: ry, width: rw, height: rh } = w.region;
    const plane = rw * rh;
    for (let y = 0; y < rh; y++) for (let x = 0; x < rw; x++) {
      const j = y * rw + x, i = (y + ry) * W + x + rx;
      const a = Math.min(1, w.warped[3 * plane + j]!) * 0.9;
      if (a <= 0) continue;
      for (let c = 0; c < 3; c++) wdata[3 * i + c] = Math.round(wdata[3 * i + c]! * (1 - a) + Math.min(255, (w.warped[c * plane + j]! / Math.max(a / 0.9, 1e-3)) * 255) * a * (w.clip[i] ? 1 : 0.4));
    }
  }
  const warpedPanel = await raw({ data: wdata, width: W, height: H }).png().toBuffer();
  // 5. Occlusion and the filled old clothing.
  const occ = tinted(image, [[r.protect, [40, 90, 255], 0.55], [r.parts.hands, [255, 230, 0], 0.6], [r.parts.arms, [255, 230, 0], 0.25], [r.hole, [255, 0, 200], 0.6]]);
  const occlusionPanel = await raw(occ).png().toBuffer();
  const resultPanel = await raw(r.result).png().toBuffer();
  const panels = [garmentPanel, instancePanel, clipPanel, warpedPanel, occlusionPanel, resultPanel];
  const resized = await Promise.all(panels.map((p) => sharp(p).resize({ height }).png().toBuffer({ resolveWithObject: true })));
  let left = 0;
  const tiles: OverlayOptions[] = resized.map((p) => {
    const t = { input: p.data, left, top: 0 };
    left += p.info.width + 6;
    return t;
  });
  return sharp({ create: { width: left, height, channels: 3, background: '#111' } }).composite(tiles).png().toBuffer();
}

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
  const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: console.warn, modelThread: modelThreadGraphs(registry) });
  const ctx: PipelineContext = { params: v.manifest.params, session: (g: string) => sessions.get(v.id, g), maxPixels: 4e7 };
  const garment = await decodeImage(fs.readFileSync(garmentFile), { maxPixels: 4e7 });
  const person = await decodeImage(fs.readFileSync(personFile), { maxPixels: 4e7 });
  // What the service does (the target's columns of a group photo, a large photo scaled down): the
  // picture as it returns it, the debug sheet of the part it worked on, at the size it worked at.
  const { r, result } = await renderAtWorkSize(ctx, garment, person, type as ClothesType, false, stageTimer());
  const out = values.out ?? 'tryon-result.jpg';
  await raw(result).jpeg({ quality: 90 }).toFile(out);
  const sheet = out.replace(/(\.[a-z]+)?$/, '-debug.jpg');
  await sharp(await debugSheet(r)).jpeg({ quality: 85 }).toFile(sheet);
  console.log(`wrote ${out} and ${sheet} (garment parts and strips; target instance green over everyone's mask red, landmarks, other skeletons red; part clips and body strips; warped parts; occlusion: face/hair blue, hands yellow, filled old clothing magenta; result)`);
  await sessions.releaseAll();
}
