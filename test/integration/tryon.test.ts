// Virtual try-on on a real person photo (face-api demo, MIT) with garments the project draws, real
// graphs on the CPU provider: coverage, untouched face/hair/background, colour and pattern, and the
// body parts a clothes type must leave alone.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClothesType } from '../../src/domain/job.ts';
import { decodeImage, type RgbImage } from '../../src/imaging/image.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { srgbToLab } from '../../src/pipelines/hairstyle/color.ts';
import { bodyRegion, polygonMask, torso } from '../../src/pipelines/tryon/body.ts';
import { analyzePerson, faceAndHair, forearms, tryon } from '../../src/pipelines/tryon/pipeline.ts';
import { stageTimer, type PipelineContext } from '../../src/pipelines/types.ts';
import { GARMENT_COLORS, dress, trousers, tshirt } from '../helpers/garments.ts';

const registry = loadRegistry(path.resolve('models'));
const version = registry.byName('tryon-classic')!;
const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: () => {} });
const ctx: PipelineContext = { params: version.manifest.params, session: (g) => sessions.get(version.id, g), maxPixels: 4e7 };
const personBytes = fs.readFileSync('test/fixtures/person-standing.jpg');
afterAll(() => sessions.releaseAll());

let person: RgbImage;
let analysis: Awaited<ReturnType<typeof analyzePerson>>;
let protect: Uint8Array;
const results = new Map<ClothesType, { out: RgbImage; alpha: Uint8Array; json: any }>();
const GARMENTS: Record<ClothesType, [() => Promise<Buffer>, keyof typeof GARMENT_COLORS]> = {
  upper_body: [tshirt, 'shirt'],
  lower_body: [trousers, 'trousers'],
  dresses: [dress, 'dress'],
};

async function run(type: ClothesType, garment: Uint8Array, model: Uint8Array = personBytes, extra: Record<string, unknown> = {}) {
  return tryon.run(ctx, { clothes_image: 'http://x/g.png', custom_model: 'http://x/p.jpg', clothes_type: type, output_format: 'png', ...extra }, { clothes_image: garment, custom_model: model });
}

beforeAll(async () => {
  person = await decodeImage(personBytes, { maxPixels: 4e7 });
  analysis = await analyzePerson(ctx, person, stageTimer());
  protect = await faceAndHair(ctx, person, stageTimer());
  for (const type of ['upper_body', 'lower_body', 'dresses'] as const) {
    const r = await run(type, await GARMENTS[type][0]());
    const out = await decodeImage(r.files[0]!.data, { maxPixels: 4e7 });
    const alpha = (await sharp(Buffer.from(r.files[1]!.data)).extractChannel(0).raw().toBuffer()) as unknown as Uint8Array;
    results.set(type, { out, alpha, json: JSON.parse(Buffer.from(r.files[2]!.data).toString()) });
  }
}, 240_000);

const mad = (a: RgbImage, b: RgbImage, where: (i: number) => boolean) => {
  let d = 0, n = 0;
  for (let i = 0; i < a.width * a.height; i++) {
    if (!where(i)) continue;
    for (let c = 0; c < 3; c++) d += Math.abs(a.data[3 * i + c]! - b.data[3 * i + c]!);
    n += 3;
  }
  return { mad: n ? d / n : 0, n: n / 3 };
};

describe.each(['upper_body', 'lower_body', 'dresses'] as const)('try-on %s', (type) => {
  it('covers the keypoint-derived body region (IoU >= 0.7)', () => {
    const { alpha, json } = results.get(type)!;
    // The region: the outline through the body targets the keypoints give (shoulders, sleeves,
    // armpits, hem; waist, thighs, legs), on the person, minus what must stay in front (face,
    // hair, forearms and hands).
    // A shirt: the torso (shoulders to hem corners) plus each upper arm down to its sleeve end.
    const order: Record<ClothesType, string[]> = {
      upper_body: ['shoulderL', 'hemL', 'hemR', 'shoulderR'],
      dresses: ['shoulderL', 'waistL', 'hemL', 'hemR', 'waistR', 'shoulderR'],
      lower_body: ['waistL', 'thighL', 'legL', 'crotch', 'legR', 'thighR', 'waistR'],
    };
    const T = json.body_targets as Record<string, [number, number]>;
    const region = polygonMask(order[type].map((k) => T[k]!), person.width, person.height);
    if (type === 'upper_body') {
      const r = 0.14 * torso(analysis.pose).sw;
      for (const [a, b] of [[T.shoulderL!, T.sleeveL!], [T.shoulderR!, T.sleeveR!]] as Array<[[number, number], [number, number]]>) {
        for (let y = 0; y < person.height; y++) {
          for (let x = 0; x < person.width; x++) {
            const dx = b[0] - a[0], dy = b[1] - a[1];
            const t = Math.max(0, Math.min(1, ((x - a[0]) * dx + (y - a[1]) * dy) / (dx * dx + dy * dy || 1)));
            if (Math.hypot(x - a[0] - t * dx, y - a[1] - t * dy) < r) region[y * person.width + x] = 1;
          }
        }
      }
    }
    const arms = forearms(analysis, json.body_targets, type);
    let inter = 0, uni = 0;
    for (let i = 0; i < region.length; i++) {
      if (protect[i] || arms[i] || analysis.person[i]! <= 127) continue;
      const r = region[i]!;
      const g = alpha[i]! > 127 ? 1 : 0;
      inter += r & g;
      uni += r | g;
    }
    expect(uni).toBeGreaterThan(5000);
    expect(inter / uni).toBeGreaterThanOrEqual(0.7);
  });

  it('leaves the face and hair unchanged, and the background outside the person', () => {
    const { out } = results.get(type)!;
    const face = mad(out, person, (i) => protect[i] === 1);
    expect(face.n).toBeGreaterThan(2000);
    expect(face.mad).toBeLessThan(2);
    const { sw } = torso(analysis.pose);
    const r = Math.round(0.05 * sw);
    const W = person.width;
    const nearPerson = (i: number) => {
      const x = i % W, y = (i - x) / W;
      for (let dy = -r; dy <= r; dy += r) for (let dx = -r; dx <= r; dx += r) {
        const xx = x + dx, yy = y + dy;
        if (xx >= 0 && yy >= 0 && xx < W && yy < person.height && analysis.person[yy * W + xx]! > 60) return true;
      }
      return false;
    };
    expect(mad(out, person, (i) => !nearPerson(i)).mad).toBeLessThan(2);
  });

  it("shows the garment's colours and pattern in the region", () => {
    const { out, alpha } = results.get(type)!;
    const { main, second } = GARMENT_COLORS[GARMENTS[type][1]];
    const labMain = srgbToLab(main[0], main[1], main[2]);
    const labSecond = srgbToLab(second[0], second[1], second[2]);
    let n = 0, nMain = 0, nSecond = 0;
    for (let i = 0; i < alpha.length; i++) {
      if (alpha[i]! < 230) continue;
      const lab = srgbToLab(out.data[3 * i]!, out.data[3 * i + 1]!, out.data[3 * i + 2]!);
      const d = (ref: number[]) => Math.hypot(lab[0] - ref[0]!, lab[1] - ref[1]!, lab[2] - ref[2]!);
      n++;
      if (d(labMain) < 28) nMain++;
      if (d(labSecond) < 28) nSecond++;
    }
    expect(n).toBeGreaterThan(3000);
    expect(nMain / n).toBeGreaterThan(0.3); // the dominant colour
    expect(nSecond / n).toBeGreaterThan(0.04); // the pattern's second colour is there too
  });
});

