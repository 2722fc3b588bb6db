// The photo's own hair, soft 0..255 at full resolution, of the target person only: what the removal
// must take away where the new style does not cover it; and, for the fill, what each removed pixel
// most likely hides (background, skin or clothing) with where to copy that from.
//   parsing       BiSeNet face parsing (hair and hat classes) around the target face; the parts
//                 attached to the target's head, never on pixels nearer another face; what lies
//                 under each hair pixel: the class of the nearest non-hair pixel (a flood from the
//                 hair's border), sources: the pixels of that class around it
//   segmentation  without BiSeNet: the person mask, off the face, near the head, hair-coloured;
//                 under: background outside the person mask, the person elsewhere
import type { RgbImage } from '../../imaging/image.ts';
import { componentsTouching, dilate } from '../../imaging/morphology.ts';
import type { ModelSession } from '../../models/onnx.ts';
import type { StageTimer } from '../../domain/stage-timer.ts';
import { srgbToLab } from '../../steps/color.ts';
import type { Face } from '../../steps/face-detection.ts';
import type { Landmark } from '../../steps/face-mesh.ts';
import { CLASS, parseFace, softClassMask, type FaceParsingParams } from '../../steps/face-parsing.ts';
import { segmentPerson } from '../../steps/person-segmentation.ts';
import { frameU, frameV, type Anchors, type Frame } from './frame.ts';

/** Fill groups: what a removed hair pixel most likely hides. 0 = nothing to fill. */
export const UNDER = { background: 1, skin: 2, clothing: 3 } as const;

export interface HairFinding {
  /** The target's hair, soft 0..255. */
  hair: Uint8Array;
  /** Fill group per pixel (UNDER), meaningful where hair is. */
  under: Uint8Array;
  /** Per fill group: 1 where the fill may copy from. Index = group id. */
  sources: Uint8Array[];
  /** Person probability 0..255 (everyone): with `others`, the people in front of the new hair. */
  person: Uint8Array;
}

interface Head {
  image: RgbImage;
  frame: Frame;
  anchors: Anchors;
  protect: Uint8Array;
  /** 1 on other people's pixels (nearer another face). */
  others: Uint8Array;
}

/**
 * 1 in the zone where the target's own hair must start: around the skull and beside the face down
 * to the chin (a ponytail behind an ear parses apart from the crown, joined only at the zone).
 */
function headZone(h: Head): Uint8Array {
  const { image, frame, anchors } = h;
  const W = image.width, H = image.height;
  const z = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const u = frameU(frame, x + 0.5, y + 0.5), v = frameV(frame, x + 0.5, y + 0.5);
      if (Math.abs(u) < 1.05 && v > anchors.forehead - 0.6 && v < anchors.chin) z[y * W + x] = 1;
    }
  }
  return z;
}

// Parse classes by fill group: what a hair pixel bordering them hides, and what may be copied.
const GROUP_OF_CLASS = new Uint8Array(19).fill(UNDER.skin);
GROUP_OF_CLASS[CLASS.background] = UNDER.background;
GROUP_OF_CLASS[CLASS.cloth] = UNDER.clothing;
GROUP_OF_CLASS[CLASS.hair] = 0;
GROUP_OF_CLASS[CLASS.hat] = 0;
const SOURCE_CLASSES: Record<number, readonly number[]> = {
  [UNDER.background]: [CLASS.background],
  [UNDER.skin]: [CLASS.skin, CLASS.neck, CLASS.l_ear, CLASS.r_ear],
  [UNDER.clothing]: [CLASS.cloth],
};

/**
 * Multi-source flood: each pixel with group 0 (unknown) inside `region` takes the group of the
 * nearest seeded pixel (4-connected steps through the region). Linear time.
 */
function floodGroups(groups: Uint8Array, region: Uint8Array, W: number, H: number): void {
  let front: number[] = [];
  for (let i = 0; i < groups.length; i++) if (groups[i]) front.push(i);
  while (front.length) {
    const next: number[] = [];
    for (const i of front) {
      const x = i % W;
      const nb = [x > 0 ? i - 1 : -1, x < W - 1 ? i + 1 : -1, i - W, i + W];
      for (const j of nb) {
        if (j < 0 || j >= groups.length || groups[j] || !region[j]) continue;
        groups[j] = groups[i]!;
        next.push(j);
      }
    }
    front = next;
  }
}

