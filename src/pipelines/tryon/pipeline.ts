// Virtual try-on: one garment photo + one person photo -> that person wearing the garment.
//   decode -> [forced_cutting: crop/pad the person photo to 3:4 around the body] -> person: MoveNet
//   keypoints, selfie-segmentation mask, face + hair (BiSeNet on the face crop) -> refuse no person
//   or missing keypoints -> garment: product-photo mask (border background, colour distance,
//   morphology, holes filled), or the garment region of a person wearing it -> garment landmarks
//   (mask geometry per type) -> body targets (keypoints) -> thin-plate spline solved in JS, the
//   per-pixel spline and GridSample in an ONNX graph (tps-warp) -> removal of uncovered old
//   clothing (push-pull graph) -> garment under face, hair, forearms and hands, shading from the
//   photo's own light, feathered edges -> encode.
// Outputs: result-1.jpg|png, garment-mask.png, tryon.json. `prompt` is stored with the task's
// input and returned in tryon.json; this version does not interpret it.
import { AppError } from '../../errors/codes.ts';
import type { ClothesType } from '../../domain/job.ts';
import { cropSquare, decodeImage, encodeJpeg, encodePng, type RgbImage } from '../../imaging/image.ts';
import { solveTps } from '../../models/generated/tps-warp.ts';
import { detectFaces } from '../face-detection/pipeline.ts';
import { CLASS, parseFace } from '../face-parsing/pipeline.ts';
import { inpaint } from '../hairstyle/render.ts';
import { TryonInput } from '../inputs.ts';
import { jsonFile, numberParam } from '../params.ts';
import { segmentPerson } from '../person-segmentation/pipeline.ts';
import { estimatePose } from '../pose/pipeline.ts';
import { stageTimer, type PipelineContext, type PipelineRunner, type StageTimer } from '../types.ts';
import { bodyRegion, bodyTargets, checkBody, knees, polygonMask, torso, type Pose } from './body.ts';
import { garmentLandmarks, productMask, type Landmarks } from './garment.ts';

interface PersonAnalysis {
  image: RgbImage;
  pose: Pose;
  /** Person probability 0..255 at full resolution. */
  person: Uint8Array;
  fraction: number;
}

export async function analyzePerson(ctx: PipelineContext, image: RgbImage, t: StageTimer): Promise<PersonAnalysis> {
  const poseSession = await ctx.session('pose');
  const pose = await estimatePose(poseSession, image, numberParam(ctx.params, 'pose_size', 'tryon'), t);
  const seg = await ctx.session('segmenter');
  const S = numberParam(ctx.params, 'segmenter_size', 'tryon');
  const person = await segmentPerson(seg, image, S, S, t);
  let on = 0;
  for (const v of person) if (v > 127) on++;
  return { image, pose, person, fraction: on / person.length };
}

/** 3:4 crop (or pad, repeating the edges) around the person's body. */
async function cutTo3by4(p: PersonAnalysis): Promise<{ image: RgbImage; crop: { x: number; y: number; width: number; height: number } }> {
  const { width: W, height: H } = p.image;
  let x0 = W, y0 = H, x1 = 0, y1 = 0;
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if (p.person[y * W + x]! > 127) ((x0 = Math.min(x0, x)), (x1 = Math.max(x1, x)), (y0 = Math.min(y0, y)), (y1 = Math.max(y1, y)));
  if (x1 <= x0) return { image: p.image, crop: { x: 0, y: 0, width: W, height: H } };
  const bw = (x1 - x0) * 1.1, bh = (y1 - y0) * 1.1;
  const h = Math.round(Math.max(bh, (bw * 4) / 3));
  const w = Math.round((h * 3) / 4);
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  const crop = { x: Math.round(cx - w / 2), y: Math.round(cy - h / 2), width: w, height: h };
  // A square crop of the long side, then the 3:4 window out of it (cropSquare repeats edges).
  const side = Math.max(w, h);
  const sq = await cropSquare(p.image, cx - side / 2, cy - side / 2, side, side);
  const data = new Uint8Array(w * h * 3);
  const ox = Math.round((side - w) / 2), oy = Math.round((side - h) / 2);
  for (let y = 0; y < h; y++) data.set(sq.subarray(((y + oy) * side + ox) * 3, ((y + oy) * side + ox + w) * 3), y * w * 3);
  return { image: { data, width: w, height: h }, crop };
}

