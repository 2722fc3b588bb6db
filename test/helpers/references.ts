// Independent references for judging pipeline outputs: other versions (other models, or the same
// model run another way) run through their own runners on the INPUT photo, never the pipeline's
// own masks or targets.
//   faceBelowBrows  the face-landmarks version (short-range detector + FaceMesh): its face oval,
//                   below the line through the brow tops
//   bodyReference   MoveNet Lightning keypoints (the try-on uses BlazePose), on a crop around the
//                   target when given one, and the Meet person mask (the try-on uses Selfie)
import path from 'node:path';
import sharp from 'sharp';
import { decodeImage } from '../../src/imaging/image.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { PIPELINES } from '../../src/pipelines/index.ts';
import { ovalMask } from '../../src/steps/face-mesh.ts';

const registry = loadRegistry(path.resolve('models'));
const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 2, allowSpinning: false, warn: () => {} });

export const releaseReferences = () => sessions.releaseAll();

async function runVersion(name: string, bytes: Uint8Array) {
  const v = registry.byName(name)!;
  const r = await PIPELINES[v.manifest.pipeline]!.run({ params: v.manifest.params, session: (g) => sessions.get(v.id, g), maxPixels: 4e7 }, { image: 'http://reference/x' }, { image: [bytes] });
  return r.files;
}

const json = (files: Array<{ name: string; data: Uint8Array }>, name: string) => JSON.parse(Buffer.from(files.find((f) => f.name === name)!.data).toString());

export type Landmarks = Array<[number, number, number]>;

/** FaceMesh landmarks of the largest face, by the face-landmarks version. */
export async function referenceLandmarks(bytes: Uint8Array): Promise<Landmarks> {
  const { faces } = json(await runVersion('face-landmarks-facemesh', bytes), 'landmarks.json') as { faces: Array<{ box: { width: number; height: number }; landmarks: Landmarks }> };
  const face = [...faces].sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0];
  if (!face) throw new Error('reference: no face found');
  return face.landmarks;
}

/** 1 inside the reference face oval, below the line through the brow tops (landmarks 105, 334). */
export function belowBrows(lm: Landmarks, width: number, height: number): Uint8Array {
  const oval = ovalMask(lm, width, height);
  const [a, b, chin] = [lm[105]!, lm[334]!, lm[152]!];
  const side = (x: number, y: number) => (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
  const chinSide = Math.sign(side(chin[0], chin[1]));
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) if (oval[y * width + x] && Math.sign(side(x + 0.5, y + 0.5)) === chinSide) out[y * width + x] = 1;
  return out;
}

export async function faceBelowBrows(bytes: Uint8Array): Promise<Uint8Array> {
  const { width, height } = await decodeImage(bytes, { maxPixels: 4e7 });
  return belowBrows(await referenceLandmarks(bytes), width, height);
}

export interface BodyReference {
  keypoints: Record<string, { x: number; y: number; score: number }>;
  /** Meet person probability 0..255. */
  person: Uint8Array;
  width: number;
  height: number;
}

/**
 * `around`: a box of the photo (pixels) holding the target person; MoveNet (a single-pose model,
 * which on a group photo may take a neighbour or join two people into one skeleton) then runs on
 * that crop and its keypoints are mapped back. The person mask is always the whole photo's.
 */
export async function bodyReference(bytes: Uint8Array, around?: { x: number; y: number; width: number; height: number }): Promise<BodyReference> {
  let pose = json(await runVersion('pose-movenet-lightning', around ? await sharp(bytes).extract({ left: around.x, top: around.y, width: around.width, height: around.height }).png().toBuffer() : bytes), 'pose.json') as { keypoints: BodyReference['keypoints']; width: number; height: number };
  if (around) {
    const full = await sharp(bytes).metadata();
    const keypoints = Object.fromEntries(Object.entries(pose.keypoints).map(([k, v]) => [k, { ...v, x: v.x + around.x, y: v.y + around.y }]));
    pose = { keypoints, width: full.width!, height: full.height! };
  }
  const seg = await runVersion('person-segmentation-meet', bytes);
  const mask = await decodeImage(seg.find((f) => f.name === 'mask.png')!.data, { maxPixels: 4e7 });
  const person = new Uint8Array(mask.width * mask.height);
  for (let i = 0; i < person.length; i++) person[i] = mask.data[3 * i]!;
  return { keypoints: pose.keypoints, person, width: pose.width, height: pose.height };
}

export interface ReferenceFace {
  box: { x: number; y: number; width: number; height: number };
  landmarks: Landmarks;
}

/** Every face the face-landmarks version finds (its own detector and FaceMesh), with landmarks. */
export async function referenceFaces(bytes: Uint8Array): Promise<{ faces: ReferenceFace[]; width: number; height: number }> {
  return json(await runVersion('face-landmarks-facemesh', bytes), 'landmarks.json') as { faces: ReferenceFace[]; width: number; height: number };
}

/** Class labels per pixel (CelebAMask-HQ ids) by the face-parsing version, on its own target face. */
export async function referenceParsing(bytes: Uint8Array): Promise<{ labels: Uint8Array; width: number; height: number }> {
  const files = await runVersion('face-parsing-bisenet', bytes);
  const png = await decodeImage(files.find((f) => f.name === 'labels.png')!.data, { maxPixels: 4e7 });
  const labels = new Uint8Array(png.width * png.height);
  for (let i = 0; i < labels.length; i++) labels[i] = png.data[3 * i]!;
  return { labels, width: png.width, height: png.height };
}
