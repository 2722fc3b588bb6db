// The photo's own hair, soft 0..255 at full resolution, of the target person only: what the removal
// must take away where the new style does not cover it; and, for the fill, what each removed pixel
// most likely hides (background, skin or clothing) with where to copy that from.
//   parsing       BiSeNet face parsing (hair and hat classes) around the target face; the parts
//                 attached to the target's head, never on pixels nearer another face (detected,
//                 or a face cut by the photo's edge that the parser leaves as background on the
//                 person mask: undetectedOthers), where the hair of a detected neighbour meets
//                 the target's split by the two hairs' colours (contestedHair); what lies
//                 under each hair pixel: the class of the nearest non-hair pixel (a flood from the
//                 hair's border), sources: the pixels of that class around it
//   segmentation  without BiSeNet: the person mask, off the face: a cap over the skull, and below it
//                 the pieces of the hair's colour that hang from the head; under: the same head
//                 and body geometry, the body below the chin told apart by the face's skin colour
import { copyBytes, type RgbImage } from '../../imaging/image.ts';
import { chamfer, componentsTouching, dilate, eachComponent, maskBox, type PixelBox } from '../../imaging/morphology.ts';
import { giveBack, takeBytes, takeInts } from '../../imaging/scratch.ts';
import type { ModelSession } from '../../models/onnx.ts';
import type { StageTimer } from '../../domain/stage-timer.ts';
import { LabSamples, labAt, labMedians, skinColoured, skinLike } from '../../steps/color.ts';
import type { Face } from '../../steps/face-detection.ts';
import { CELEBAMASK_CLASSES, CLASS, parseFaceSoon, softClassMask, type FaceParse, type FaceParsingParams } from '../../steps/face-parsing.ts';
import { segmentPersonSoon } from '../../steps/person-segmentation.ts';
import { FOREHEAD_WIDTH_BELOW, NATURAL_HAIRLINE, frameBox, frameU, frameV, fromFrame, jawLine, rollDegrees, type Anchors, type Frame } from './frame.ts';
import { smooth } from './templates.ts';

/** Fill groups: what a removed hair pixel most likely hides. 0 = nothing to fill. */
export const UNDER = { background: 1, skin: 2, clothing: 3 } as const;

/** A pixel is hair where the soft hair mask (0..255) is over this (0.3): the removal's and the fill's rule. */
export const HAIR_ON = 77;

export interface HairFinding {
  /** The target's hair, soft 0..255. */
  hair: Uint8Array;
  /** Fill group per pixel (UNDER), meaningful where hair is. */
  under: Uint8Array;
  /** Per fill group: 1 where the fill may copy from. Index = group id. */
  sources: Uint8Array[];
  /** Person probability 0..255 (everyone): with `others`, the people in front of the new hair. */
  person: Uint8Array;
  /**
   * The head's `others` and the people the face detector missed (found by the parser and the
   * person mask): never removed, never copied from, in front of the new hair.
   */
  others: Uint8Array;
}

/** Pixel box [x0, x1) x [y0, y1). */
type Box = PixelBox;

interface Head {
  image: RgbImage;
  frame: Frame;
  anchors: Anchors;
  protect: Uint8Array;
  /** 1 on other people's pixels (nearer another face). */
  others: Uint8Array;
  /** The target's face and the other detected faces (`others` is their split). */
  faces?: { target: Face; others: readonly Face[] };
}

/**
 * 1 in the zone where the target's own hair must start: around the skull and beside the face down
 * to the chin (a ponytail behind an ear parses apart from the crown, joined only at the zone).
 */
function headZone(h: Head, within?: Uint8Array, box?: Box): Uint8Array {
  const { image, frame, anchors } = h;
  const W = image.width, H = image.height;
  const z = new Uint8Array(W * H);
  // `within`'s box, when given (it is 0 outside).
  const { x0, x1, y0, y1 } = box ?? { x0: 0, x1: W, y0: 0, y1: H };
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      // Only where the caller looks (a seed for componentsTouching matters only on its mask).
      if (within && !within[y * W + x]) continue;
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
// The body's source group (skin or clothing) by class id, 0 for the others: one lookup a pixel.
const BODY_SOURCE_OF_CLASS = new Uint8Array(CELEBAMASK_CLASSES.length);
for (const g of [UNDER.skin, UNDER.clothing]) for (const c of SOURCE_CLASSES[g]!) BODY_SOURCE_OF_CLASS[c] = g;

/**
 * Multi-source flood: each pixel with group 0 (unknown) inside `region` takes the group of the
 * nearest seeded pixel (4-connected steps through the region). Linear time.
 */
function floodGroups(groups: Uint8Array, region: Uint8Array, W: number, H: number): void {
  // One FIFO queue (each pixel enters once): the seeds in index order, then each ring in the order
  // it was reached, as a list per ring would visit them; a JS array grown by push over every seed
  // pixel was a visible share of the stage at 1 MP.
  // From the thread's scratch pool (a fresh 4 MB queue at 1 MP was ~11 ms of first-touch page faults).
  const queue = takeInts(groups.length);
  let tail = 0;
  for (let i = 0; i < groups.length; i++) if (groups[i]) queue[tail++] = i;
  for (let head = 0; head < tail; head++) {
    const i = queue[head]!;
    const x = i % W;
    // The four neighbours without an array per pixel (this runs over every unknown pixel).
    for (let k = 0; k < 4; k++) {
      const j = k === 0 ? (x > 0 ? i - 1 : -1) : k === 1 ? (x < W - 1 ? i + 1 : -1) : k === 2 ? i - W : i + W;
      if (j < 0 || j >= groups.length || groups[j] || !region[j]) continue;
      groups[j] = groups[i]!;
      queue[tail++] = j;
    }
  }
  giveBack(queue);
}

/**
 * Math.hypot(a, b, c) < limit, decided by the squared length where it is clearly inside or outside
 * (Math.hypot is slow); only lengths within a billionth of the limit take the exact test, so the
 * answer is Math.hypot's.
 */
function closerThan(a: number, b: number, c: number, limit: number): boolean {
  const d2 = a * a + b * b + c * c, l2 = limit * limit;
  if (d2 < l2 * (1 - 1e-9)) return true;
  if (d2 > l2 * (1 + 1e-9)) return false;
  return Math.hypot(a, b, c) < limit;
}

/** The share of skin-like pixels a piece beside the head needs to be taken for a neighbour's face. */
const NEIGHBOUR_SKIN = 0.4;

/**
 * People the face detector missed (a face cut in half by the photo's edge): the parser labels
 * the faces of people other than its own as background, while the person mask covers them. Such
 * person pixels beside the target's head, at its height (the target's own shoulders are lower),
 * in pieces of a face's size and mostly of skin's colour, stand for a neighbour; every pixel
 * nearer such a piece than the target's head is that neighbour's (their hair, joined to the
 * target's, included). Returns the head's `others` with them added.
 */
function undetectedOthers(h: Head, labels: Uint8Array, crop: Box, person: Uint8Array, soft: Uint8Array, sb: Box): Uint8Array {
  const { image, frame, anchors } = h;
  const W = image.width, H = image.height;
  const seeds = new Uint8Array(W * H);
  // Seeds lie in the parser's crop only (its labels): its box, not the whole photo.
  for (let y = crop.y0; y < crop.y1; y++) {
    for (let x = crop.x0, i = y * W + x; x < crop.x1; x++, i++) {
      // The mask tests first: the frame is evaluated only on person pixels the parser calls background.
      if (person[i]! <= 160 || labels[i] !== CLASS.background || h.others[i]) continue;
      const v = frameV(frame, x + 0.5, y + 0.5);
      if (v > anchors.brows - 0.3 && v < anchors.chin && Math.abs(frameU(frame, x + 0.5, y + 0.5)) > 0.9) seeds[i] = 1;
    }
  }
  // Pieces of at least a tenth of a face (~ face width squared) count; specks are the parser's noise.
  const minArea = 0.1 * frame.scale * frame.scale;
  const kept = new Uint8Array(W * H);
  let any = false;
  eachComponent(
    seeds,
    W,
    (comp) => {
      if (comp.length < minArea) return;
      // A face is mostly skin: the target's own shoulder or collar, raised to the head's height
      // beside a tilted head, is clothing (a football shirt: 9% skin-like, against 69-100% on the
      // cut-off faces of the development photos) and must not become a neighbour, who would then
      // own the target's arm and the hair on that side.
      let skin = 0;
      for (const i of comp) if (skinLike(image.data[3 * i]!, image.data[3 * i + 1]!, image.data[3 * i + 2]!)) skin++;
      if (skin < NEIGHBOUR_SKIN * comp.length) return;
      any = true;
      for (const i of comp) kept[i] = 1;
    },
    crop.y0 * W,
    crop.y1 * W,
  );
  if (!any) return h.others;
  // The target's head (the oval, and an ellipse over the skull above the forehead), only now that
  // a neighbour was found: on most photos none is, and this is the costly loop.
  const head = new Uint8Array(W * H);
  const top = anchors.forehead;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const v = frameV(frame, x + 0.5, y + 0.5);
      if (v >= anchors.chin) continue;
      const u = frameU(frame, x + 0.5, y + 0.5);
      if (v >= top ? Math.abs(u) < anchors.ovalHalfWidth(v, u) : Math.hypot(u / anchors.ovalHalfWidth(top, u), (v - top) / 0.35) < 1) head[y * W + x] = 1;
    }
  }
  // The piece is the face; the neighbour's head goes on above it (about 0.6 face widths of skull
  // under their hair), as the target's head goes on above its forehead.
  const reach = Math.round(0.6 * frame.scale);
  for (let x = 0; x < W; x++) {
    let since = reach + 1;
    for (let y = H - 1; y >= 0; y--) {
      const i = y * W + x;
      since = kept[i] ? 0 : since + 1;
      if (since <= reach && !head[i]) kept[i] = 1;
    }
  }
  const dn = chamfer(kept, W, H), dt = chamfer(head, W, H);
  const out = copyBytes(h.others);
  // Clearly nearer (by a quarter): the target's own hair between the two heads stays hers.
  for (let i = 0; i < out.length; i++) if (1.25 * dn[i]! < dt[i]!) out[i] = 1;
  // And past that split the hair of the target's colours is hers (splitByColour; she gives none
  // up: a neighbour found this way is a guess, and on s5-back her own lighter strands against the
  // window went to it, long hair left 0.128 -> 0.157).
  if (sb.x1 <= sb.x0) return out;
  const bw = sb.x1 - sb.x0;
  const q = new Float32Array(bw * (sb.y1 - sb.y0));
  for (let y = sb.y0; y < sb.y1; y++) {
    for (let x = sb.x0, i = y * W + x; x < sb.x1; x++, i++) if (soft[i]! > HAIR_ON && !h.others[i]) q[(y - sb.y0) * bw + (x - sb.x0)] = (1.25 * dn[i]!) / Math.max(1e-6, dt[i]!);
  }
  return splitByColour(h, soft, sb, q, out, true);
}