/** Face, ears and hair of the person (never covered by the garment), 0/1 at full resolution. */
export async function faceAndHair(ctx: PipelineContext, image: RgbImage, t: StageTimer): Promise<Uint8Array> {
  const protect = new Uint8Array(image.width * image.height);
  const faces = await detectFaces(await ctx.session('detector'), image, { input_size: 256, min_score: 0.5, iou_threshold: 0.3, max_faces: 4 }, 0.5, t);
  const face = [...faces].sort((a, b) => b.box.width - a.box.width)[0];
  if (!face) return protect;
  const parse = await parseFace(await ctx.session('parser'), image, face, { parserSize: 512, cropScale: 2.6, featherPx: 0 }, t);
  const keep = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, CLASS.hair, CLASS.hat]);
  for (let i = 0; i < protect.length; i++) if (keep.has(parse.labels[i]!)) protect[i] = 1;
  return protect;
}

/** A garment worn by a person in the garment photo: that person's keypoints and mask, if clear. */
function garmentFromPerson(g: PersonAnalysis, type: ClothesType): { mask: Uint8Array; landmarks: Landmarks } | null {
  const need = type === 'lower_body' ? ['left_hip', 'right_hip'] : ['left_shoulder', 'right_shoulder', 'left_hip', 'right_hip'];
  if (g.fraction < 0.1 || need.some((k) => g.pose[k as keyof Pose].score < 0.35)) return null;
  const { width: W, height: H } = g.image;
  const region = polygonMask(bodyRegion(g.pose, type), W, H);
  const mask = Uint8Array.from(region, (r, i) => (r && g.person[i]! > 127 ? 1 : 0));
  const { sL, sR, hL, hR, down, tl } = torso(g.pose);
  const { kL, kR } = knees(g.pose);
  const landmarks: Landmarks =
    type === 'lower_body'
      ? { waistL: hL, waistR: hR, crotch: [(hL[0] + hR[0]) / 2, (hL[1] + hR[1]) / 2 + 0.2 * tl], thighL: [(hL[0] + kL[0]) / 2, (hL[1] + kL[1]) / 2], thighR: [(hR[0] + kR[0]) / 2, (hR[1] + kR[1]) / 2], legL: kL, legR: kR }
      : {
          shoulderL: sL,
          shoulderR: sR,
          collar: [(sL[0] + sR[0]) / 2, (sL[1] + sR[1]) / 2],
          hemL: [hL[0], hL[1] + 0.1 * tl * down[1]],
          hemR: [hR[0], hR[1] + 0.1 * tl * down[1]],
          ...(type === 'dresses'
            ? { waistL: [(sL[0] + hL[0]) / 2, (sL[1] + hL[1]) / 2], waistR: [(sR[0] + hR[0]) / 2, (sR[1] + hR[1]) / 2] }
            : { armpitL: [sL[0], sL[1] + 0.33 * tl], armpitR: [sR[0], sR[1] + 0.33 * tl], sleeveL: [sL[0] - 0.05, sL[1] + 0.2 * tl], sleeveR: [sR[0] + 0.05, sR[1] + 0.2 * tl] }),
        };
  return { mask, landmarks };
}

/** Forearms and hands (elbow to past the wrist), where the arm crosses the body: 0/1 mask. */
export function forearms(p: PersonAnalysis, from: Landmarks, type: ClothesType): Uint8Array {
  const { width: W, height: H } = p.image;
  const mask = new Uint8Array(W * H);
  if (type === 'lower_body') return mask;
  const { sw } = torso(p.pose);
  for (const [side, sleeve] of [['right', from.sleeveL], ['left', from.sleeveR]] as const) {
    const e = p.pose[`${side}_elbow`], w = p.pose[`${side}_wrist`];
    if (e.score < 0.25 || w.score < 0.25) continue;
    const start: [number, number] = sleeve && type === 'upper_body' ? sleeve : [e.x, e.y];
    const end: [number, number] = [w.x + (w.x - e.x) * 0.35, w.y + (w.y - e.y) * 0.35];
    const r = 0.12 * sw;
    for (let y = Math.max(0, Math.floor(Math.min(start[1], end[1]) - r)); y < Math.min(H, Math.ceil(Math.max(start[1], end[1]) + r)); y++) {
      for (let x = Math.max(0, Math.floor(Math.min(start[0], end[0]) - r)); x < Math.min(W, Math.ceil(Math.max(start[0], end[0]) + r)); x++) {
        const dx = end[0] - start[0], dy = end[1] - start[1];
        const t = Math.max(0, Math.min(1, ((x - start[0]) * dx + (y - start[1]) * dy) / (dx * dx + dy * dy || 1)));
        if (Math.hypot(x - start[0] - t * dx, y - start[1] - t * dy) < r && p.person[y * W + x]! > 127) mask[y * W + x] = 1;
      }
    }
  }
  return mask;
}

