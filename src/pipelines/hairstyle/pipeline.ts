// Hairstyle change from 1 to 4 frontal photos.
//   decode (EXIF) -> analysis (analysis.ts): BlazeFace on each photo (target face; refuse no face,
//   too small a face or too much roll, naming the photo) -> the best photo (largest x most frontal
//   x sharpest) -> its work region (the part a style can reach, on a large photo with a small
//   face; pasted back at the end) -> FaceMesh landmarks -> original hair: BiSeNet face parsing
//   (hair class, soft at full resolution), or person segmentation + landmarks + colour statistics ->
//   per output: template rendering (the first picture's drawn while the hair models run) ->
//   once: removal of the old hair any picture's new hair leaves uncovered (exemplar fill per what
//   the hair hides; the locks kept over the forehead tapered into it) -> per output: compositing in
//   CIE Lab (the kept locks dyed the new colour first) -> encode (JPEG, quality configurable; PNG on
//   request)
// Outputs: result-k.jpg|png (k = 1..num_outputs), hair-mask-k.png, hairstyle.json.
// The rendering stage is two functions in render.ts (drawHair from the head alone, placeHair
// behind other people once they are known), the removal and fill removal.ts's, the compositing
// composite.ts's: a generative ONNX version can replace drawHair without touching analysis,
// removal or compositing.
import { createHash } from 'node:crypto';
import { copyBytes, copyImage, decodeImage, pasteInto, placeMask, upscaleChanges, type RgbImage } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { jsonFile, maskFile, pictureFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { analyze, grainInFace } from './analysis.ts';
import { alphaMask, composite } from './composite.ts';
import { fillRemoved, finishLocks, opaqueCover, removal } from './removal.ts';
import { drawHair, placeHair, releaseLayer, type HairLayer } from './render.ts';
import { hairstyleSpec } from './spec.ts';
import { variantFor } from './templates.ts';

/**
 * The most pixels (work region x pictures) whose layers are all kept from drawing to compositing:
 * six float planes a picture, ~190 MB here; past it each layer is drawn again for its compositing.
 */
const KEEP_LAYERS = 8_000_000;

export const hairstyle = definePipeline(hairstyleSpec, async (ctx, input, files) => {
  const t = stageTimer(ctx.signal);
  const photos = files.image_files;
  const images = await t.time('decode', () => Promise.all(photos.map((bytes) => decodeImage(bytes, { maxPixels: ctx.maxPixels }))));
  const { head, light, complete, notes, chosen, region, scale, part } = await analyze(ctx, images, t);
  // Deterministic variants: the same photos and choices give the same pictures on a retry.
  const digest = createHash('sha256');
  for (const bytes of photos) digest.update(bytes);
  digest.update(`${input.hairstyle}|${input.hair_color}`);
  const seed = digest.digest().readUInt32LE(0);
  const quality = input.jpeg_quality ?? numberParam(ctx.params, 'jpeg_quality', 'hairstyle');
  // The chosen photo's size: the analysis may be of its work region only, pasted back below.
  const { width, height } = chosen.image;
  const outFiles = [];
  const variants = Array.from({ length: input.num_outputs }, (_, k) => variantFor(seed, k));
  // The first picture's hair is drawn while the models look for the photo's own hair (they run in
  // their own thread): on one picture that hides most of the drawing's time.
  const drawn = await t.time('render', () => drawHair(head, light, input.hairstyle, variants[0]!));
  const { analysis, look } = await complete;
  const n = input.num_outputs;
  // Worked at a smaller scale (a face over the version's max_work_face): what changed is scaled back up over the
  // region's own pixels, with the photo's grain at its own resolution.
  const atScale = scale < 1 ? { full: part, grain: 1.7 * grainInFace(chosen.image, chosen.face.box) } : null;
  const backToPhoto = async (done: RgbImage, k: number): Promise<RgbImage> =>
    atScale ? { data: await upscaleChanges(atScale.full, analysis.image, done, atScale.grain, seed + k), width: atScale.full.width, height: atScale.full.height } : done;
  const maskToPhoto = async (mask: Uint8Array): Promise<Uint8Array> =>
    atScale ? placeMask(mask, analysis.image.width, analysis.image.height, atScale.full.width, atScale.full.height, 0, { width: atScale.full.width, height: atScale.full.height, left: 0, top: 0 }) : mask;
  // One removal serves every picture: the old hair that any of them leaves uncovered is filled
  // once (a lock that one variant covers and another leaves is filled under the first's hair too).
  // Each picture's layer is drawn first; kept for its compositing while they fit KEEP_LAYERS,
  // otherwise drawn again then (the same pixels: drawing is deterministic).
  const keep = analysis.image.width * analysis.image.height * n <= KEEP_LAYERS;
  let firstDrawn: typeof drawn | undefined = drawn;
  const place = (k: number) => {
    const d = k === 0 && firstDrawn ? firstDrawn : drawHair(head, light, input.hairstyle, variants[k]!);
    if (k === 0) firstDrawn = undefined;
    return placeHair(analysis, d);
  };
  const layers: Array<HairLayer | undefined> = [];
  let covered: Uint8Array | undefined;
  for (let k = 0; k < n; k++) {
    const layer = await t.time('render', () => place(k));
    covered = await t.time('removal', () => opaqueCover(layer, covered));
    if (keep) layers[k] = layer;
    else releaseLayer(layer);
  }
  const { hole, locks: kept } = await t.time('removal', () => removal(analysis, covered!, input.hair_color));
  const filled = await t.time('removal', () => fillRemoved(analysis, hole, seed, look));
  // The old hair kept over the forehead: its cut ends tapered into the fill, and dyed with each
  // picture's hair.
  const locks = await t.time('removal', () => finishLocks(analysis, filled, hole, kept));
  for (let k = 0; k < n; k++) {
    const layer = layers[k] ?? (await t.time('render', () => place(k)));
    // The fill is this task's own copy (unless nothing was filled): the last picture draws its hair
    // into it, the others into copies of it.
    const base = k < n - 1 && filled !== analysis.image ? copyImage(filled) : filled;
    const result = await t.time('composite', async () => {
      const done = await backToPhoto(composite(base, layer, input.hair_color, look, seed + k, { inPlace: base !== analysis.image, keep: analysis.protect, locks }), k);
      return region ? { data: pasteInto(copyBytes(chosen.image.data), width, done.data, region, 3), width, height } : done;
    });
    const alpha = await t.time('composite', () => maskToPhoto(alphaMask(layer)));
    const mask = region ? pasteInto(new Uint8Array(width * height), width, alpha, region, 1) : alpha;
    // The picture and its mask encoded side by side (sharp runs each on a libuv thread).
    outFiles.push(...(await t.time('encode', () => Promise.all([pictureFile(`result-${k + 1}`, result, input.output_format, quality), maskFile(`hair-mask-${k + 1}.png`, mask, width, height)]))));
    releaseLayer(layer);
    layers[k] = undefined;
  }
  outFiles.push(
    jsonFile('hairstyle.json', {
      hairstyle: input.hairstyle,
      hair_color: input.hair_color,
      chosen_image: chosen.index + 1,
      face: chosen.face.box,
      width,
      height,
      // Under 1 when the face was larger than the version's max_work_face: what changed was worked
      // on at this scale and scaled back up.
      work_scale: scale,
      variants,
    }),
  );
  return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [...notes, `style: ${input.hairstyle}, colour: ${input.hair_color}, outputs: ${input.num_outputs}`] };
  // The person mask and BiSeNet run while the first picture's hair is drawn; the drawing ends
  // first, and they take the core it leaves.
}, { modelThread: ['parser', 'segmenter'], modelThreadSpare: true });
