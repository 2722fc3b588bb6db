// The photo's own hair, soft 0..255 at full resolution: what the removal must take away where the
// new style does not cover it. From face parsing (hair and hat classes) when the version has a
// parser, else from person segmentation + landmarks + colour statistics.
import type { RgbImage } from '../../imaging/image.ts';
import type { ModelSession } from '../../models/onnx.ts';
import type { StageTimer } from '../../domain/stage-timer.ts';
import { srgbToLab } from '../../steps/color.ts';
import type { Face } from '../../steps/face-detection.ts';
import type { Landmark } from '../../steps/face-mesh.ts';
import { CLASS, parseFace, softClassMask, type FaceParsingParams } from '../../steps/face-parsing.ts';
import { segmentPerson } from '../../steps/person-segmentation.ts';
import { toFrame } from './frame.ts';
import type { HeadAnalysis } from './render.ts';

/** Hair by BiSeNet face parsing: the hair and hat classes around the target face, soft. */
export async function hairFromParsing(parser: ModelSession, image: RgbImage, face: Face, p: FaceParsingParams, t: StageTimer): Promise<Uint8Array> {
  const parse = await parseFace(parser, image, face, p, t);
  return t.time('postprocess', () => softClassMask(parse, image, [CLASS.hair, CLASS.hat], 1));
}

/** Original hair without BiSeNet: the person mask, off the face, near the head, hair-coloured. */
export async function hairFromSegmentation(seg: ModelSession, size: { width: number; height: number }, an: Omit<HeadAnalysis, 'hair'>, lm: readonly Landmark[], t: StageTimer): Promise<Uint8Array> {
  const { image, frame, anchors, protect } = an;
  const { width: W, height: H } = size;
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