/**
 * The skull the templates draw on (templates.ts `cap` at volume 1: centred 0.2 face widths below
 * the forehead landmark, half-width 0.58, half-height 0.75) grown by the most a style's hair
 * stands off it (0.12 at the sides, 0.15 on top: a Bowl Cut's volume), above the brows: hair
 * there is the target's own, whoever's face is nearer.
 */
const SKULL = { below: 0.2, rx: 0.7, ry: 0.9 };

/** Around another face's box, this share of its size on each side stays that person's. */
const OTHER_FACE_MARGIN = 0.25;

/**
 * The parsed hair on the target's skull (SKULL) taken back from `others`: the split between faces
 * by distance gave the top of a head to the neighbour whose chin is near it (a woman sitting on the
 * step above, on face-api's sample5 at 1 MP), and that crown stayed, as a dark notch in every new
 * style. A neighbour's hair lying in front of the target's skull is rarer than that; their face
 * (its box grown by OTHER_FACE_MARGIN) stays theirs. Returns `others` revised (a copy where it
 * changes).
 */
function hairOnSkull(h: Head, soft: Uint8Array, sb: Box, others: Uint8Array): Uint8Array {
  const faces = h.faces;
  if (!faces || faces.others.length === 0 || sb.x1 <= sb.x0) return others;
  const { frame, anchors } = h;
  const W = h.image.width;
  const cy = anchors.forehead + SKULL.below;
  const theirs = faces.others.map((f) => {
    const m = OTHER_FACE_MARGIN * Math.max(f.box.width, f.box.height);
    return [f.box.x - m, f.box.y - m, f.box.x + f.box.width + m, f.box.y + f.box.height + m] as const;
  });
  let out: Uint8Array | null = null;
  for (let y = sb.y0; y < sb.y1; y++) {
    for (let x = sb.x0, i = y * W + x; x < sb.x1; x++, i++) {
      if (!others[i] || soft[i]! <= HAIR_ON) continue;
      const px = x + 0.5, py = y + 0.5;
      const v = frameV(frame, px, py);
      if (v >= anchors.brows) continue;
      const u = frameU(frame, px, py);
      if ((u / SKULL.rx) ** 2 + ((v - cy) / SKULL.ry) ** 2 >= 1) continue;
      if (theirs.some(([x0, y0, x1, y1]) => px >= x0 && px < x1 && py >= y0 && py < y1)) continue;
      out ??= copyBytes(others);
      out[i] = 0;
    }
  }
  return out ?? others;
}

/** How far either side of a split between the target and a neighbour (in the ratio of their distances) hair is contested. */
const CONTESTED = 1.4;

/**
 * The split between the target's hair and a detected neighbour's. `others` splits the photo
 * between faces by distance (scaled by face size): a straight line between two heads, which cut
 * through the hair of whichever head's hair hangs past it, and the removal then filled a column of
 * background beside the target's cheek whose far side was that straight line through dark hair
 * (s6-centre-right). Here the hair near that line is split by the two hairs' colours
 * (splitByColour). Returns `others` revised (a copy), or as it was where there is no neighbour.
 */
function contestedHair(h: Head, soft: Uint8Array, sb: Box): Uint8Array {
  const faces = h.faces;
  if (!faces || faces.others.length === 0 || sb.x1 <= sb.x0) return h.others;
  const W = h.image.width, bw = sb.x1 - sb.x0;
  const centre = (f: Face) => [f.box.x + f.box.width / 2, f.box.y + f.box.height / 2, Math.max(f.box.width, f.box.height)] as const;
  const [tx, ty, ts] = centre(faces.target);
  const os = faces.others.map(centre);
  const q = new Float32Array(bw * (sb.y1 - sb.y0));
  for (let y = sb.y0; y < sb.y1; y++) {
    for (let x = sb.x0; x < sb.x1; x++) {
      if (soft[y * W + x]! <= HAIR_ON) continue;
      const dt = Math.hypot(x + 0.5 - tx, y + 0.5 - ty) / ts;
      let dn = Infinity;
      for (const [ox, oy, osz] of os) dn = Math.min(dn, Math.hypot(x + 0.5 - ox, y + 0.5 - oy) / osz);
      q[(y - sb.y0) * bw + (x - sb.x0)] = dn / Math.max(1e-6, dt);
    }
  }
  return splitByColour(h, soft, sb, q, h.others);
}

/**
 * Hair pixels (the parser's soft mask over HAIR_ON) within a ratio of CONTESTED either side of a split
 * between the target and a neighbour (`q`, per pixel of the box `sb`: the neighbour's distance over
 * the target's, under 1 on the neighbour's side) go to whichever of the two people's hair colours
 * they are likelier under (colour histograms of the hair that lies clearly on each side), with the
 * split's side as a weak prior, the evidence pooled over a window, and kept for the target only
 * where connected to the hair clearly hers (and below her chin for the neighbour only where
 * connected to the hair clearly the neighbour's). Past the split the target takes hair beside her head
 * only, not below her chin; with `gainOnly` (or too little of the neighbour's hair to know its
 * colour) she gives none of hers up. Returns `base` (1 = the neighbour's) revised, a copy; or
 * `base` where too little of the target's hair lies clear of the split to know its colour.
 */
