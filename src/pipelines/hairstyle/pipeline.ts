// Hairstyle change from 1 to 4 frontal photos.
//   decode (EXIF) -> BlazeFace on each photo (largest face; refuse no face, a face under 10% of
//   the short side, roll beyond 35 degrees, naming the photo) -> the best photo (largest x most
//   frontal x sharpest) -> FaceMesh landmarks -> original hair: BiSeNet face parsing (hair class,
//   soft at full resolution), or person segmentation + landmarks + colour statistics ->
//   per output: template rendering -> removal of the old hair it does not cover (push-pull
//   inpainting graph) -> compositing in CIE Lab -> encode (JPEG, quality configurable; PNG on request)
// Outputs: result-k.jpg|png (k = 1..num_outputs), hair-mask-k.png, hairstyle.json.
// The rendering stage is one function (renderHair): a generative ONNX version can replace it
// without touching analysis, removal or compositing.
import { createHash } from 'node:crypto';
import { AppError } from '../../errors/codes.ts';
import { decodeImage, encodeJpeg, encodePng, type RgbImage } from '../../imaging/image.ts';
import type { ModelSession } from '../../models/onnx.ts';
import { detectFaces, type Face } from '../face-detection/pipeline.ts';
import { CLASS, parseFace, softClassMask, readParsingParams } from '../face-parsing/pipeline.ts';
import type { Detection } from '../face-landmarks/mediapipe.ts';
import { meshLandmarks } from '../face-landmarks/pipeline.ts';
import { HairstyleInput } from '../inputs.ts';
import { segmentPerson } from '../person-segmentation/pipeline.ts';
import { jsonFile, numberParam, stringParam } from '../params.ts';
import { stageTimer, type PipelineContext, type PipelineRunner, type StageTimer } from '../types.ts';
import { srgbToLab } from './color.ts';
import { anchorsOf, makeFrame, ovalMask, rollDegrees, toFrame } from './frame.ts';
import { alphaMask, composite, inpaint, removalMask, renderHair, type HeadAnalysis } from './render.ts';
import { variantFor } from './templates.ts';

const MIN_FACE_FRACTION = 0.1;
const MAX_ROLL_DEGREES = 35;

interface Candidate {
  index: number;
  image: RgbImage;
  face: Face;
  fraction: number;
  frontal: number;
  sharpness: number;
}

/** Variance of the Laplacian over the face box (grey, on a 96 px wide copy): a sharpness measure. */
function sharpness(img: RgbImage, face: Face): number {
  const { x, y, width, height } = face.box;
  const step = Math.max(1, width / 96);
  const cols = Math.floor(width / step);
  const rows = Math.floor(height / step);
  const g = (c: number, r: number) => {
    const px = Math.min(img.width - 1, Math.floor(x + c * step));
    const py = Math.min(img.height - 1, Math.floor(y + r * step));
    const o = (py * img.width + px) * 3;
    return 0.299 * img.data[o]! + 0.587 * img.data[o + 1]! + 0.114 * img.data[o + 2]!;
  };
  let sum = 0, sum2 = 0, n = 0;
  for (let r = 1; r < rows - 1; r++) {
    for (let c = 1; c < cols - 1; c++) {
      const l = 4 * g(c, r) - g(c - 1, r) - g(c + 1, r) - g(c, r - 1) - g(c, r + 1);
      sum += l;
      sum2 += l * l;
      n++;
    }
  }
  return n ? sum2 / n - (sum / n) ** 2 : 0;
}

/** 1 - how far the nose sits off the eyes' midpoint, relative to the eye distance (0 = profile). */
function frontality(face: Face): number {
  const { right_eye: r, left_eye: l, nose_tip: n } = face.keypoints;
  const eyes = Math.hypot(l.x - r.x, l.y - r.y) || 1;
  return Math.max(0, 1 - (2 * Math.abs(n.x - (r.x + l.x) / 2)) / eyes);
}

