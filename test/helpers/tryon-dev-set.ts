// The try-on development set (issue 12): photos of real people, one target person each (the
// largest, most central one), most with neighbours in frame, from face-api's demo sample5 (five
// women sitting on stairs) and sample6 (four women standing), fetched by test/helpers/dev-photos.ts
// (MIT, sha256-pinned; samples 1-4 are reserved for acceptance checks and never used), plus the
// repository's fixtures (person-standing.jpg, group-four.jpg, both from sample6) and mirrored and
// rescaled variants.
//
// Each entry says which clothes types its body shows (a sitting person has no standing legs; a crop
// that ends at the waist shows no lower body), so a test runs every photo x every type it can judge.
import fs from 'node:fs';
import sharp, { type Sharp } from 'sharp';
import type { ClothesType } from '../../src/domain/job.ts';
import { facePhoto, type SampleName } from './dev-photos.ts';

interface Source {
  /** A crop of a face-api sample (original pixels) or a fixture file. */
  from: { sample: SampleName; x: number; y: number; w: number; h: number } | { fixture: string; crop?: { x: number; y: number; w: number; h: number } };
  mirror?: boolean;
  /** Output width in pixels (rescaled; default: the crop's own). */
  width?: number;
  /** Clothes types whose body region the photo shows. */
  types: ClothesType[];
  what: string;
}

const ALL: ClothesType[] = ['upper_body', 'lower_body', 'dresses'];

export const TRYON_DEV: Record<string, Source> = {
  // sample6: four women standing side by side (faces at x ~ 348, 776, 1266, 1588), knees up.
  's6-green-dress': { from: { sample: 'sample6', x: 40, y: 300, w: 720, h: 1237 }, types: ALL, what: 'standing, long hair on the shoulder, neighbour on the right' },
  's6-red-dress': { from: { sample: 'sample6', x: 500, y: 170, w: 660, h: 1367 }, types: ALL, what: 'standing, turned, long hair over the chest, neighbours both sides' },
  's6-stripes': { from: { sample: 'sample6', x: 900, y: 130, w: 640, h: 1407 }, width: 520, types: ALL, what: 'standing, arm bent across the waist, neighbours both sides' },
  'person-standing': { from: { fixture: 'person-standing.jpg' }, types: ALL, what: 'the fixture: standing, left arm crossing to her neighbour' },
  'person-standing-mirror': { from: { fixture: 'person-standing.jpg' }, mirror: true, width: 480, types: ALL, what: 'the fixture mirrored and enlarged' },
  // 1200x3207 (3.8 MP, a phone photo's size): more than the version's max_work_pixels, so worked
  // on at a smaller scale and scaled back up.
  'person-standing-large': { from: { fixture: 'person-standing.jpg' }, width: 1200, types: ['upper_body'], what: 'the fixture enlarged to a phone photo\'s size (3.8 MP): worked at a smaller scale' },
  'group-four': { from: { fixture: 'group-four.jpg' }, types: ['upper_body', 'dresses'], what: 'the whole group of four: the most central large person is the target' },
  // sample5: five women sitting on stairs.
  's5-red-top': { from: { sample: 'sample5', x: 1300, y: 250, w: 620, h: 1148 }, types: ['upper_body'], what: 'sitting, leaning, hand on the knee, neighbour behind' },
  's5-navy': { from: { sample: 'sample5', x: 1030, y: 130, w: 560, h: 900 }, mirror: true, types: ['upper_body'], what: 'sitting, mirrored, neighbours on both sides' },
  's5-top': { from: { sample: 'sample5', x: 640, y: 10, w: 560, h: 860 }, width: 420, types: ['upper_body'], what: 'sitting at the top of the stairs, arm on the knee, rescaled' },
  // opencv-doc's messi5.jpg (test/fixtures/README.md), head to the shorts (the hairstyle's crop), enlarged x3: the set's only man
  // (the reference detector, a short-range one, misses his 36 px face unless it is 15% of the photo's long side).
  messi: { from: { fixture: 'messi5.jpg', crop: { x: 150, y: 30, w: 240, h: 240 } }, width: 720, types: ['upper_body'], what: 'a footballer mid-kick: leaning, arms spread, a blurred crowd behind' },
};

export const TRYON_DEV_NAMES = Object.keys(TRYON_DEV);

/** One development photo's JPEG bytes (quality 92). */
export async function tryonPhoto(name: string): Promise<Buffer> {
  const s = TRYON_DEV[name];
  if (!s) throw new Error(`no try-on development photo ${name} (have: ${TRYON_DEV_NAMES.join(', ')})`);
  let img: Sharp;
  if ('fixture' in s.from) {
    img = sharp(fs.readFileSync(`test/fixtures/${s.from.fixture}`));
    const c = s.from.crop;
    if (c) img = sharp(await img.extract({ left: c.x, top: c.y, width: c.w, height: c.h }).toBuffer());
  }
  else {
    const { sample, x, y, w, h } = s.from;
    img = sharp(await facePhoto(sample)).extract({ left: x, top: y, width: w, height: h });
  }
  if (s.mirror) img = sharp(await img.toBuffer()).flop();
  if (s.width) img = sharp(await img.toBuffer()).resize(s.width);
  return img.jpeg({ quality: 92 }).toBuffer();
}