function splitByColour(h: Head, soft: Uint8Array, sb: Box, q: Float32Array, base: Uint8Array, gainOnly = false): Uint8Array {
  const W = h.image.width, data = h.image.data;
  const bw = sb.x1 - sb.x0, bh = sb.y1 - sb.y0;
  const ts = h.frame.scale;
  const BINS = 8, SHIFT = 5;
  const histT = new Float64Array(BINS ** 3), histN = new Float64Array(BINS ** 3);
  let nT = 0, nN = 0, contested = 0;
  const bin = (i: number) => ((data[3 * i]! >> SHIFT) * BINS + (data[3 * i + 1]! >> SHIFT)) * BINS + (data[3 * i + 2]! >> SHIFT);
  for (let y = sb.y0; y < sb.y1; y++) {
    for (let x = sb.x0; x < sb.x1; x++) {
      const i = y * W + x, r = q[(y - sb.y0) * bw + (x - sb.x0)]!;
      if (soft[i]! <= HAIR_ON) continue;
      if (r >= CONTESTED) (histT[bin(i)]! += 1), nT++;
      else if (r <= 1 / CONTESTED) (histN[bin(i)]! += 1), nN++;
      else contested++;
    }
  }
  // Too little of the neighbour's hair in the parser's crop: any colour is as likely hers, and the
  // target takes the hair of her own hair's colours past the split, but gives none of hers up
  // (less typical strands of her own, against a bright window, went to the neighbour on s5-back).
  if (contested === 0 || nT < 200) return base;
  const neighbourKnown = nN >= 200 && !gainOnly;
  if (!neighbourKnown) (histN.fill(0), (nN = 0));
  // Per contested pixel, the log-likelihood ratio of the two colours (Laplace-smoothed) with the
  // split's side as a prior of up to ~2:1; then its mean over a window of a twentieth of the
  // face's width (the two colours overlap: per pixel, the boundary was speckled, and every speck
  // of the neighbour's hair taken for the target's was filled with background).
  const score = new Float32Array(bw * bh);
  const inZone = new Uint8Array(bw * bh);
  for (let y = sb.y0; y < sb.y1; y++) {
    for (let x = sb.x0; x < sb.x1; x++) {
      const i = y * W + x, j = (y - sb.y0) * bw + (x - sb.x0);
      const r = q[j]!;
      if (soft[i]! <= HAIR_ON || r >= CONTESTED || r <= 1 / CONTESTED || (!neighbourKnown && r >= 1)) continue;
      // Past the split the target claims hair beside her head only, not below her chin: there a
      // neighbour's tips of a colour like hers lay under the neighbour's cheek (s6-centre-right),
      // and the removal filled them with the window behind.
      if (r < 1 && frameV(h.frame, x + 0.5, y + 0.5) > h.anchors.chin) continue;
      inZone[j] = 1;
      const k = bin(i);
      score[j] = Math.log((histT[k]! + 1) / (nT + BINS ** 3)) - Math.log((histN[k]! + 1) / (nN + BINS ** 3)) + 2 * Math.log(r);
    }
  }
  const R = Math.max(2, Math.round(0.05 * ts));
  // A summed-area table of the zone's scores (0 off the zone): the window's sum has the sign of its mean.
  const S = new Float64Array((bw + 1) * (bh + 1));
  for (let y = 0; y < bh; y++) {
    let rs = 0;
    for (let x = 0; x < bw; x++) {
      rs += score[y * bw + x]!;
      S[(y + 1) * (bw + 1) + x + 1] = S[y * (bw + 1) + x + 1]! + rs;
    }
  }
  const mine = new Uint8Array(bw * bh);
  for (let y = 0; y < bh; y++) {
    const ya = Math.max(0, y - R), yb = Math.min(bh, y + R + 1);
    for (let x = 0; x < bw; x++) {
      const j = y * bw + x;
      if (!inZone[j]) continue;
      const xa = Math.max(0, x - R), xb = Math.min(bw, x + R + 1);
      const a = ya * (bw + 1), b = yb * (bw + 1);
      mine[j] = S[b + xb]! - S[b + xa]! - S[a + xb]! + S[a + xa]! > 0 ? 1 : 0;
    }
  }
  // The target keeps only what joins the hair clearly hers (4-connected through her contested pixels).
  // (And the hair clearly the neighbour's, for her side's rule below.)
  const clear = new Uint8Array(bw * bh), reach = new Uint8Array(bw * bh), clearN = new Uint8Array(bw * bh);
  for (let y = sb.y0; y < sb.y1; y++) {
    for (let x = sb.x0; x < sb.x1; x++) {
      const j = (y - sb.y0) * bw + (x - sb.x0);
      const hairy = soft[y * W + x]! > HAIR_ON;
      clear[j] = hairy && q[j]! >= CONTESTED ? 1 : 0;
      clearN[j] = hairy && q[j]! <= 1 / CONTESTED ? 1 : 0;
      reach[j] = clear[j] || (inZone[j] && mine[j]) ? 1 : 0;
    }
  }
  const keep = new Uint8Array(bw * bh);
  eachComponent(reach, bw, (comp) => {
    if (comp.some((j) => clear[j])) for (const j of comp) keep[j] = 1;
  });
  // Likewise, below the target's chin, the neighbour keeps only what joins the hair clearly hers:
  // an island that her hair's colour wins inside the target's (a strand of s5-top's dark ponytail
  // beside her neck, as dark as the neighbour's hair below) stays the target's and is removed with
  // the rest of it. Beside the head too, it moved the reference parser's reading of
  // s6-centre-right's neighbour's hair (long hair left 0.03 -> 0.15): not there.
  const theirs = new Uint8Array(bw * bh);
  if (neighbourKnown) {
    const reachN = new Uint8Array(bw * bh);
    for (let j = 0; j < reachN.length; j++) reachN[j] = clearN[j] || (inZone[j] && !keep[j]) ? 1 : 0;
    eachComponent(reachN, bw, (comp) => {
      if (comp.some((j) => clearN[j])) for (const j of comp) theirs[j] = 1;
    });
  }
  const out = copyBytes(base);
  for (let y = sb.y0; y < sb.y1; y++) {
    for (let x = sb.x0; x < sb.x1; x++) {
      const j = (y - sb.y0) * bw + (x - sb.x0);
      if (!inZone[j]) continue;
      const island = neighbourKnown && !theirs[j] && frameV(h.frame, x + 0.5, y + 0.5) > h.anchors.chin;
      out[y * W + x] = keep[j] || island ? 0 : 1;
    }
  }
  return out;
}

/**
 * Hair by BiSeNet face parsing, the target's only, and what it hides. The person mask keeps the
 * background fill from copying other people: BiSeNet labels everyone but its own person background.
 */
export async function hairFromParsing(parser: ModelSession, seg: ModelSession, segSize: { width: number; height: number }, h: Head, face: Face, p: FaceParsingParams, t: StageTimer): Promise<{ found: Promise<HairFinding> }> {
  const { image } = h;
  // The person mask's model first, BiSeNet queued behind it: the mask's placement at full
  // resolution (sharp, on a libuv thread) then runs on another core while BiSeNet runs (~14 ms of
  // a 1 MP job's wall time).
  const seg1 = await segmentPersonSoon(seg, image, segSize.width, segSize.height, t, { stages: ['segmentation', 'segmentation', 'segmentation'] });
  // Returns once BiSeNet runs: the caller may draw meanwhile (the sessions run in a model thread).
  const { parse: parsing } = await parseFaceSoon(parser, image, face, p, t);
  const found = (async () => {
    const parse = await parsing;
    // The hair's placement (sharp too) alongside the wait for the person mask's.
    const [person, soft] = await Promise.all([t.time('segmentation', () => seg1.mask), softClassMask(parse, image, [CLASS.hair, CLASS.hat], 1)]);
    // The analysis runs in module-level functions, not in a closure made per call: V8 keeps their
    // optimized code from one task to the next (a fresh closure's loops ran interpreted, every task,
    // until on-stack replacement compiled them again: a large share of this stage at 1 MP).
    return t.time('postprocess', () => parsedHair(h, parse, soft, person));
  })();
  found.catch(() => {});
  return { found };
}

/** hairFromParsing's analysis of the parser's labels and soft hair mask (see there). */
function parsedHair(h: Head, parse: FaceParse, soft: Uint8Array, person: Uint8Array): HairFinding {
  const W = h.image.width, H = h.image.height;
  const { x: cx, y: cy, size } = parse.crop;
  // The parser's crop (inCrop is 1 exactly in this box): loops over what only the parser knows run there.
  const crop: Box = { x0: Math.max(0, Math.floor(cx)), x1: Math.min(W, Math.ceil(cx + size)), y0: Math.max(0, Math.floor(cy)), y1: Math.min(H, Math.ceil(cy + size)) };
  const inCrop = new Uint8Array(W * H);
  for (let y = crop.y0; y < crop.y1; y++) inCrop.fill(1, y * W + crop.x0, y * W + crop.x1);
  // The soft hair is 0 outside its box (it may reach a pixel past the crop's box: its placement rounds).
  const r = maskBox(soft, W, H);
  const sb: Box = r ? { x0: r.x, x1: r.x + r.width, y0: r.y, y1: r.y + r.height } : { x0: 0, x1: 0, y0: 0, y1: 0 };
  const others = hairOnSkull(h, soft, sb, undetectedOthers({ ...h, others: contestedHair(h, soft, sb) }, parse.labels, crop, person, soft, sb));
  const bin = new Uint8Array(W * H);
  for (let y = sb.y0; y < sb.y1; y++) for (let x = sb.x0, i = y * W + x; x < sb.x1; x++, i++) bin[i] = soft[i]! > HAIR_ON && !others[i] ? 1 : 0;
  const parsed = componentsTouching(bin, headZone(h, bin, sb), W, H);
  const grown = longHair(h, parse, inCrop, soft, sb, parsed, person, others);
  const own = dilate(grown, W, H, 2);
  const hair = new Uint8Array(W * H);
  for (let i = 0; i < hair.length; i++) if (own[i] && !others[i]) hair[i] = inCrop[i] ? soft[i]! : grown[i] ? 255 : 0;
  const box = aroundHair(hair, W, H, h.frame.scale);
  const beyond = bodyBeyond(h, parse.labels, inCrop, hair, person, box);
  const under = underOf(h, parse, crop, inCrop, soft, hair, person, beyond, box);
  const sources = sourcesOf(h, parse, crop, inCrop, soft, sb, hair, person, others, beyond);
  giveBack(beyond);
  return { hair, under, sources, person, others };
}

/**
 * The parsed hair grown down: long hair continues past the parser's crop (over the chest, down
 * the back): there, person pixels of the parsed hair's colour (CIE Lab distance to its median
 * under its spread, or its lighter tips over her body: TIPS), connected to the parsed hair, no
 * farther than 3 face widths below the chin and 1.3 beside the centre line.
 */
