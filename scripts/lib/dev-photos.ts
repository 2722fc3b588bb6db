// Development photos of real people for the picture pipelines (issues 11 and 12), never committed:
// `demo/sample5.jpg` (five women on stairs) and `demo/sample6.jpg` (four women standing) from
// `@vladmandic/face-api@1.7.15` (MIT), fetched by `npm pack` (tarball and files sha256-pinned) into
// models/cache/, then cropped here; and one small photo committed as a fixture (messi5.jpg, below).
// Samples 1-4 of that tarball are reserved for acceptance checks outside the repository: they are
// not pinned here and must never be.
//
// Hairstyle crops: one square per person, centred on that person's face (the face about 30% of the
// side, shoulders and parts of the neighbours in frame), so the target is the most central face and
// the neighbours are what must stay unchanged. Variants: mirrored, rotated (the crop is taken from a
// larger square, rotated, and its centre kept, so no fill corners), rescaled.
import path from 'node:path';
import fs from 'node:fs';
import sharp, { type Sharp } from 'sharp';
import { pinnedNpmFiles, type NpmTarball } from '../../src/tooling/fetch-graphs.ts';

const FACE_API: NpmTarball = {
  package: '@vladmandic/face-api',
  version: '1.7.15',
  tarball_sha256: '0d77fffeef362ef9c0939cf6c567f3a2e8e177f114fa257a3270cbd2e509b031',
};
const SAMPLES = {
  sample5: { path: 'package/demo/sample5.jpg', sha256: '6d45095ebb182d8f975c0790e0e4eefd86fbb40609cf4b271776d92e12662938' },
  sample6: { path: 'package/demo/sample6.jpg', sha256: '9baad80f9d5e306fb9b8c0913d44445f1e95848df317530efb03d0934c57ba87' },
} as const;
export type SampleName = keyof typeof SAMPLES;

const modelsDir = path.resolve('models');

/** The original bytes of face-api's demo sample5 or sample6 (1920 px wide). */
export async function facePhoto(name: SampleName): Promise<Buffer> {
  const s = SAMPLES[name];
  const files = await pinnedNpmFiles(modelsDir, FACE_API, { [s.path]: s.sha256 });
  return fs.readFileSync(files[s.path]!);
}

/**
 * messi5.jpg from Debian's opencv-doc (samples/data; Apache-2.0 AND BSD-3-Clause per the package's
 * copyright file), copied into test/fixtures/ (72 kB): a footballer in a kick, head tilted down
 * and turned, dark hair against a dark blurred crowd, his shoulder raised to his face's height.
 * The only man and the only sports photo of the set.
 */
const MESSI = 'test/fixtures/messi5.jpg';

/** A crop of a sample: left, top, width, height in the original's pixels; `scale` enlarges a small photo. */
interface Crop {
  sample: SampleName | 'messi5';
  x: number;
  y: number;
  w: number;
  h: number;
  scale?: number;
}

// Face boxes (BlazeFace, looked up once by hand) -> squares 3.4 face widths wide, the face centred
// horizontally and a third from the top; narrower where the photo's edge is near, so the face stays
// centred.
const HAIR_CROPS: Record<string, Crop> = {
  's5-top': { sample: 'sample5', x: 581, y: 22, w: 558, h: 558 },
  's5-left': { sample: 'sample5', x: 332, y: 290, w: 677, h: 677 },
  's5-right': { sample: 'sample5', x: 1160, y: 257, w: 724, h: 724 },
  's5-back': { sample: 'sample5', x: 896, y: 106, w: 612, h: 612 },
  's5-front': { sample: 'sample5', x: 114, y: 701, w: 697, h: 697 },
  's6-right': { sample: 'sample6', x: 1256, y: 102, w: 664, h: 840 },
  's6-centre-right': { sample: 'sample6', x: 875, y: 157, w: 782, h: 782 },
  's6-centre-left': { sample: 'sample6', x: 364, y: 168, w: 823, h: 823 },
  's6-left': { sample: 'sample6', x: 0, y: 352, w: 696, h: 748 },
  // 548x342 in all, his face 36 px wide: the head and shoulders, enlarged 3 times.
  messi: { sample: 'messi5', x: 150, y: 30, w: 240, h: 240, scale: 3 },
};