/** 1 where the fill group is still unknown (0). */
function unknownOf(under: Uint8Array): Uint8Array {
  const out = new Uint8Array(under.length);
  for (let i = 0; i < out.length; i++) out[i] = under[i] === 0 ? 1 : 0;
  return out;
}

/**
 * Hair by BiSeNet face parsing, the target's only, and what it hides. The person mask keeps the
 * background fill from copying other people: BiSeNet labels everyone but its own person background.
 */
export async function hairFromParsing(parser: ModelSession, seg: ModelSession, segSize: { width: number; height: number }, h: Head, face: Face, p: FaceParsingParams, t: StageTimer): Promise<HairFinding> {
  const { image } = h;
  const W = image.width, H = image.height;
  const parse = await parseFace(parser, image, face, p, t);
  const person = await segmentPerson(seg, image, segSize.width, segSize.height, t, { stages: ['segmentation', 'segmentation', 'segmentation'] });
  const soft = await softClassMask(parse, image, [CLASS.hair, CLASS.hat], 1);
  return t.time('postprocess', () => {
    const { frame, anchors } = h;
    const { x: cx, y: cy, size } = parse.crop;
    const inCrop = new Uint8Array(W * H);
    for (let y = Math.max(0, Math.floor(cy)); y < Math.min(H, Math.ceil(cy + size)); y++) for (let x = Math.max(0, Math.floor(cx)); x < Math.min(W, Math.ceil(cx + size)); x++) inCrop[y * W + x] = 1;
    const bin = new Uint8Array(W * H);
    for (let i = 0; i < bin.length; i++) bin[i] = soft[i]! > 77 && !h.others[i] ? 1 : 0;
    const parsed = componentsTouching(bin, headZone(h), W, H);
    // Long hair continues past the parser's crop (over the chest, down the back): there, person
    // pixels of the parsed hair's colour (CIE Lab distance to its median under its spread),
    // connected to the parsed hair, no farther than 3 face widths below the chin and 1.3 beside the centre line.
    const grown = Uint8Array.from(parsed);
    // Only when the parsed hair leaves the crop at its bottom (the last 4% of its rows).
    let exits = false;
    for (let y = Math.max(0, Math.floor(cy + 0.96 * size)); y < Math.min(H, Math.ceil(cy + size)) && !exits; y++) for (let x = 0; x < W && !exits; x++) exits = parsed[y * W + x] === 1;
    const lab: Array<[number, number, number]> = [];
    if (exits) for (let i = 0; i < parsed.length; i += 3) if (parsed[i] && soft[i]! > 200) lab.push(srgbToLab(image.data[3 * i]!, image.data[3 * i + 1]!, image.data[3 * i + 2]!));
    if (exits && lab.length > 50) {
      const med = [0, 1, 2].map((k) => lab.map((c) => c[k]!).sort((a, b) => a - b)[lab.length >> 1]!);
      const spread = lab.map((c) => Math.hypot(c[0] - med[0]!, c[1] - med[1]!, c[2] - med[2]!)).sort((a, b) => a - b)[lab.length >> 1]!;
      const limit = Math.max(5, 1.0 * spread);
      const cand = Uint8Array.from(parsed);
      for (let i = 0; i < cand.length; i++) {
        const x = i % W, y = (i - x) / W;
        // Inside the crop the parser's non-hair labels are trusted (but its bottom edge, where
        // labels are poor, and its background: a ponytail behind the shoulder parses as
        // background, while the person mask keeps it).
        const trusted = inCrop[i] && y < cy + 0.9 * size && parse.labels[i] !== CLASS.background;
        if (trusted || h.protect[i] || h.others[i] || person[i]! < 128) continue;
        const u = frameU(frame, x + 0.5, y + 0.5), v = frameV(frame, x + 0.5, y + 0.5);
        if (v > anchors.chin + 3 || Math.abs(u) > 1.3) continue;
        const c = srgbToLab(image.data[3 * i]!, image.data[3 * i + 1]!, image.data[3 * i + 2]!);
        if (Math.hypot(c[0] - med[0]!, c[1] - med[1]!, c[2] - med[2]!) < limit) cand[i] = 1;
      }
      grown.set(componentsTouching(cand, parsed, W, H));
    }
    const own = dilate(grown, W, H, 2);
    const hair = new Uint8Array(W * H);
    for (let i = 0; i < hair.length; i++) if (own[i] && !h.others[i]) hair[i] = inCrop[i] ? soft[i]! : grown[i] ? 255 : 0;
    // What each hair pixel hides. Where the person mask says no person: background. On the skull
    // (inside the face oval, or just above it): skin. Beside the head above the chin: what is
    // behind the head, background (a flood from the cheek would grow a skin halo). Below the
    // chin on the person: the body, skin or clothing, flooded from those classes only.
    const under = new Uint8Array(W * H);
    const seeds = new Uint8Array(W * H);
    for (let i = 0; i < under.length; i++) {
      const known = inCrop[i] && soft[i]! <= 20 && !hair[i];
      if (known) {
        under[i] = GROUP_OF_CLASS[parse.labels[i]!]!;
        if (under[i] !== UNDER.background) seeds[i] = under[i]!;
        continue;
      }
      if (!hair[i] && !inCrop[i]) {
        under[i] = UNDER.background;
        continue;
      }
      const x = i % W, y = (i - x) / W;
      const u = frameU(frame, x + 0.5, y + 0.5), v = frameV(frame, x + 0.5, y + 0.5);
      const top = anchors.forehead;
      const skull = v >= top ? v < anchors.chin && Math.abs(u) < anchors.ovalHalfWidth(v, u) : Math.hypot(u / (0.9 * anchors.ovalHalfWidth(top, u)), (v - top) / 0.3) < 1;
      if (person[i]! < 80) under[i] = UNDER.background;
      else if (skull) under[i] = UNDER.skin;
      else if (v < anchors.chin) under[i] = UNDER.background;
      // else: the body, from the skin and clothing seeds below
    }
    floodGroups(seeds, unknownOf(under), W, H);
    for (let i = 0; i < under.length; i++) if (under[i] === 0) under[i] = seeds[i] || UNDER.clothing;
    const sources: Uint8Array[] = [];
    for (const g of Object.values(UNDER)) {
      const cls = SOURCE_CLASSES[g]!;
      const s = new Uint8Array(W * H);
      for (let i = 0; i < s.length; i++) if (inCrop[i] && soft[i]! < 20 && !h.others[i] && cls.includes(parse.labels[i]!)) s[i] = 1;
      if (g === UNDER.background) for (let i = 0; i < s.length; i++) if (person[i]! > 80) s[i] = 0;
      // Body sources from the target's own body column only (a neighbour's dress or arm is no
      // exemplar for this person's shoulders, and an undetected neighbour has no face to avoid).
      if (g !== UNDER.background) {
        for (let i = 0; i < s.length; i++) {
          if (!s[i]) continue;
          const x = i % W, y = (i - x) / W;
          if (Math.abs(frameU(frame, x + 0.5, y + 0.5)) > 1.1) s[i] = 0;
        }
      }
      sources[g] = s;
    }
    return { hair, under, sources, person };
  });
}