function longHair(h: Head, parse: FaceParse, inCrop: Uint8Array, soft: Uint8Array, sb: Box, parsed: Uint8Array, person: Uint8Array, others: Uint8Array): Uint8Array {
  const { image, frame, anchors } = h;
  const W = image.width, H = image.height;
  const labels = parse.labels;
  const { y: cy, size } = parse.crop;
  const grown = copyBytes(parsed);
  // Only when the parsed hair leaves the crop at its bottom (the last 4% of its rows).
  let exits = false;
  for (let y = Math.max(0, Math.floor(cy + 0.96 * size)); y < Math.min(H, Math.ceil(cy + size)) && !exits; y++) for (let x = 0; x < W && !exits; x++) exits = parsed[y * W + x] === 1;
  // The colour samples: every third pixel (by index) of the confident parsed hair, which lies in
  // the soft hair's rows; one typed array a channel (boxed [L, a, b] tuples were most of the cost).
  const first = 3 * Math.ceil((sb.y0 * W) / 3), end = sb.y1 * W;
  let n = 0;
  if (exits) for (let i = first; i < end; i += 3) if (parsed[i] && soft[i]! > 200) n++;
  if (exits && n > 50) {
    const Ls = new Float64Array(n), As = new Float64Array(n), Bs = new Float64Array(n);
    for (let i = first, k = 0; i < end; i += 3) {
      if (!parsed[i] || soft[i]! <= 200) continue;
      const lab = labAt(image.data, i);
      (Ls[k] = lab[0]), (As[k] = lab[1]), (Bs[k++] = lab[2]);
    }
    const { ref: [m0, m1, m2], spread } = labMedians(Ls, As, Bs);
    const limit = Math.max(5, 1.0 * spread);
    // The rivals' colours, once a pixel needs them.
    let rivals: Array<[number, number, number]> | undefined;
    const cand = copyBytes(parsed);
    const trustedAbove = cy + 0.9 * size;
    for (let y = 0; y < H; y++) {
      for (let x = 0, i = y * W; x < W; x++, i++) {
        // Inside the crop the parser's non-hair labels are trusted (but its bottom edge, where
        // labels are poor, and its background: a ponytail behind the shoulder parses as
        // background, while the person mask keeps it).
        const trusted = inCrop[i] && y < trustedAbove && labels[i] !== CLASS.background;
        if (trusted || h.protect[i] || others[i] || person[i]! < 128) continue;
        if (frameV(frame, x + 0.5, y + 0.5) > anchors.chin + 3 || Math.abs(frameU(frame, x + 0.5, y + 0.5)) > 1.3) continue;
        const lab = labAt(image.data, i);
        if (closerThan(lab[0] - m0, lab[1] - m1, lab[2] - m2, limit)) cand[i] = 1;
        else if (closerThan(lab[0] - m0, lab[1] - m1, lab[2] - m2, TIPS.wider * limit) && Math.abs(frameU(frame, x + 0.5, y + 0.5)) <= TIPS.column) {
          rivals ??= rivalColours(image, labels, parse.crop, W, H);
          const dh = Math.hypot(lab[0] - m0, lab[1] - m1, lab[2] - m2);
          if (rivals.length && rivals.every((r) => Math.hypot(lab[0] - r[0], lab[1] - r[1], lab[2] - r[2]) > TIPS.nearer * dh)) cand[i] = 1;
        }
      }
    }
    grown.set(componentsTouching(cand, parsed, W, H));
  }
  return grown;
}

/**
 * Long hair's lighter or greyer tips, outside the hair's own colour spread: still hair where they
 * lie over the target's own body (|u| <= column face widths: a neighbour's hair beside her was
 * taken otherwise), within `wider` times the spread and `nearer` times closer to the hair's colour
 * than to the target's clothing and skin. s6-centre-left's grey tips over her maroon top stayed
 * as a dark streak under every short style (83% of a hand-annotated box grey, 0.6% after).
 */
const TIPS = { wider: 2.5, nearer: 2, column: 0.9 };

/** The median CIE Lab of the target's clothing and of her skin and neck (the parser's classes in its crop); those with too few pixels are left out. */
function rivalColours(image: RgbImage, labels: Uint8Array, crop: { x: number; y: number; size: number }, W: number, H: number): Array<[number, number, number]> {
  // Both in one pass over every other pixel of every other row: a sample, as for the hair's own colour.
  const cloth = new LabSamples(), skin = new LabSamples();
  for (let y = Math.max(0, Math.floor(crop.y)); y < Math.min(H, Math.ceil(crop.y + crop.size)); y += 2) {
    for (let x = Math.max(0, Math.floor(crop.x)); x < Math.min(W, Math.ceil(crop.x + crop.size)); x += 2) {
      const c = labels[y * W + x]!;
      if (c === CLASS.cloth) cloth.add(image.data, y * W + x);
      else if (c === CLASS.skin || c === CLASS.neck) skin.add(image.data, y * W + x);
    }
  }
  return [cloth, skin].filter((samples) => samples.count > 50).map((samples) => samples.medians().ref);
}

/** The neck's half width, and the shoulders' top (see underOf), in face widths. */
const NECK_HALF = 0.3, SHOULDER_DROP = 0.3, SHOULDER_SLOPE = 0.5;

/** The rounding of the neck-to-shoulder corner (face widths), and the hyperbola's value at the chin. */
const FLARE_K = 0.15, FLARE_AT_CHIN = Math.sqrt(SHOULDER_DROP * SHOULDER_DROP + FLARE_K * FLARE_K) - SHOULDER_DROP;

/**
 * How far the body reaches past the neck's side at dy face widths below the chin: 0 at the chin
 * and above, growing slowly down the neck, then along the shoulders' line (SHOULDER_SLOPE; 0.035
 * face widths inside it far out), the corner between them rounded over ~0.15 face widths (a
 * hyperbola), as the trapezius runs from the neck into the shoulder. The straight column and line
 * met in a right angle: a bared neck was a cut-out rectangle on a step.
 */
export function bodyFlare(dy: number): number {
  if (dy <= 0) return 0;
  const t = dy - SHOULDER_DROP;
  return (t + Math.sqrt(t * t + FLARE_K * FLARE_K) - FLARE_AT_CHIN) / (2 * SHOULDER_SLOPE);
}

/**
 * The box around the hair that the removal can reach: the hair's box and, beyond it, the fill's
 * margin for sources (patchFill looks no farther than half the hole's larger side beyond it) and
 * the removal's grown edge. Per-pixel work for the fill (its groups, its sources) stays in it:
 * a loop over a whole 1 MP photo cost tens of ms.
 */
function aroundHair(hair: Uint8Array, W: number, H: number, scale: number): Box {
  const hb = maskBox(hair, W, H);
  if (!hb) return { x0: 0, x1: 0, y0: 0, y1: 0 };
  const m = Math.round(0.6 * Math.max(hb.width, hb.height) + 0.05 * scale) + 24;
  return { x0: Math.max(0, hb.x - m), x1: Math.min(W, hb.x + hb.width + m), y0: Math.max(0, hb.y - m), y1: Math.min(H, hb.y + hb.height + m) };
}

/** Not known to underFrom: the pixel's group comes from the head and body geometry or the flood. */
const NOT_KNOWN = 255;

/**
 * What each hair pixel hides, with the face parser: where the parser has looked and sees no hair,
 * its class's group (but its background on the person mask: its crop's poor bottom edge).
 */
function underOf(h: Head, parse: FaceParse, crop: Box, inCrop: Uint8Array, soft: Uint8Array, hair: Uint8Array, person: Uint8Array, beyond: Uint8Array, box: Box): Uint8Array {
  const W = h.image.width;
  const known = new Uint8Array(W * h.image.height).fill(NOT_KNOWN);
  for (let y = crop.y0; y < crop.y1; y++) {
    for (let x = crop.x0, i = y * W + x; x < crop.x1; x++, i++) {
      if (soft[i]! > 20 || hair[i] || (person[i]! > 128 && parse.labels[i] === CLASS.background)) continue;
      known[i] = GROUP_OF_CLASS[parse.labels[i]!]!;
    }
  }
  // Past the crop, the body beside the long hair by colour (as the version without the parser
  // knows it everywhere): the flood had no seeds there, and hair over the chest below the crop
  // took the group of the crop's last row, a block of skin or of clothing cut by the crop's edges.
  for (let y = box.y0; y < box.y1; y++) for (let i = y * W + box.x0; i < y * W + box.x1; i++) if (beyond[i] && known[i] === NOT_KNOWN) known[i] = beyond[i]!;
  dropShadowSpecks(h, known, crop);
  return underFrom(h, known, inCrop, hair, person, box);
}