describe('try-on leaves the other half of the body alone', () => {
  it('upper_body: the legs below the hem are untouched', () => {
    const { out } = results.get('upper_body')!;
    const { hL, hR, tl } = torso(analysis.pose);
    const below = Math.max(hL[1], hR[1]) + 0.35 * tl;
    expect(mad(out, person, (i) => Math.floor(i / person.width) > below).mad).toBeLessThan(2);
  });
  it('lower_body: the chest and shoulders are untouched', () => {
    const { out } = results.get('lower_body')!;
    const { sL, sR, hL, hR } = torso(analysis.pose);
    const above = (Math.min(sL[1], sR[1]) + Math.min(hL[1], hR[1])) / 2;
    expect(mad(out, person, (i) => Math.floor(i / person.width) < above).mad).toBeLessThan(2);
  });
});

describe('try-on inputs', () => {
  it('takes the garment from a photo of a person wearing it (her green top, onto her mirror image)', async () => {
    const mirrored = Buffer.from(await sharp(personBytes).flop().jpeg({ quality: 92 }).toBuffer());
    const r = await run('upper_body', personBytes, mirrored);
    const json = JSON.parse(Buffer.from(r.files[2]!.data).toString());
    expect(json.garment_source).toBe('person');
    expect(r.notes).toContain('garment from: a person wearing it');
    const out = await decodeImage(r.files[0]!.data, { maxPixels: 4e7 });
    const alpha = await sharp(Buffer.from(r.files[1]!.data)).extractChannel(0).raw().toBuffer();
    let n = 0, green = 0;
    for (let i = 0; i < alpha.length; i++) {
      if (alpha[i]! < 230) continue;
      n++;
      const [rr, gg, bb] = [out.data[3 * i]!, out.data[3 * i + 1]!, out.data[3 * i + 2]!];
      if (gg > rr + 25 && gg > bb + 10) green++;
    }
    expect(n).toBeGreaterThan(2000);
    // The region worn in a photo includes the bare skin a tank top shows: green is its main colour
    // besides skin, not most of it.
    expect(green / n).toBeGreaterThan(0.1);
  }, 60_000);

  it('forced_cutting crops to 3:4 around the body and reports the crop; the prompt is stored, not used', async () => {
    const wide = await sharp(personBytes).extend({ left: 300, right: 300, background: '#777' }).jpeg().toBuffer();
    const r = await run('upper_body', await tshirt(), wide, { forced_cutting: true, prompt: 'a red striped tee' });
    const json = JSON.parse(Buffer.from(r.files[2]!.data).toString());
    expect(json.width / json.height).toBeCloseTo(0.75, 2);
    expect(json.crop.width / json.crop.height).toBeCloseTo(0.75, 2);
    // A crop inside the padded picture, not the picture itself.
    expect(json.crop.x).toBeGreaterThan(0);
    expect(json.crop.width).toBeLessThan(960);
    expect(json).toMatchObject({ prompt: 'a red striped tee', prompt_used: false, forced_cutting: true });
  }, 60_000);

  it.each([
    ['no person in the model image', async () => tshirt(), 'upper_body', /^no person found in the model image$/],
    ['a model image without hips for lower_body', async () => sharp(personBytes).extract({ left: 0, top: 0, width: 360, height: 560 }).jpeg().toBuffer(), 'lower_body', /^the model image does not show the hips, which lower_body needs$/],
  ] as const)('refuses %s', async (_n, model, type, message) => {
    const err = await run(type as ClothesType, await tshirt(), await model()).catch((e: Error) => e);
    expect((err as Error).message).toMatch(message);
  }, 60_000);
});