/** Box blur of a float map (radius r), for shading and feathering. */
function blur(src: Float32Array, W: number, H: number, r: number): Float32Array {
  const tmp = new Float32Array(src.length);
  const out = new Float32Array(src.length);
  for (let y = 0; y < H; y++) {
    let acc = 0, n = 0;
    for (let x = -r; x < W + r; x++) {
      if (x + r < W) (acc += src[y * W + x + r]!), n++;
      if (x - r - 1 >= 0) (acc -= src[y * W + x - r - 1]!), n--;
      if (x >= 0 && x < W) tmp[y * W + x] = acc / n;
    }
  }
  for (let x = 0; x < W; x++) {
    let acc = 0, n = 0;
    for (let y = -r; y < H + r; y++) {
      if (y + r < H) (acc += tmp[(y + r) * W + x]!), n++;
      if (y - r - 1 >= 0) (acc -= tmp[(y - r - 1) * W + x]!), n--;
      if (y >= 0 && y < H) out[y * W + x] = acc / n;
    }
  }
  return out;
}

export const tryon: PipelineRunner = {
  async run(ctx, rawInput, files) {
    const input = TryonInput.parse(rawInput);
    const type = input.clothes_type;
    const t = stageTimer();
    const [garmentImg, personImg0] = await t.time('decode', () => Promise.all([decodeImage(files.clothes_image!, { maxPixels: ctx.maxPixels }), decodeImage(files.custom_model!, { maxPixels: ctx.maxPixels })]));
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

    // The garment and its landmarks.
    const garmentPerson = await analyzePerson(ctx, garmentImg, t);
    const worn = garmentFromPerson(garmentPerson, type);
    const gMask = worn?.mask ?? (await t.time('garment', () => productMask(garmentImg)));
    let gArea = 0;
    for (const v of gMask) gArea += v;
    if (gArea < 0.01 * gMask.length) throw new AppError('INPUT_INVALID', 'no garment found in the clothes image');
    const from = worn?.landmarks ?? (await t.time('garment', () => garmentLandmarks(gMask, garmentImg.width, garmentImg.height, type)));
    const to = bodyTargets(person.pose, type, from);
    const names = Object.keys(from).filter((k) => to[k]);

    // Region of the person image the garment can reach.
    const { sw } = torso(person.pose);
    const xs = names.map((k) => to[k]![0]), ys = names.map((k) => to[k]![1]);
    const rx0 = Math.max(0, Math.floor(Math.min(...xs) - 0.35 * sw)), rx1 = Math.min(W, Math.ceil(Math.max(...xs) + 0.35 * sw));
    const ry0 = Math.max(0, Math.floor(Math.min(...ys) - 0.35 * sw)), ry1 = Math.min(H, Math.ceil(Math.max(...ys) + 0.35 * sw));
    const rw = Math.max(1, rx1 - rx0), rh = Math.max(1, ry1 - ry0);

    // Thin-plate spline from body space to garment space, then the warp graph.
    const warped = await t.infer('warp', async () => {
      const tn = (p: [number, number]): [number, number] => [(2 * (p[0] - rx0)) / rw - 1, (2 * (p[1] - ry0)) / rh - 1];
      const gn = (p: [number, number]): [number, number] => [(2 * (p[0] + 0.5)) / garmentImg.width - 1, (2 * (p[1] + 0.5)) / garmentImg.height - 1];
      const ctrl = names.map((k) => tn(to[k]!));
      const tps = solveTps(ctrl, names.map((k) => gn(from[k]!)));
      const gn2 = garmentImg.width * garmentImg.height;
      const source = new Float32Array(4 * gn2);
      for (let i = 0; i < gn2; i++) {
        for (let c = 0; c < 3; c++) source[c * gn2 + i] = garmentImg.data[3 * i + c]! / 255;
        source[3 * gn2 + i] = gMask[i]!;
      }
      const target = new Float32Array(rw * rh * 2);
      for (let y = 0; y < rh; y++) for (let x = 0; x < rw; x++) ((target[2 * (y * rw + x)] = (2 * (x + 0.5)) / rw - 1), (target[2 * (y * rw + x) + 1] = (2 * (y + 0.5)) / rh - 1));
      const warp = await ctx.session('warp');
      const out = await warp.run({
        source: { data: source, dims: [1, 4, garmentImg.height, garmentImg.width] },
        target: { data: target, dims: [1, rh, rw, 2] },
        ctrl: { data: Float32Array.from(ctrl.flat()), dims: [1, names.length, 2] },
        weights: { data: tps.weights, dims: [names.length, 2] },
        linear: { data: tps.linear, dims: [2, 2] },
        bias: { data: tps.bias, dims: [2] },
      });
      return out[warp.outputNames[0]!]!.data;
    });

    // Garment alpha at full resolution: on the body only, under face, hair, forearms and hands.
    const arms = forearms(person, to, type);
    const near = blur(Float32Array.from(person.person, (v) => (v > 100 ? 1 : 0)), W, H, Math.max(1, Math.round(0.03 * sw)));
    let alpha: Float32Array = new Float32Array(W * H);
    const rgb = new Float32Array(W * H * 3);
    const plane = rw * rh;
    for (let y = 0; y < rh; y++) {
      for (let x = 0; x < rw; x++) {
        const i = (y + ry0) * W + (x + rx0);
        const j = y * rw + x;
        const a = Math.min(1, Math.max(0, warped[3 * plane + j]!));
        if (a <= 0.01 || protect[i] || arms[i] || near[i]! < 0.5) continue;
        alpha[i] = a;
        for (let c = 0; c < 3; c++) rgb[3 * i + c] = warped[c * plane + j]! / Math.max(a, 1e-3);
      }
    }
    alpha = await t.time('composite', () => blur(alpha, W, H, 1));

    // Remove the old clothing the new garment leaves uncovered (where it is smaller).
    const region = polygonMask(bodyRegion(person.pose, type), W, H);
    const hole = new Uint8Array(W * H);
    for (let i = 0; i < hole.length; i++) if (region[i] && person.person[i]! > 127 && alpha[i]! < 0.5 && !protect[i] && !arms[i]) hole[i] = 1;
    const inpainter = await ctx.session('inpaint');
    const base = await t.infer('removal', () => inpaint(inpainter, image, hole));

    // Light: the photo's own shading (luminance over its local mean) carried onto the garment.
    const out = await t.time('composite', () => {
      const lum = new Float32Array(W * H);
      for (let i = 0; i < lum.length; i++) lum[i] = 0.299 * image.data[3 * i]! + 0.587 * image.data[3 * i + 1]! + 0.114 * image.data[3 * i + 2]!;
      const mean = blur(lum, W, H, Math.max(2, Math.round(0.08 * sw)));
      const data = Uint8Array.from(base.data);
      for (let i = 0; i < alpha.length; i++) {
        const a = alpha[i]!;
        if (a <= 0) continue;
        const shade = Math.min(1.3, Math.max(0.7, 1 + 0.7 * (lum[i]! / Math.max(mean[i]!, 8) - 1)));
        for (let c = 0; c < 3; c++) data[3 * i + c] = Math.round(data[3 * i + c]! * (1 - a) + Math.min(255, rgb[3 * i + c]! * 255 * shade) * a);
      }
      return { data, width: W, height: H };
    });
    const encoded = await t.time('encode', async () =>
      input.output_format === 'png'
        ? { name: 'result-1.png', contentType: 'image/png', data: await encodePng(out.data, W, H, 3) }
        : { name: 'result-1.jpg', contentType: 'image/jpeg', data: await encodeJpeg(out, numberParam(ctx.params, 'jpeg_quality', 'tryon')) },
    );
    const round = (p: [number, number]) => [Math.round(p[0] * 10) / 10, Math.round(p[1] * 10) / 10];
    return {
      files: [
        encoded,
        { name: 'garment-mask.png', contentType: 'image/png', data: await encodePng(Uint8Array.from(alpha, (a) => Math.round(a * 255)), W, H, 1) },
        jsonFile('tryon.json', {
          clothes_type: type,
          prompt: input.prompt ?? '',
          prompt_used: false,
          forced_cutting: input.forced_cutting,
          crop,
          width: W,
          height: H,
          garment_source: worn ? 'person' : 'product',
          garment_landmarks: Object.fromEntries(names.map((k) => [k, round(from[k]!)])),
          body_targets: Object.fromEntries(names.map((k) => [k, round(to[k]!)])),
          keypoints: person.pose,
          region: { x: rx0, y: ry0, width: rw, height: rh },
        }),
      ],
      stages: t.stages,
      predictMs: t.predictMs,
      notes: [`clothes type: ${type}`, `garment from: ${worn ? 'a person wearing it' : 'a product photo'}`, input.forced_cutting ? `3:4 crop: ${JSON.stringify(crop)}` : 'no crop'],
    };
  },
};
