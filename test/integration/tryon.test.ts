// Virtual try-on on a real person photo (face-api demo, MIT) with garments the project draws, real
// graphs on the CPU provider: coverage, untouched face/hair/background, colour and pattern, and the
// body parts a clothes type must leave alone. Every region is judged on independent references run on
// the input photo (test/helpers/references.ts): MoveNet Lightning keypoints and the Meet person mask
// (the pipeline uses Thunder and Selfie), the face-landmarks version's face oval; never the
// pipeline's own body targets, masks or protection.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClothesType } from '../../src/domain/job.ts';
import { decodeImage, type RgbImage } from '../../src/imaging/image.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { polygonMask } from '../../src/imaging/polygon.ts';
import { tryon } from '../../src/pipelines/tryon/pipeline.ts';
import type { PipelineContext } from '../../src/pipelines/types.ts';
import { srgbToLab } from '../../src/steps/color.ts';
import { ovalMask } from '../../src/steps/face-mesh.ts';
import { GARMENT_COLORS, dress, trousers, tshirt } from '../helpers/garments.ts';
import { bodyReference, referenceLandmarks, releaseReferences, type BodyReference } from '../helpers/references.ts';

const registry = loadRegistry(path.resolve('models'));
const version = registry.byName('tryon-classic')!;
const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: () => {} });
const ctx: PipelineContext = { params: version.manifest.params, session: (g) => sessions.get(version.id, g), maxPixels: 4e7 };
const personBytes = fs.readFileSync('test/fixtures/person-standing.jpg');
afterAll(async () => {
  await sessions.releaseAll();
  await releaseReferences();
});

let person: RgbImage;
let body: BodyReference;
let face: Uint8Array;
const results = new Map<ClothesType, { out: RgbImage; alpha: Uint8Array; json: any }>();
const GARMENTS: Record<ClothesType, [() => Promise<Buffer>, keyof typeof GARMENT_COLORS]> = {
  upper_body: [tshirt, 'shirt'],
  lower_body: [trousers, 'trousers'],
  dresses: [dress, 'dress'],
};

async function run(type: ClothesType, garment: Uint8Array, model: Uint8Array = personBytes, extra: Record<string, unknown> = {}) {
  return tryon.run(ctx, { clothes_image: 'http://x/g.png', custom_model: 'http://x/p.jpg', clothes_type: type, output_format: 'png', ...extra }, { clothes_image: [garment], custom_model: [model] });
}

beforeAll(async () => {
  person = await decodeImage(personBytes, { maxPixels: 4e7 });
  body = await bodyReference(personBytes);
  face = ovalMask(await referenceLandmarks(personBytes), person.width, person.height);
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

type P = [number, number];
const kp = (k: string): P => [body.keypoints[k]!.x, body.keypoints[k]!.y];
const lerp = (a: P, b: P, t: number): P => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];

/**
 * The region a clothes type must cover, from the reference keypoints, on the reference person mask:
 * the torso (shoulders to hips) for upper_body and dresses; hips to halfway to the knees for
 * lower_body (the photo ends at mid-thigh).
 */
function targetRegion(type: ClothesType): Uint8Array {
  const [sL, sR, hL, hR] = [kp('right_shoulder'), kp('left_shoulder'), kp('right_hip'), kp('left_hip')];
  const poly: P[] =
    type === 'lower_body'
      ? [hL, hR, lerp(hR, kp('left_knee'), 0.5), lerp(hL, kp('right_knee'), 0.5)]
      : [lerp(sL, hL, 0.1), lerp(sR, hR, 0.1), hR, hL];
  const region = polygonMask(poly, person.width, person.height);
  for (let i = 0; i < region.length; i++) if (body.person[i]! <= 127 || face[i]) region[i] = 0;
  return region;
}

/** The reference person mask grown by r pixels (loose clothes and the mask's soft edge). */
function personGrown(r: number): Uint8Array {
  const W = person.width, H = person.height;
  const out = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    if (body.person[y * W + x]! <= 127) continue;
    for (let yy = Math.max(0, y - r); yy <= Math.min(H - 1, y + r); yy++) for (let xx = Math.max(0, x - r); xx <= Math.min(W - 1, x + r); xx++) out[yy * W + xx] = 1;
  }
  return out;
}

describe.each(['upper_body', 'lower_body', 'dresses'] as const)('try-on %s', (type) => {
  // Known defect (issue 12): on this photo the T-shirt covers 54% of the reference torso (her right
  // arm crosses it and the sleeve lands on her neighbour); it.fails keeps the 70% bar visible and
  // turns red once the try-on meets it, so the marker gets removed.
  (type === 'upper_body' ? it.fails : it)('covers at least 70% of the reference body region', () => {
    const { alpha } = results.get(type)!;
    const region = targetRegion(type);
    let area = 0, covered = 0;
    for (let i = 0; i < region.length; i++) if (region[i]) (area++, alpha[i]! > 127 && covered++);
    expect(area).toBeGreaterThan(5000);
    expect(covered / area, 'target region covered').toBeGreaterThanOrEqual(0.7);
  });

  // The Meet mask covers everyone in the photo, so this catches a garment off any person, not one
  // on the neighbour (instance separation is issue 12).
  it('puts under 3% of the garment off the reference person mask', () => {
    const { alpha } = results.get(type)!;
    const near = personGrown(Math.round(0.02 * person.width));
    let garment = 0, outside = 0;
    for (let i = 0; i < alpha.length; i++) if (alpha[i]! > 127) (garment++, near[i] || outside++);
    expect(garment).toBeGreaterThan(5000);
    expect(outside / garment, 'garment pixels off the person').toBeLessThan(0.03);
  });

  it('leaves the face and the background away from the person unchanged', () => {
    const { out } = results.get(type)!;
    const f = mad(out, person, (i) => face[i] === 1);
    expect(f.n).toBeGreaterThan(2000);
    expect(f.mad).toBeLessThan(2);
    const near = personGrown(Math.round(0.05 * person.width));
    const bg = mad(out, person, (i) => !near[i]);
    expect(bg.n).toBeGreaterThan(20000);
    expect(bg.mad).toBeLessThan(2);
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
  // Rows from the reference keypoints: the hips' row plus 35% of the torso length, the chest's row.
  it('upper_body: the legs below the hem are untouched', () => {
    const { out } = results.get('upper_body')!;
    const hips = Math.max(kp('left_hip')[1], kp('right_hip')[1]);
    const torsoLength = hips - Math.min(kp('left_shoulder')[1], kp('right_shoulder')[1]);
    const below = hips + 0.35 * torsoLength;
    const m = mad(out, person, (i) => Math.floor(i / person.width) > below);
    expect(m.n).toBeGreaterThan(5000);
    expect(m.mad).toBeLessThan(2);
  });
  it('lower_body: the chest and shoulders are untouched', () => {
    const { out } = results.get('lower_body')!;
    const above = (Math.min(kp('left_shoulder')[1], kp('right_shoulder')[1]) + Math.min(kp('left_hip')[1], kp('right_hip')[1])) / 2;
    const m = mad(out, person, (i) => Math.floor(i / person.width) < above);
    expect(m.n).toBeGreaterThan(5000);
    expect(m.mad).toBeLessThan(2);
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