/**
 * The parser's clothing in specks (under CLOTH_SPECK.area face widths squared) darker than
 * CLOTH_SPECK.lightness, made unknown (in place, in the crop's box): the shadow between a lock and
 * a bare shoulder or neck, which the parser calls cloth. Such a speck seeded underFrom's flood over
 * the whole bare shoulder under the hair, and her black top was copied there: a black plate on her
 * arm (s5-left in the whole of face-api's sample5, a 40-pixel speck at L* 10). A top's own
 * fragments between the strands are lighter (s6-left's green top, L* 51-54) or larger.
 */
function dropShadowSpecks(h: Head, known: Uint8Array, crop: Box): void {
  const W = h.image.width;
  const cloth = takeBytes(known.length);
  for (let y = crop.y0; y < crop.y1; y++) for (let i = y * W + crop.x0; i < y * W + crop.x1; i++) cloth[i] = known[i] === UNDER.clothing ? 1 : 0;
  const least = CLOTH_SPECK.area * h.frame.scale * h.frame.scale;
  eachComponent(cloth, W, (c) => {
    if (c.length >= least) return;
    let L = 0;
    for (const i of c) L += labAt(h.image.data, i)[0];
    if (L < CLOTH_SPECK.lightness * c.length) for (const i of c) known[i] = NOT_KNOWN;
  }, crop.y0 * W, crop.y1 * W);
  giveBack(cloth);
}

/** dropShadowSpecks' speck: its largest area (face widths squared) and its mean CIE L* below which it is a shadow. */
const CLOTH_SPECK = { area: 0.005, lightness: 20 };

/**
 * The target's own body column beside the centre line (face widths), where her body is known and
 * copied from (both versions): what lies beyond is often a neighbour's arm or top, cut by the frame
 * and so without a face to keep it out.
 */
const BODY_COLUMN = 1.1;

/**
 * The target's body below the chin past the parser's crop, where it says nothing of it (inside
 * the crop its labels, even its background on the person mask, are left as underOf reads them: on
 * s5-left the shadow between her hair and her raised shoulder, taken for clothing there, was
 * flooded over the shoulder as black blots), in aroundHair's `box`: by colour
 * (skin: the protected face's skin colour, skinColoured; else clothing), off other people, within
 * BODY_COLUMN of the centre line and BODY_REACH below the chin, clear of the hair. Skin: only the
 * pieces joined, through skin and the parser's skin, to what the parser calls her skin in her own
 * column below the chin (ANCHOR_COLUMN): a neighbour's bare arm beside her, on the person mask and
 * without a face near enough to keep it out, was copied into her chest otherwise. Clothing: only
 * of her top's colour (within TOP_DE of the median of the clothing in her central column,
 * ANCHOR_COLUMN / 2): a neighbour's dress of another colour beside her is not hers. 0 elsewhere;
 * from the thread's scratch pool (the caller gives it back).
 */
function bodyBeyond(h: Head, labels: Uint8Array, inCrop: Uint8Array, hair: Uint8Array, person: Uint8Array, box: Box): Uint8Array {
  const { frame, anchors, image } = h;
  const n = labels.length, W = image.width, H = image.height, data = image.data;
  // From the thread's scratch pool: the caller gives `out` back.
  const out = takeBytes(n);
  const skin = takeBytes(n), anchorSkin = takeBytes(n), memo = takeBytes(n);
  // Only the rows and columns of the body's reach (turned with the head) in the box.
  const reach = frameBox(frame, -BODY_COLUMN, BODY_COLUMN, anchors.chin, anchors.chin + BODY_REACH.down, W, H);
  const x0 = Math.max(box.x0, reach.x0), x1 = Math.min(box.x1, reach.x1), y0 = Math.max(box.y0, reach.y0), y1 = Math.min(box.y1, reach.y1);
  // Clear of all the hair (the long hair grown past the crop too) by its soft edge's width: the
  // hair in that part (and r around it) dilated by r, on a crop of its own.
  const r = Math.max(2, Math.round(0.015 * frame.scale));
  const cx0 = Math.max(0, x0 - r), cy0 = Math.max(0, y0 - r), cw = Math.max(0, Math.min(W, x1 + r) - cx0), ch = Math.max(0, Math.min(H, y1 + r) - cy0);
  const anyHair = takeBytes(cw * ch);
  for (let y = 0; y < ch; y++) for (let x = 0, i = (cy0 + y) * W + cx0; x < cw; x++, i++) anyHair[y * cw + x] = hair[i]! > 20 ? 1 : 0;
  const nearHair = dilate(anyHair, cw, ch, r);
  const skinRef = medianLab(image, h.protect);
  // Her top's colour: the clothing's in her central column.
  const top = new LabSamples();
  for (let y = y0; y < y1; y++) {
    for (let x = x0, i = y * W + x0; x < x1; x++, i++) {
      if (person[i]! <= 128 || h.others[i] || nearHair[(y - cy0) * cw + x - cx0]) continue;
      const v = frameV(frame, x + 0.5, y + 0.5);
      if (v < anchors.chin || v > anchors.chin + BODY_REACH.down) continue;
      const u = Math.abs(frameU(frame, x + 0.5, y + 0.5));
      if (u > BODY_COLUMN) continue;
      if (inCrop[i]) {
        // The parser's own skin joins the pieces and, in her column, anchors them.
        if (GROUP_OF_CLASS[labels[i]!] !== UNDER.skin) continue;
        skin[i] = 1;
        if (u <= ANCHOR_COLUMN) anchorSkin[i] = 1;
        continue;
      }
      if (skinTest(image, memo, x, y, skinRef) === SKIN) (out[i] = UNDER.skin), (skin[i] = 1);
      else {
        out[i] = UNDER.clothing;
        if (u <= ANCHOR_COLUMN / 2 && i % 3 === 0) top.add(data, i);
      }
    }
  }
  const keptSkin = componentsTouching(skin, anchorSkin, W, H);
  const [t0, t1, t2] = top.count ? top.medians().ref : [0, 0, 0];
  for (let y = y0; y < y1; y++) {
    for (let i = y * W + x0; i < y * W + x1; i++) {
      if (out[i] === UNDER.skin) {
        if (!keptSkin[i]) out[i] = 0;
      } else if (out[i] === UNDER.clothing) {
        const c = labAt(data, i);
        if (!top.count || !closerThan(c[0] - t0, c[1] - t1, c[2] - t2, TOP_DE)) out[i] = 0;
      }
    }
  }
  giveBack(skin, anchorSkin, memo, anyHair, nearHair);
  return out;
}

/** bodyBeyond's test of the clothing against her top's colour (CIE Lab distance). */
const TOP_DE = 20;

/** bodyBeyond's column of the parser's own labels that anchor the target's body (face widths beside the centre line). */
const ANCHOR_COLUMN = 0.8;

/**
 * What each hair pixel hides (UNDER), meaningful where the hair is. `known`: per pixel its group
 * where the caller knows it (0: known to be neither, the flood decides), NOT_KNOWN elsewhere;
 * `parsed`: where a face parser has looked (null: nowhere). Off the hair and off the person mask a
 * pixel is background, but where the parser saw something hair-like there (left to the geometry).
 * Only in `box` (aroundHair): elsewhere no pixel is filled.
 */