async function chooseBest(ctx: PipelineContext, images: RgbImage[], detector: ModelSession, t: StageTimer): Promise<{ best: Candidate; notes: string[] }> {
  const P = (k: string) => numberParam(ctx.params, k, 'hairstyle');
  const det = { input_size: P('detector_size'), min_score: P('min_score'), iou_threshold: P('iou_threshold'), max_faces: 16 };
  const candidates: Candidate[] = [];
  for (const [i, image] of images.entries()) {
    const which = images.length > 1 ? `image ${i + 1}` : 'the image';
    const faces = await detectFaces(detector, image, det, det.min_score, t);
    const face = [...faces].sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height)[0];
    if (!face) throw new AppError('NO_FACE_FOUND', `no face found in ${which}`);
    const fraction = face.box.width / Math.min(image.width, image.height);
    if (fraction < MIN_FACE_FRACTION) {
      throw new AppError('FACE_TOO_SMALL', `the face in ${which} is ${Math.round(fraction * 100)}% of the picture's short side; at least ${MIN_FACE_FRACTION * 100}% is needed`);
    }
    const { right_eye: r, left_eye: l } = face.keypoints;
    const roll = (Math.atan2(l.y - r.y, l.x - r.x) * 180) / Math.PI;
    if (Math.abs(roll) > MAX_ROLL_DEGREES) {
      throw new AppError('FACE_TILTED', `the face in ${which} is tilted ${Math.round(Math.abs(roll))} degrees; at most ${MAX_ROLL_DEGREES} are accepted`);
    }
    candidates.push({ index: i, image, face, fraction, frontal: frontality(face), sharpness: sharpness(image, face) });
  }
  // Largest in pixels (more detail to work with), most frontal, sharpest.
  const maxSharp = Math.max(...candidates.map((c) => c.sharpness), 1e-6);
  const maxWidth = Math.max(...candidates.map((c) => c.face.box.width));
  const score = (c: Candidate) => (c.face.box.width / maxWidth) * (0.5 + c.frontal) * (0.5 + c.sharpness / maxSharp);
  const best = [...candidates].sort((a, b) => score(b) - score(a))[0]!;
  const describe = (c: Candidate) =>
    `image ${c.index + 1}: face ${Math.round(c.face.box.width)} px wide (${Math.round(c.fraction * 100)}% of the short side), frontal ${c.frontal.toFixed(2)}, sharpness ${Math.round(c.sharpness)}`;
  const notes = [`chosen: image ${best.index + 1} (largest x most frontal x sharpest face)`, ...candidates.map(describe)];
  return { best, notes };
}

/** FaceMesh on the chosen face, from BlazeFace's box and eye keypoints (as MediaPipe crops it). */
async function landmarksOf(mesh: ModelSession, image: RgbImage, face: Face, t: StageTimer): Promise<Array<[number, number, number]>> {
  const det: Detection = {
    xMin: face.box.x,
    yMin: face.box.y,
    width: face.box.width,
    height: face.box.height,
    keypoints: [face.keypoints.right_eye, face.keypoints.left_eye],
    score: face.score,
  };
  const { points } = await meshLandmarks(mesh, image, det, 1.5, 192, t, ['landmarks', 'landmarks', 'landmarks']);
  return points;
}

/** Original hair without BiSeNet: the person mask, off the face, near the head, hair-coloured. */
async function hairFromSegmentation(ctx: PipelineContext, seg: ModelSession, an: Omit<HeadAnalysis, 'hair'>, lm: Array<[number, number, number]>, t: StageTimer): Promise<Uint8Array> {
  const { image, frame, anchors, protect } = an;
  const W = numberParam(ctx.params, 'segmenter_width', 'hairstyle');
  const H = numberParam(ctx.params, 'segmenter_height', 'hairstyle');
  const person = await segmentPerson(seg, image, W, H, t, { stages: ['segmentation', 'segmentation', 'segmentation'] });
  // Hair colour: median Lab of person pixels just above the forehead (landmark 10).
  const samples: Array<[number, number, number]> = [];
  const [fx, fy] = [lm[10]![0], lm[10]![1]];
  const r = frame.scale * 0.12;
  for (let y = Math.max(0, Math.round(fy - 2.2 * r)); y < Math.min(image.height, Math.round(fy - 0.4 * r)); y++) {
    for (let x = Math.max(0, Math.round(fx - r)); x < Math.min(image.width, Math.round(fx + r)); x++) {
      const i = y * image.width + x;
      if (person[i]! > 128) samples.push(srgbToLab(image.data[3 * i]!, image.data[3 * i + 1]!, image.data[3 * i + 2]!));
    }
  }
  const med = (k: 0 | 1 | 2) => [...samples.map((s) => s[k])].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? 0;
  const ref = [med(0), med(1), med(2)] as const;
  const hair = new Uint8Array(image.width * image.height);
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const i = y * image.width + x;
      if (person[i]! < 100 || protect[i]) continue;
      const [u, v] = toFrame(frame, x + 0.5, y + 0.5);
      if (v > anchors.chin + 0.9 || Math.abs(u) > 1.2) continue;
      const insideFace = Math.abs(u) < anchors.ovalHalfWidth(v) && v > anchors.forehead + 0.05 && v < anchors.chin;
      if (insideFace) continue;
      const [L, A, B] = srgbToLab(image.data[3 * i]!, image.data[3 * i + 1]!, image.data[3 * i + 2]!);
      const dE = Math.hypot(L - ref[0], A - ref[1], B - ref[2]);
      const aboveHead = v < anchors.forehead + 0.02;
      if (aboveHead || dE < 22) hair[i] = person[i]!;
    }
  }
  return hair;
}