export type Variant = { mirror?: boolean; rotate?: number; scale?: number };

export interface DevPhoto {
  name: string;
  /** JPEG bytes (quality 92). */
  bytes: Buffer;
}

async function cropOf(c: Crop, v: Variant): Promise<Buffer> {
  const src = c.sample === 'messi5' ? fs.readFileSync(path.resolve(MESSI)) : await facePhoto(c.sample);
  const meta = await sharp(src).metadata();
  const W = meta.width!, H = meta.height!;
  let img: Sharp;
  if (v.rotate) {
    // A larger square around the same centre, rotated, then its central w x h.
    const big = Math.ceil(Math.max(c.w, c.h) * (Math.abs(Math.cos((v.rotate * Math.PI) / 180)) + Math.abs(Math.sin((v.rotate * Math.PI) / 180))));
    const cx = c.x + c.w / 2, cy = c.y + c.h / 2;
    const left = Math.round(Math.min(Math.max(0, cx - big / 2), W - Math.min(big, W)));
    const top = Math.round(Math.min(Math.max(0, cy - big / 2), H - Math.min(big, H)));
    const bw = Math.min(big, W), bh = Math.min(big, H);
    const rotated = await sharp(src).extract({ left, top, width: bw, height: bh }).rotate(v.rotate, { background: '#808080' }).toBuffer({ resolveWithObject: true });
    const rw = rotated.info.width, rh = rotated.info.height;
    const w = Math.min(c.w, rw), h = Math.min(c.h, rh);
    img = sharp(rotated.data).extract({ left: Math.round((rw - w) / 2), top: Math.round((rh - h) / 2), width: w, height: h });
  } else {
    img = sharp(src).extract({ left: c.x, top: c.y, width: c.w, height: c.h });
  }
  if (v.mirror) img = sharp(await img.toBuffer()).flop();
  const scale = (c.scale ?? 1) * (v.scale ?? 1);
  if (scale !== 1) img = sharp(await img.toBuffer()).resize(Math.round(c.w * scale));
  return img.jpeg({ quality: 92 }).toBuffer();
}

/**
 * Names of the hairstyle development crops (one target person each): face-api's first, then the
 * photos from elsewhere (the tests rotate styles and colours by position, so a new photo goes last).
 */
export const HAIR_PHOTOS = Object.keys(HAIR_CROPS).filter((n) => HAIR_CROPS[n]!.sample !== 'messi5');
export const HAIR_OTHER_PHOTOS = Object.keys(HAIR_CROPS).filter((n) => HAIR_CROPS[n]!.sample === 'messi5');

/** The rotated, mirrored and rescaled variants the hairstyle tests also run. */
export const HAIR_VARIANTS: Array<{ base: string; variant: Variant }> = [
  { base: 's6-centre-left', variant: { rotate: 15 } },
  { base: 's6-centre-left', variant: { rotate: -35 } },
  { base: 's5-right', variant: { rotate: -15 } },
  { base: 's5-right', variant: { rotate: 50 } },
  { base: 's6-right', variant: { mirror: true } },
  { base: 's5-top', variant: { scale: 1.6 } },
];

/**
 * Development crops scaled down to faces about 100 px wide, as in a whole group photo of about 1 MP
 * (face-api's sample5 and sample6 at 1150 px wide): the size users upload. After the other photos
 * in the tests (their styles and colours rotate by position).
 */
export const HAIR_SMALL_VARIANTS: Array<{ base: string; variant: Variant }> = [
  { base: 's6-centre-left', variant: { scale: 0.6 } },
  { base: 's5-left', variant: { scale: 0.6 } },
  { base: 's6-right', variant: { scale: 0.6 } },
];

export function variantName(base: string, v: Variant): string {
  return [base, v.mirror ? 'mirror' : '', v.rotate ? `rot${v.rotate}` : '', v.scale ? `x${v.scale}` : ''].filter(Boolean).join('-');
}

/** One hairstyle development photo by crop name, with an optional variant. */
export async function hairPhoto(base: string, variant: Variant = {}): Promise<DevPhoto> {
  const c = HAIR_CROPS[base];
  if (!c) throw new Error(`no hairstyle development photo ${base} (have: ${HAIR_PHOTOS.join(', ')})`);
  return { name: variantName(base, variant), bytes: await cropOf(c, variant) };
}