function underFrom(h: Head, known: Uint8Array, parsed: Uint8Array | null, hair: Uint8Array, person: Uint8Array, box: Box): Uint8Array {
  const { frame, anchors } = h;
  const W = h.image.width, H = h.image.height;
  // What each hair pixel hides. Where the person mask says no person: background. On the skull
  // (inside the face oval, or just above it): skin. Beside the head above the chin: what is
  // behind the head, background (a flood from the cheek would grow a skin halo). Below the
  // chin on the person: the body, skin or clothing, flooded from those classes only.
  const under = new Uint8Array(W * H);
  const seeds = takeBytes(W * H);
  // 1 where the group is left unknown (0) for the flood.
  const unknown = takeBytes(W * H);
  // Beside the neck, between the chin and the shoulders, hair hides what is behind the neck, the
  // background: the flood from the neck's skin grew a plate of skin there, as wide as the hair.
  // A body model, in face widths from the chin: the neck NECK_HALF wide each side, widening into
  // the shoulders' line (bodyFlare: SHOULDER_DROP below the chin at the neck's side,
  // SHOULDER_SLOPE per face width outwards, the corner rounded). Its across and down directions:
  // the photo's while the head is within ROWS_UPRIGHT degrees of upright (a head rolled on an
  // upright body leaves the neck upright), the head's own beyond it: a head rolled further is that
  // of a body leaning with it, or of a photo taken at a tilt (on s5-right turned 50 and -15 degrees
  // and s6-centre-left turned -35 the upright model gave the hair over the neck and shoulder to the
  // wall: a white blob under the chin). Exactly x and y on an upright head.
  const [chinX, chinY] = fromFrame(frame, 0, anchors.chin);
  const roll = rollDegrees(frame);
  const tilt = Math.abs(roll) > ROWS_UPRIGHT ? (roll * Math.PI) / 180 : 0;
  const tc = Math.cos(tilt), ts = Math.sin(tilt);
  const jaw = jawLine(anchors);
  const top = anchors.forehead;
  // Above the oval's top: the oval's width at its top and FOREHEAD_WIDTH_BELOW under it, per side
  // of the midline (ovalHalfWidth's side is u's sign: left, right, or both at u = 0), once.
  const widthsAbove = (side: number) => [anchors.ovalHalfWidth(top, side), anchors.ovalHalfWidth(top + FOREHEAD_WIDTH_BELOW, side)] as const;
  const above = { left: widthsAbove(-1), mid: widthsAbove(0), right: widthsAbove(1) };
  for (let y = box.y0; y < box.y1; y++) {
    for (let x = box.x0, i = y * W + box.x0; x < box.x1; x++, i++) {
      // Known pixels (the removal's grown edge reaches them) keep their group; elsewhere, on the
      // person mask, they are the body: a wall copied onto a shoulder's edge draws a white outline.
      const onPerson = person[i]! > 128;
      if (known[i] !== NOT_KNOWN) {
        under[i] = known[i]!;
        if (under[i] !== UNDER.background) seeds[i] = under[i]!;
        if (!under[i]) unknown[i] = 1;
        continue;
      }
      if ((!hair[i] && !parsed?.[i] && !onPerson) || person[i]! < 80) {
        under[i] = UNDER.background;
        continue;
      }
      // Below the chin on the person: the body, from the skin and clothing seeds below (left 0).
      // The skull lies above the chin, so the frame's u and the oval are evaluated only there.
      const v = frameV(frame, x + 0.5, y + 0.5);
      const ox = x + 0.5 - chinX, oy = y + 0.5 - chinY;
      const dx = Math.abs(ox * tc + oy * ts) / frame.scale - NECK_HALF, dy = (oy * tc - ox * ts) / frame.scale;
      if (v >= anchors.chin) {
        if (hair[i] && dx > bodyFlare(dy)) under[i] = UNDER.background;
        else unknown[i] = 1;
        continue;
      }
      const u = frameU(frame, x + 0.5, y + 0.5);
      // The neck's column below the jaw but above the chin's line: on a rolled head the lower
      // side's jaw rises above the chin's v-line, and hair there hides the neck, not what is behind
      // the head (filled with the background, the neck's top was a level shelf at the chin).
      if (dx <= 0 && v > jaw(u)) {
        unknown[i] = 1;
        continue;
      }
      // The face's own edge reaches a little past the landmarks' oval (hair lying over the cheek
      // hides its side): skin there, so the face does not end in a cut against the wall.
      // Above the oval's top (FaceMesh's forehead landmark, below the hairline) up to a natural
      // hairline's height the forehead goes on as wide as the oval a little below it: the oval's
      // own width at its top is its topmost points', and the hair over a forehead that a short
      // cut's hairline shows was filled with the wall beside the head (dark blocks at the temples).
      let skull: boolean;
      if (v >= top + FOREHEAD_WIDTH_BELOW) skull = Math.abs(u) < anchors.ovalHalfWidth(v, u) + 0.035;
      else {
        const [w0, w1] = u < 0 ? above.left : u > 0 ? above.right : above.mid;
        // Just below the oval's top its upper corners round in towards its top point, narrower than
        // the forehead: there the skin is as wide as the skull above (0.9 of the forehead's width),
        // not the oval's, which left a notch of wall between the two across the temples (a white
        // wedge filled into s6-left's forehead where her lock over it was removed).
        if (v >= top) skull = Math.abs(u) < Math.max(anchors.ovalHalfWidth(v, u) + 0.035, 0.9 * w1);
        else {
          // The forehead's width up to the natural hairline, easing into the oval's top's above it
          // (a step there was a step in the fill at the temples, under the Mohawk's sheer sides).
          const width = w0 + (w1 - w0) * smooth(top - NATURAL_HAIRLINE - 0.08, top - NATURAL_HAIRLINE - 0.03, v);
          skull = Math.hypot(u / (0.9 * width), (v - top) / 0.3) < 1;
        }
      }
      under[i] = skull ? UNDER.skin : UNDER.background;
    }
  }
  // (With the parser's classes only: the version without it was not looked at this way.) The rows
  // stand for the body's across only while the photo is about upright (s6-centre-left rotated 35
  // degrees: the skin plate beside her neck grew onto the blinds).
  if (parsed && Math.abs(roll) <= ROWS_UPRIGHT) {
    bodyUnderHair(h, known, hair, person, box, chinX, chinY, under, unknown);
    besideBody(h, known, hair, person, box, chinY, under, unknown);
  }
  floodGroups(seeds, unknown, W, H);
  for (let i = 0; i < under.length; i++) if (under[i] === 0) under[i] = seeds[i] || UNDER.clothing;
  giveBack(seeds, unknown);
  return under;
}

/** The most roll (degrees) at which bodyUnderHair and besideBody read the photo's rows as across the body. */
const ROWS_UPRIGHT = 20;

/**
 * The hair's runs along the rows of `box` from `y0` down: per run its `label` (0: none), set on
 * the run's pixels that are candidates (`isCand`). Returns the candidates and their labels over the
 * box's columns and those rows (bw x (box.y1 - y0), row-major), and whether any label was set.
 */
function hairRuns(hair: Uint8Array, W: number, box: Box, y0: number, label: (y: number, x: number, e: number) => number, isCand: (i: number) => boolean): { cand: Uint8Array; labels: Uint8Array; any: boolean } {
  const bw = box.x1 - box.x0, bh = box.y1 - y0;
  const cand = new Uint8Array(bw * bh), labels = new Uint8Array(bw * bh);
  let any = false;
  for (let y = y0; y < box.y1; y++) {
    let x = box.x0;
    while (x < box.x1) {
      if (!hair[y * W + x]) {
        x++;
        continue;
      }
      let e = x;
      while (e < box.x1 && hair[y * W + e]) e++;
      // The run [x, e).
      const l = label(y, x, e);
      for (let k = x; k < e; k++) {
        if (!isCand(y * W + k)) continue;
        const j = (y - y0) * bw + (k - box.x0);
        cand[j] = 1;
        if (l) (labels[j] = l), (any = true);
      }
      x = e;
    }
  }
  return { cand, labels, any };
}

/** Least squares of v on u over the points added: v = slope * u + icpt (n: how many). */
function lineFit() {
  let n = 0, su = 0, sv = 0, suu = 0, suv = 0;
  return {
    add(u: number, v: number) {
      (n++, (su += u), (sv += v), (suu += u * u), (suv += u * v));
    },
    get n() {
      return n;
    },
    line() {
      const den = n * suu - su * su;
      const slope = den > 1e-6 ? (n * suv - su * sv) / den : 0;
      return { slope, icpt: (sv - slope * su) / n };
    },
  };
}

/**
 * Hair in the rows below the chin (from a little above them) taken for what is behind the body
 * (by the body model, bodyFlare, or, on a rolled head, as lying beside the head above the chin's
 * tilted line), where the body goes on under it: a shoulder raised towards a tilted head (on
 * s5-left the hair over her shoulder was filled with the stairs behind her, a brown blob inside
 * the shoulder). Per connected piece of such hair: when 80% of its pixels' rows run between the
 * target's skin on both sides, the shoulder's outline seen beyond its outer side (away from the chin) is
 * continued under it as a straight line (least squares over the outline's last 0.25 face widths),
 * and the hair below that line is left to the body's flood. Only on a head within ROWS_UPRIGHT
 * degrees of upright (the caller's test). In place.
 */
function bodyUnderHair(h: Head, known: Uint8Array, hair: Uint8Array, person: Uint8Array, box: Box, chinX: number, chinY: number, under: Uint8Array, unknown: Uint8Array): void {
  const W = h.image.width, data = h.image.data, scale = h.frame.scale;
  // The target's skin: the parser's, or (it calls a shoulder background at times) skin-coloured
  // person pixels it did not call clothing, off the hair and other people. Not clothing: a
  // neighbour's top beside the target's neck is clothing on the person mask too.
  const bodyAt = (j: number) => !hair[j] && !h.others[j] && person[j]! > 128 && (known[j] === UNDER.skin || (known[j] === NOT_KNOWN && skinLike(data[3 * j]!, data[3 * j + 1]!, data[3 * j + 2]!)));
  // Looked for a few pixels past a run's end (the hair's soft fringe lies between).
  const reach = Math.max(2, Math.round(0.03 * scale));
  const body = (y: number, from: number, step: number) => {
    for (let k = 0, x = from; k < reach && x >= 0 && x < W; k++, x += step) if (bodyAt(y * W + x)) return true;
    return false;
  };
  const y0 = Math.max(box.y0, Math.ceil(chinY - 0.15 * scale));
  if (y0 >= box.y1) return;
  const bw = box.x1 - box.x0;
  // Label 1: the run has her skin on both sides.
  const { cand, labels, any } = hairRuns(hair, W, box, y0, (y, x, e) => (body(y, x - 1, -1) && body(y, e, 1) ? 1 : 0), (i) => under[i] === UNDER.background && known[i] === NOT_KNOWN);
  if (!any) return;
  eachComponent(cand, bw, (piece) => {
    let inside = 0, xa = bw, xb = -1;
    for (const j of piece) (inside += labels[j]!), (xa = Math.min(xa, j % bw)), (xb = Math.max(xb, j % bw));
    // Per row the runs alternated between skin and background beside a neck: the piece decides,
    // by a clear majority (0.86 of s5-left's shoulder; hair beside a neck whose far side is only
    // partly a neighbour's skin, 0.67-0.74 on s5-top, s6-centre-right and s5-right rolled 15
    // degrees, stays over the background: filled with the body there, the tips hanging below it
    // read as hair to the face parser, next to skin instead of the wall).
    if (inside < 0.8 * piece.length) return;
    // The outline beyond the outer side: per column, the first skin pixel from y0 down whose pixel
    // above is not hair (seen against what is behind).
    const outward = box.x0 + (xa + xb) / 2 < chinX ? -1 : 1;
    const edge = outward < 0 ? box.x0 + xa - 1 : box.x0 + xb + 1;
    const span = Math.round(0.25 * scale);
    const fit = lineFit();
    for (let d = reach; d < span; d++) {
      const x = edge + outward * d;
      if (x < 0 || x >= W) break;
      for (let y = y0; y < box.y1; y++) {
        if (!bodyAt(y * W + x)) continue;
        if (y > y0 && !hair[(y - 1) * W + x]) fit.add(x, y);
        break;
      }
    }
    if (fit.n < 0.1 * scale) return;
    const { slope, icpt } = fit.line();
    for (const j of piece) {
      const x = (j % bw) + box.x0, y = Math.floor(j / bw) + y0;
      if (y < slope * x + icpt) continue;
      const i = y * W + x;
      (under[i] = 0), (unknown[i] = 1);
    }
  });
}

