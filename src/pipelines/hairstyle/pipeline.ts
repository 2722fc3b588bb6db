// Hairstyle change from 1 to 4 frontal photos.
//   decode (EXIF) -> analysis (analysis.ts): BlazeFace on each photo (target face; refuse no face,
//   too small a face or too much roll, naming the photo) -> the best photo (largest x most frontal
//   x sharpest) -> its work region (the part a style can reach, on a large photo with a small
//   face; pasted back at the end) -> FaceMesh landmarks -> original hair: BiSeNet face parsing
//   (hair class, soft at full resolution), or person segmentation + landmarks + colour statistics ->
//   per output: template rendering (the first picture's drawn while the hair models run) ->
//   removal of the old hair it does not cover (exemplar fill per what the hair hides) ->
//   compositing in CIE Lab -> encode (JPEG, quality configurable; PNG on request)
// Outputs: result-k.jpg|png (k = 1..num_outputs), hair-mask-k.png, hairstyle.json.
// The rendering stage is two functions (drawHair from the head alone, placeHair behind other
// people once they are known): a generative ONNX version can replace drawHair without touching
// analysis, removal or compositing.
import { createHash } from 'node:crypto';
import { copyBytes, decodeImage, pasteInto } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { jsonFile, maskFile, pictureFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { analyze } from './analysis.ts';
import { alphaMask, composite, drawHair, fillRemoved, placeHair, releaseLayer, removalMask } from './render.ts';
import { hairstyleSpec } from './spec.ts';
import { variantFor } from './templates.ts';

export const hairstyle = definePipeline(hairstyleSpec, async (ctx, input, files) => {
  const t = stageTimer(ctx.signal);
  const photos = files.image_files;
  const images = await t.time('decode', () => Promise.all(photos.map((bytes) => decodeImage(bytes, { maxPixels: ctx.maxPixels }))));
  const { head, light, complete, notes, chosen, region } = await analyze(ctx, images, t);
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
  for (let k = 0; k < input.num_outputs; k++) {
    const p = variants[k]!;
    const layer = await t.time('render', () => placeHair(analysis, k === 0 ? drawn : drawHair(head, light, input.hairstyle, p)));
    const hole = await t.time('removal', () => removalMask(analysis, layer, input.hair_color));
    const filled = await t.time('removal', () => fillRemoved(analysis, hole, seed));
    // The fill is this picture's own copy (unless nothing was filled): the hair is drawn into it.
    const result = await t.time('composite', () => {
      const done = composite(filled, layer, input.hair_color, look, seed + k, { inPlace: filled !== analysis.image, keep: analysis.protect });
      return region ? { data: pasteInto(copyBytes(chosen.image.data), width, done.data, region, 3), width, height } : done;
    });
    const mask = region ? pasteInto(new Uint8Array(width * height), width, alphaMask(layer), region, 1) : alphaMask(layer);
    // The picture and its mask encoded side by side (sharp runs each on a libuv thread).
    outFiles.push(...(await t.time('encode', () => Promise.all([pictureFile(`result-${k + 1}`, result, input.output_format, quality), maskFile(`hair-mask-${k + 1}.png`, mask, width, height)]))));
    releaseLayer(layer);
  }
  outFiles.push(
    jsonFile('hairstyle.json', {
      hairstyle: input.hairstyle,
      hair_color: input.hair_color,
      chosen_image: chosen.index + 1,
      face: chosen.face.box,
      width,
      height,
      variants,
    }),
  );
  return { files: outFiles, stages: t.stages, predictMs: t.predictMs, notes: [...notes, `style: ${input.hairstyle}, colour: ${input.hair_color}, outputs: ${input.num_outputs}`] };
  // The person mask and BiSeNet run while the first picture's hair is drawn; the drawing ends
  // first, and they take the core it leaves.
}, { modelThread: ['parser', 'segmenter'], modelThreadSpare: true });
