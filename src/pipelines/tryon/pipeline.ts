// Virtual try-on: one garment photo + one person photo -> that person wearing the garment.
//   decode -> analysis (analysis.ts): [forced_cutting: crop/pad the person photo to 3:4 around the
//   body] -> person: MoveNet keypoints, selfie-segmentation mask, face + hair (BiSeNet on the target
//   face) -> refuse no person or missing keypoints -> garment: product-photo mask (border
//   background, colour distance, morphology, holes filled), or the garment region of a person
//   wearing it -> garment landmarks (mask geometry per type) -> body targets (keypoints) ->
//   warp (warp.ts): thin-plate spline solved in JS, the per-pixel spline and GridSample in an ONNX
//   graph (tps-warp) -> compose (compose.ts): removal of uncovered old clothing (push-pull graph),
//   garment under face, hair, forearms and hands, shading from the photo's own light, feathered
//   edges -> encode.
// Outputs: result-1.jpg|png, garment-mask.png, tryon.json. `prompt` is stored with the task's
// input and returned in tryon.json; this version does not interpret it.
import { decodeImage } from '../../imaging/image.ts';
import { numberParam } from '../../models/params.ts';
import { stageTimer } from '../../domain/stage-timer.ts';
import { jsonFile, maskFile, pictureFile } from '../output.ts';
import { definePipeline } from '../types.ts';
import { analyzeGarment, analyzePerson, cutTo3by4, faceAndHair } from './analysis.ts';
import { bodyTargets, checkBody, torso } from './body.ts';
import { garmentLayer, removeUncovered, shadeAndBlend } from './compose.ts';
import { tryonSpec } from './spec.ts';
import { reachRegion, warpGarment } from './warp.ts';

export const tryon = definePipeline(tryonSpec, async (ctx, input, files) => {
  const type = input.clothes_type;
  const t = stageTimer(ctx.signal);
  const [garmentImg, personImg0] = await t.time('decode', () =>
    Promise.all([decodeImage(files.clothes_image[0]!, { maxPixels: ctx.maxPixels }), decodeImage(files.custom_model[0]!, { maxPixels: ctx.maxPixels })]),
  );

  // Analysis: the person, what the garment must not cover, the garment.
  let person = await analyzePerson(ctx, personImg0, t);
  let crop = { x: 0, y: 0, width: personImg0.width, height: personImg0.height };
  if (input.forced_cutting) {
    const cut = await t.time('crop', () => cutTo3by4(person));
    crop = cut.crop;
    person = await analyzePerson(ctx, cut.image, t);
  }
  checkBody(person.pose, person.fraction, type, 'the model image');
  const { image } = person;
  const W = image.width, H = image.height;
  const protect = await faceAndHair(ctx, image, t);
  const garment = await analyzeGarment(ctx, garmentImg, type, t);
  const from = garment.landmarks;
  const to = bodyTargets(person.pose, type, from);
  const names = Object.keys(from).filter((k) => to[k]);

  // Warp: the garment onto the region of the person photo it can reach.
  const { sw } = torso(person.pose);
  const region = reachRegion(to, names, 0.35 * sw, W, H);
  const warp = await ctx.session('warp');
  const warped = await t.infer('warp', () => warpGarment(warp, garment, to, names, region));

  // Compose: on the body, old clothing removed where uncovered, the photo's light.
  const layer = await garmentLayer(person, warped, region, to, protect, type, t);
  const inpainter = await ctx.session('inpaint');
  const base = await t.infer('removal', () => removeUncovered(inpainter, person, layer, protect, type));
  const out = await t.time('composite', () => shadeAndBlend(image, base, layer, sw));

  const encoded = await t.time('encode', () => pictureFile('result-1', out, input.output_format, numberParam(ctx.params, 'jpeg_quality', 'tryon')));
  const round = (p: [number, number]) => [Math.round(p[0] * 10) / 10, Math.round(p[1] * 10) / 10];
  return {
    files: [
      encoded,
      await maskFile('garment-mask.png', Uint8Array.from(layer.alpha, (a) => Math.round(a * 255)), W, H),
      jsonFile('tryon.json', {
        clothes_type: type,
        prompt: input.prompt ?? '',
        prompt_used: false,
        forced_cutting: input.forced_cutting,
        crop,
        width: W,
        height: H,
        garment_source: garment.source,
        garment_landmarks: Object.fromEntries(names.map((k) => [k, round(from[k]!)])),
        body_targets: Object.fromEntries(names.map((k) => [k, round(to[k]!)])),
        keypoints: person.pose,
        region,
      }),
    ],
    stages: t.stages,
    predictMs: t.predictMs,
    notes: [`clothes type: ${type}`, `garment from: ${garment.source === 'person' ? 'a person wearing it' : 'a product photo'}`, input.forced_cutting ? `3:4 crop: ${JSON.stringify(crop)}` : 'no crop'],
  };
});
