// Analysis of the hairstyle photos: the best photo and its target face (steps/photo-choice), FaceMesh
// landmarks and the face frame, the face region to keep (inside the oval, below the brows), and the
// photo's own hair (hair.ts). Everything the renderer and the removal need, computed once per task.
import type { RgbImage } from '../../imaging/image.ts';
import { numberParam, stringParam } from '../../models/params.ts';
import type { StageTimer } from '../../domain/stage-timer.ts';
import { meshFromFace, ovalMask } from '../../steps/face-mesh.ts';
import { readParsingParams } from '../../steps/face-parsing.ts';
import { chooseBestPhoto, type Candidate, type PhotoRules } from '../../steps/photo-choice.ts';
import type { PipelineContext } from '../types.ts';
import { anchorsOf, makeFrame, rollDegrees, toFrame } from './frame.ts';
import { hairFromParsing, hairFromSegmentation } from './hair.ts';
import type { HeadAnalysis } from './render.ts';

/** The photo rules from the version's params. */
function photoRules(params: Readonly<Record<string, unknown>>): PhotoRules {
  const P = (k: string) => numberParam(params, k, 'hairstyle');
  return {
    detector: { input_size: P('detector_size'), min_score: P('min_score'), iou_threshold: P('iou_threshold'), max_faces: P('detector_max_faces') },
    minFaceFraction: P('min_face_fraction'),
    maxRollDegrees: P('max_roll_degrees'),
  };
}

export async function analyze(ctx: PipelineContext, images: readonly RgbImage[], t: StageTimer): Promise<{ analysis: HeadAnalysis; notes: string[]; chosen: Candidate }> {
  const P = (k: string) => numberParam(ctx.params, k, 'hairstyle');
  const { best, notes } = await chooseBestPhoto(await ctx.session('detector'), images, photoRules(ctx.params), t);
  const mesh = await ctx.session('landmarks');
  const { points: lm } = await meshFromFace(mesh, best.image, best.face, P('mesh_crop_scale'), P('mesh_size'), t, ['landmarks', 'landmarks', 'landmarks']);
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
  const hair =
    stringParam(ctx.params, 'hair_source', 'hairstyle') === 'parsing'
      ? await hairFromParsing(await ctx.session('parser'), best.image, best.face, readParsingParams(ctx.params), t)
      : await hairFromSegmentation(await ctx.session('segmenter'), { width: P('segmenter_width'), height: P('segmenter_height') }, base, lm, t);
  notes.push(`face roll ${rollDegrees(frame).toFixed(1)} degrees, face width ${Math.round(frame.scale)} px`);
  return { analysis: { ...base, hair }, notes, chosen: best };
}