/** Original hair without BiSeNet: the person mask, off the face, near the head, hair-coloured. */
export async function hairFromSegmentation(seg: ModelSession, size: { width: number; height: number }, h: Head, lm: readonly Landmark[], t: StageTimer): Promise<HairFinding> {
  const { image, frame, anchors, protect } = h;
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
  const n = image.width * image.height;
  const hair = new Uint8Array(n);
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const i = y * image.width + x;
      if (person[i]! < 100 || protect[i] || h.others[i]) continue;
      const u = frameU(frame, x + 0.5, y + 0.5), v = frameV(frame, x + 0.5, y + 0.5);
      if (v > anchors.chin + 0.9 || Math.abs(u) > 1.2) continue;
      const insideFace = Math.abs(u) < anchors.ovalHalfWidth(v, u) && v > anchors.forehead + 0.05 && v < anchors.chin;
      if (insideFace) continue;
      const [L, A, B] = srgbToLab(image.data[3 * i]!, image.data[3 * i + 1]!, image.data[3 * i + 2]!);
      const dE = Math.hypot(L - ref[0], A - ref[1], B - ref[2]);
      const aboveHead = v < anchors.forehead + 0.02;
      if (aboveHead || dE < 22) hair[i] = person[i]!;
    }
  }
  const under = Uint8Array.from(person, (v) => (v < 128 ? UNDER.background : UNDER.skin));
  const sources: Uint8Array[] = [];
  sources[UNDER.background] = Uint8Array.from(person, (v, i) => (v < 64 && hair[i]! < 20 ? 1 : 0));
  sources[UNDER.skin] = Uint8Array.from(person, (v, i) => (v > 192 && hair[i]! < 20 ? 1 : 0));
  sources[UNDER.clothing] = new Uint8Array(n);
  return { hair, under, sources, person };
}