/**
 * Hair below the chin that the body model (bodyFlare) gives to the body, but that hangs beside it
 * over the background: the model's shoulders are wider than a narrow or turned body's (on s6-right
 * the tips beside her shoulder were filled from her top's white strap, a white triangle on the
 * wall). Per connected piece of such hair whose pixels' rows run, for 80% of them, from the
 * target's body on one side to the background (off the person mask) on the other, the body's side
 * outline seen just below the piece (where body meets background, over 0.25 face widths of rows)
 * is continued up through it as a straight line, and the hair beyond it is the background's. Only
 * on a head within ROWS_UPRIGHT degrees of upright (the caller's test). In place.
 */
function besideBody(h: Head, known: Uint8Array, hair: Uint8Array, person: Uint8Array, box: Box, chinY: number, under: Uint8Array, unknown: Uint8Array): void {
  const W = h.image.width, scale = h.frame.scale;
  const bodyAt = (j: number) => !hair[j] && !h.others[j] && person[j]! > 128;
  const wallAt = (j: number) => !hair[j] && person[j]! < 80;
  const reach = Math.max(2, Math.round(0.03 * scale));
  const side = (y: number, from: number, step: number): 'body' | 'wall' | null => {
    for (let k = 0, x = from; k < reach && x >= 0 && x < W; k++, x += step) {
      if (bodyAt(y * W + x)) return 'body';
      if (wallAt(y * W + x)) return 'wall';
    }
    return null;
  };
  const y0 = Math.max(box.y0, Math.ceil(chinY));
  if (y0 >= box.y1) return;
  const bw = box.x1 - box.x0;
  // Label 1: the run has the wall on the right (her body on the left); 2 the reverse.
  const { cand, labels, any } = hairRuns(
    hair,
    W,
    box,
    y0,
    (y, x, e) => {
      const l = side(y, x - 1, -1), r = side(y, e, 1);
      return l === 'body' && r === 'wall' ? 1 : l === 'wall' && r === 'body' ? 2 : 0;
    },
    (i) => unknown[i] === 1 && under[i] === 0 && known[i] === NOT_KNOWN,
  );
  if (!any) return;
  eachComponent(cand, bw, (piece) => {
    let right = 0, left = 0, xa = bw, xb = -1, yb = -1;
    for (const j of piece) {
      if (labels[j] === 1) right++;
      else if (labels[j] === 2) left++;
      (xa = Math.min(xa, j % bw)), (xb = Math.max(xb, j % bw)), (yb = Math.max(yb, Math.floor(j / bw)));
    }
    const outward = right >= 0.8 * piece.length ? 1 : left >= 0.8 * piece.length ? -1 : 0;
    if (!outward) return;
    // The outline below the piece: per row, the first wall pixel past the body, walked outwards
    // from the piece's inner side.
    const span = Math.round(0.25 * scale);
    const start = box.x0 + (outward > 0 ? xa : xb) - outward * reach;
    const fit = lineFit();
    for (let y = y0 + yb + 1; y < Math.min(h.image.height, y0 + yb + 1 + span); y++) {
      let seenBody = false;
      for (let k = 0, x = start; k < xb - xa + 2 * span && x >= 0 && x < W; k++, x += outward) {
        const j = y * W + x;
        if (bodyAt(j)) seenBody = true;
        else if (seenBody && wallAt(j)) {
          fit.add(y, x);
          break;
        }
      }
    }
    if (fit.n < 0.1 * scale) return;
    const { slope, icpt } = fit.line();
    for (const j of piece) {
      const x = (j % bw) + box.x0, y = Math.floor(j / bw) + y0;
      if (outward * (x + 0.5 - (slope * y + icpt)) <= 0) continue;
      const i = y * W + x;
      (under[i] = UNDER.background), (unknown[i] = 0);
    }
  });
}

/** Per fill group, where the fill may copy from (HairFinding.sources). */
function sourcesOf(h: Head, parse: FaceParse, crop: Box, inCrop: Uint8Array, soft: Uint8Array, sb: Box, hair: Uint8Array, person: Uint8Array, others: Uint8Array, beyond: Uint8Array): Uint8Array[] {
  const { frame } = h;
  const W = h.image.width, H = h.image.height;
  const labels = parse.labels;
  // Sources keep clear of any hair by ~1.5% of the face width: the soft edge of the old hair (a
  // dark fringe on skin, a light halo on a bright wall) copied into the fill draws its outline again.
  const anyHair = new Uint8Array(W * H);
  for (let y = sb.y0; y < sb.y1; y++) for (let x = sb.x0, i = y * W + x; x < sb.x1; x++, i++) anyHair[i] = soft[i]! > 20 ? 1 : 0;
  const nearHair = dilate(anyHair, W, H, Math.max(2, Math.round(0.015 * frame.scale)));
  const sources: Uint8Array[] = [];
  // Background: the parser's background class in its crop; beyond the crop the background goes
  // on (a window frame above the head): there, what the person mask calls background. Never on
  // the person mask. In another face's share of the photo (`others`, split by face centres) only
  // what the person mask is sure is no one (under 40, as beyond the crop): that share reaches over
  // the background between people, and in a group (face-api's whole sample5) it left the target's
  // cell a sliver of the stairs beside her: the hair hanging over them was filled with a murky
  // brown blob instead of the stairs and the railing.
  const bg = new Uint8Array(W * H);
  for (let i = 0; i < bg.length; i++) {
    if (nearHair[i] || person[i]! > 80 || (others[i] && person[i]! >= 40)) continue;
    if (inCrop[i] ? labels[i] === CLASS.background : !hair[i] && person[i]! < 40) bg[i] = 1;
  }
  sources[UNDER.background] = bg;
  // Skin and clothing: their classes in the crop, from the target's own body column only (a
  // neighbour's dress or arm is no exemplar for this person's shoulders, and an undetected
  // neighbour has no face to avoid).
  sources[UNDER.skin] = new Uint8Array(W * H);
  sources[UNDER.clothing] = new Uint8Array(W * H);
  for (let y = crop.y0; y < crop.y1; y++) {
    for (let x = crop.x0, i = y * W + x; x < crop.x1; x++, i++) {
      const g = BODY_SOURCE_OF_CLASS[labels[i]!]!;
      if (!g || nearHair[i] || others[i]) continue;
      if (Math.abs(frameU(frame, x + 0.5, y + 0.5)) <= BODY_COLUMN) sources[g]![i] = 1;
    }
  }
  // Past the crop, the body by colour (bodyBeyond), from the same column, clear of the hair: the
  // skin beside hair hanging over the chest below the crop is its best exemplar.
  for (let i = 0; i < beyond.length; i++) if (beyond[i] && person[i]! > 192) sources[beyond[i]!]![i] = 1;
  return sources;
}

/**
 * Original hair without BiSeNet: the person mask, off the face, near the head, hair-coloured.
 * Returns once the person mask's model runs (as hairFromParsing does).
 */
export async function hairFromSegmentation(seg: ModelSession, size: { width: number; height: number }, h: Head, t: StageTimer): Promise<{ found: Promise<HairFinding> }> {
  const s = await segmentPersonSoon(seg, h.image, size.width, size.height, t, { stages: ['segmentation', 'segmentation', 'segmentation'] });
  const found = s.small.then(() => t.time('segmentation', () => s.mask)).then((person) => t.time('postprocess', () => segmentedHair(h, person)));
  found.catch(() => {});
  return { found };
}