export async function analyze(ctx: PipelineContext, images: RgbImage[], t: StageTimer): Promise<{ analysis: HeadAnalysis; notes: string[]; chosen: Candidate }> {
  const detector = await ctx.session('detector');
  const { best, notes } = await chooseBest(ctx, images, detector, t);
  const mesh = await ctx.session('landmarks');
  const lm = await landmarksOf(mesh, best.image, best.face, t);
  const frame = makeFrame(lm);
  const anchors = anchorsOf(frame, lm);
  const { width: W, height: H } = best.image;
  const oval = ovalMask(lm, W, H);
  const protect = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      if (oval[i] && toFrame(frame, x + 0.5, y + 0.5)[1] > anchors.brows) protect[i] = 1;
    }
  }
  const base = { image: best.image, frame, anchors, protect };
  let hair: Uint8Array;
  if (stringParam(ctx.params, 'hair_source', 'hairstyle') === 'parsing') {
    const parser = await ctx.session('parser');
    const parse = await parseFace(parser, best.image, best.face, readParsingParams(ctx.params), t);
    hair = await t.time('postprocess', () => softClassMask(parse, best.image, [CLASS.hair, CLASS.hat], 1));
  } else {
    hair = await hairFromSegmentation(ctx, await ctx.session('segmenter'), base, lm, t);
  }
  notes.push(`face roll ${rollDegrees(frame).toFixed(1)} degrees, face width ${Math.round(frame.scale)} px`);
  return { analysis: { ...base, hair }, notes, chosen: best };
}

export const hairstyle: PipelineRunner = {
  async run(ctx, rawInput, files) {
    const input = HairstyleInput.parse(rawInput);
    const t = stageTimer();
    const keys = Object.keys(files).filter((k) => k === 'image_files' || k.startsWith('image_files.')).sort((a, b) => Number(a.split('.')[1] ?? 0) - Number(b.split('.')[1] ?? 0));
    const images = await t.time('decode', () => Promise.all(keys.map((k) => decodeImage(files[k]!, { maxPixels: ctx.maxPixels }))));
    const { analysis, notes, chosen } = await analyze(ctx, images, t);
    // Deterministic variants: the same photos and choices give the same pictures on a retry.
    const digest = createHash('sha256');
    for (const k of keys) digest.update(files[k]!);
    digest.update(`${input.hairstyle}|${input.hair_color}`);
    const seed = digest.digest().readUInt32LE(0);
    const inpainter = await ctx.session('inpaint');
    const quality = input.jpeg_quality ?? numberParam(ctx.params, 'jpeg_quality', 'hairstyle');
    const outFiles = [];
    const variants = [];
    for (let k = 0; k < input.num_outputs; k++) {
      const p = variantFor(seed, k);
      variants.push(p);
      const layer = await t.time('render', () => renderHair(analysis, input.hairstyle, p));
      const hole = await t.time('removal', () => removalMask(analysis, layer));
      const filled = await t.infer('removal', () => inpaint(inpainter, analysis.image, hole));
      const result = await t.time('composite', () => composite(filled, layer, input.hair_color));
      const { width, height } = result;
      outFiles.push(
        await t.time('encode', async () =>
          input.output_format === 'png'
            ? { name: `result-${k + 1}.png`, contentType: 'image/png', data: await encodePng(result.data, width, height, 3) }
            : { name: `result-${k + 1}.jpg`, contentType: 'image/jpeg', data: await encodeJpeg(result, quality) },
        ),
        { name: `hair-mask-${k + 1}.png`, contentType: 'image/png', data: await encodePng(alphaMask(layer), width, height, 1) },
      );
    }
    outFiles.push(
      jsonFile('hairstyle.json', {
        hairstyle: input.hairstyle,
        hair_color: input.hair_color,
        chosen_image: chosen.index + 1,
        face: chosen.face.box,
        width: analysis.image.width,
        height: analysis.image.height,
        variants,
      }),
    );
    return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [...notes, `style: ${input.hairstyle}, colour: ${input.hair_color}, outputs: ${input.num_outputs}`] };
  },
};