/**
 * How far segmentedHair looks for hair (face widths): below the chin (long hair to the chest, as
 * the parser's version follows it), above the forehead's top, and beside the centre line.
 */
const SEG_HAIR_REACH = { down: 3, up: 0.9, u: 1.3 };
/**
 * The half width of the cap over the skull where every person pixel above the forehead is hair
 * (face widths): an ellipse up to SEG_HAIR_REACH.up above the forehead's top. A band as wide as the
 * reach took a neighbour's hair above a rolled head (s5-right rotated 50°: her face changed by MAD
 * 24); cut at 0.6 above the forehead, a high crown's hair was left as an arc over the new hair.
 */
const SEG_HAIR_CAP = { u: 1.15 };
/** Its colour tolerance (CIE Lab distance): the hair's own spread times `spread`, within min..max. */
const SEG_HAIR_LIMIT = { spread: 1.6, min: 16, max: 30 };

/** segmentedHair's body around the hair, in face widths: below the chin, and beside the centre line (the hair's reach and a margin). */
const BODY_REACH = { down: SEG_HAIR_REACH.down + 0.3, u: SEG_HAIR_REACH.u + 0.3 };
/** segmentedHair's colour test, memoized per pixel (0: not tested). */
const SKIN = 1, NOT_SKIN = 2;

/**
 * skinColoured at pixel (x, y), memoized in `memo` (SKIN or NOT_SKIN), tested once per 2x2 block
 * (on its top-left pixel): the colour conversions of a body's every pixel at 1 MP were tens of ms,
 * and a block's pixels share their colour within the test's tolerance.
 */
function skinTest(image: RgbImage, memo: Uint8Array, x: number, y: number, ref: readonly number[]): number {
  const j = (y & ~1) * image.width + (x & ~1);
  if (!memo[j]) memo[j] = skinColoured(labAt(image.data, j), ref) ? SKIN : NOT_SKIN;
  return memo[j]!;
}

/** Median CIE Lab of a mask's pixels (every 7th; mid grey-brown when there are none). */
function medianLab(image: RgbImage, mask: Uint8Array): [number, number, number] {
  const samples = new LabSamples();
  for (let i = 0; i < mask.length; i += 7) if (mask[i]) samples.add(image.data, i);
  return samples.count ? samples.medians().ref : [60, 12, 18];
}

/** hairFromSegmentation's analysis of the person mask (see there). */
function segmentedHair(h: Head, person: Uint8Array): HairFinding {
  const { image, frame, anchors, protect } = h;
  const n = image.width * image.height;
  const W = image.width;
  // Above the head every person pixel is hair; its colour (median CIE Lab, and the median distance
  // to it: the hair's own spread, highlights and shade) decides below. A patch just above the
  // forehead's top was the sample before: on a parting or a sheen it was no colour of the hair,
  // and long black hair beside the face went unfound (s6-centre-left: 99% of it left).
  const above = new Uint8Array(n);
  const cand = new Uint8Array(n);
  const samples = new LabSamples();
  // The reach's box in the photo (turned with the head).
  const reach = frameBox(frame, -SEG_HAIR_REACH.u, SEG_HAIR_REACH.u, anchors.forehead - SEG_HAIR_REACH.up, anchors.chin + SEG_HAIR_REACH.down, W, image.height);
  for (let y = reach.y0; y < reach.y1; y++) {
    for (let x = reach.x0, i = y * W + reach.x0; x < reach.x1; x++, i++) {
      if (person[i]! < 100 || protect[i] || h.others[i]) continue;
      const u = frameU(frame, x + 0.5, y + 0.5), v = frameV(frame, x + 0.5, y + 0.5);
      // Not far above the skull (a neighbour above: her hair and shoulders are person too).
      if (v > anchors.chin + SEG_HAIR_REACH.down || v < anchors.forehead - SEG_HAIR_REACH.up || Math.abs(u) > SEG_HAIR_REACH.u) continue;
      // (The oval's width, interpolated, only where it matters.)
      const insideFace = v > anchors.forehead + 0.05 && v < anchors.chin && Math.abs(u) < anchors.ovalHalfWidth(v, u);
      if (insideFace) continue;
      if (v < anchors.forehead + 0.02) {
        // Above the forehead: a cap over the skull (an ellipse, narrower the higher), not the
        // corners of the band, where a neighbour's hair and shoulder are person pixels too.
        const cu = u / SEG_HAIR_CAP.u, cv = (anchors.forehead - v) / SEG_HAIR_REACH.up;
        if (cu * cu + cv * cv > 1) continue;
        above[i] = 1;
        if (i % 3 === 0 && person[i]! > 128) samples.add(image.data, i);
      } else cand[i] = 1;
    }
  }
  const { ref, spread } = samples.count ? samples.medians() : { ref: [0, 0, 0], spread: 0 };
  const limit = Math.min(SEG_HAIR_LIMIT.max, Math.max(SEG_HAIR_LIMIT.min, SEG_HAIR_LIMIT.spread * spread));
  // Below the head: the person pixels of the hair's colour, in the pieces that reach the zone
  // around the skull and beside the face (headZone, as the parser's hair must): a neck or a top of
  // that colour elsewhere is not hair; long hair over the chest hangs from there.
  for (let y = reach.y0; y < reach.y1; y++) {
    for (let i = y * W + reach.x0; i < y * W + reach.x1; i++) {
      if (above[i]) cand[i] = 1;
      else if (cand[i]) {
        const lab = labAt(image.data, i);
        cand[i] = closerThan(lab[0] - ref[0]!, lab[1] - ref[1]!, lab[2] - ref[2]!, limit) ? 1 : 0;
      }
    }
  }
  const found = componentsTouching(cand, headZone(h, cand, reach), W, image.height);
  const hair = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (found[i]) hair[i] = person[i]!;
  // What the hair hides, by the same head and body geometry as with the face parser, the body
  // below the chin known by colour: the face's skin colour (the median of the protected face)
  // or clothing. Every hair pixel was "skin" before (the person mask holds the hair), and the fill
  // painted a skin-coloured hood over the wall behind the head.
  const skinRef = medianLab(image, protect);
  // Planes of this function only, from the thread's scratch pool.
  const known = takeBytes(n).fill(NOT_KNOWN);
  const skinMemo = takeBytes(n);
  // Only around the hair: the fill looks for sources no farther than half the hole's size beyond
  // it (patchFill's margin), and the flood's seeds that matter touch the hair (a loop over the
  // whole photo cost ~50 ms at 1 MP).
  const around = aroundHair(hair, W, image.height, frame.scale);
  const { x0: bx0, x1: bx1, y0: by0, y1: by1 } = around;
  for (let y = by0; y < by1; y++) {
    for (let x = bx0, i = y * W + bx0; x < bx1; x++, i++) {
      if (hair[i]! > 20 || person[i]! <= 128 || h.others[i]) continue;
      // The body near the hair (which ends SEG_HAIR_REACH below the chin and beside the centre line).
      const v = frameV(frame, x + 0.5, y + 0.5);
      if (v < anchors.chin || v > anchors.chin + BODY_REACH.down || Math.abs(frameU(frame, x + 0.5, y + 0.5)) > BODY_REACH.u) continue;
      known[i] = skinTest(image, skinMemo, x, y, skinRef) === SKIN ? UNDER.skin : UNDER.clothing;
    }
  }
  const under = underFrom(h, known, null, hair, person, around);
  // Sources clear of the hair's soft edge (as with the parser: sourcesOf), off other people; the
  // body's from the target's own column (|u| <= BODY_COLUMN), clothing below the chin.
  const anyHair = takeBytes(n);
  for (let i = 0; i < n; i++) anyHair[i] = hair[i]! > 20 ? 1 : 0;
  const nearHair = dilate(anyHair, W, image.height, Math.max(2, Math.round(0.015 * frame.scale)));
  const sources: Uint8Array[] = [];
  const bg = new Uint8Array(n), skin = new Uint8Array(n), clothing = new Uint8Array(n);
  for (let y = by0; y < by1; y++) {
    for (let x = bx0, i = y * W + bx0; x < bx1; x++, i++) {
      if (nearHair[i]) continue;
      // (Background in another face's share of the photo is background too: see sourcesOf.)
      if (person[i]! < (h.others[i] ? 40 : 64)) bg[i] = 1;
      if (h.others[i] || person[i]! <= 192 || Math.abs(frameU(frame, x + 0.5, y + 0.5)) > BODY_COLUMN) continue;
      const v = frameV(frame, x + 0.5, y + 0.5);
      if (v > anchors.chin + BODY_REACH.down) continue;
      if (skinTest(image, skinMemo, x, y, skinRef) === SKIN) skin[i] = 1;
      else if (v > anchors.chin) clothing[i] = 1;
    }
  }
  sources[UNDER.background] = bg;
  sources[UNDER.skin] = skin;
  sources[UNDER.clothing] = clothing;
  giveBack(known, skinMemo, anyHair, nearHair);
  return { hair, under, sources, person, others: h.others };
}
