// The old hair's removal (pure: pixels in, pixels out).
//   removal        original hair the new style does not cover, dilated to take its halo along
//   fillRemoved    exemplar fill (steps/patch-fill) of the removed hair, per what it hides, each
//                  part as soft as its sources beside it (imaging/blur matchSharpness), the seams
//                  between the parts as soft as the photo's own edges (softenSeams), and the ears
//                  the old hair hid drawn over it (ears.ts)
//   finishLocks    the old hair kept over the forehead (locks over the face): its cut ends tapered
//                  into the fill; dyed by composite.ts
import type { HairColor } from '../../domain/job.ts';
import { boxBlurInPlace, matchSharpness, type SharpnessFills } from '../../imaging/blur.ts';
import type { RgbImage } from '../../imaging/image.ts';
import { bellNoise } from '../../imaging/grain.ts';
import { chamfer, dilate, grownMaskBox, indicesBox, maskBox, type PixelBox } from '../../imaging/morphology.ts';
import { giveBack, takeBytes, takeInts, takePlane } from '../../imaging/scratch.ts';
import { HAIR_COLOR_TARGETS, labAt, skinColoured, skinLike, srgbToLab } from '../../steps/color.ts';
import { patchFill, pullPush, sourceRegion } from '../../steps/patch-fill.ts';
import { HAIR_ON, UNDER } from './hair.ts';
import { NATURAL_HAIRLINE, frameU, frameV, fromFrame, jawLine } from './frame.ts';
import { smooth } from './templates.ts';
import { drawEars } from './ears.ts';
import type { HairLayer, HeadAnalysis, Look } from './render.ts';
/**
 * Where a picture's new hair covers the photo opaquely (alpha 0.95 or more): 1 there. With `into`,
 * of several pictures at once: `into` keeps its 1 only where this layer covers too (in place).
 */
export function opaqueCover(layer: HairLayer, into?: Uint8Array): Uint8Array {
  const { alpha } = layer;
  if (!into) {
    const cover = new Uint8Array(alpha.length);
    for (let i = 0; i < alpha.length; i++) cover[i] = alpha[i]! >= 0.95 ? 1 : 0;
    return cover;
  }
  for (let i = 0; i < into.length; i++) if (alpha[i]! < 0.95) into[i] = 0;
  return into;
}

/**
 * Where the photo must be filled: original hair (soft mask above 30%) the new hair does not
 * cover opaquely (`covered`, opaqueCover: of every picture a task draws, so one fill serves them
 * all), grown by ~1.5% of the face width so no fringe of old hair survives; never the
 * protected face, never another person. Locks over the face are kept up to the new hair
 * (keepLocks): slanted ones only where the new colour is near the old hair's (LOCK_SAME_COLOUR).
 * Returns that hole and the locks kept (keepLocks' grown mask; null without any), which
 * finishLocks tapers and dyes.
 */
export function removal(an: HeadAnalysis, covered: Uint8Array, color: HairColor): { hole: Uint8Array; locks: Uint8Array | null } {
  const { width: W, height: H } = an.image;
  const raw = new Uint8Array(W * H);
  for (let i = 0; i < raw.length; i++) raw[i] = an.hair[i]! > HAIR_ON && !covered[i] ? 1 : 0;
  const r = Math.max(1, Math.round(an.frame.scale * 0.015));
  const old = srgbToLab(...an.hairColour), target = srgbToLab(...HAIR_COLOR_TARGETS[color].srgb);
  const alike = Math.hypot(old[0] - target[0], old[1] - target[1], old[2] - target[2]) < LOCK_SAME_COLOUR;
  const locks = keepLocks(an, raw, r, alike ? LOCK_SLOPES : [0], covered);
  const grown = dilate(raw, W, H, r);
  // Around a kept lock the grown edge keeps the photo (the lock's own soft edge), but for old hair
  // still to remove.
  for (let i = 0; i < grown.length; i++) if (an.protect[i] || an.others[i] || (locks?.[i] && !raw[i])) grown[i] = 0;
  return { hole: grown, locks };
}

/**
 * Where the old hair kept over the forehead (keepLocks' locks) takes the new colour (v, face
 * widths above the brows): fully from KEPT_DYE.full up, fading out by KEPT_DYE.none, so none of it
 * reaches the face below the brows (kept as it is). A little above the brows, not at them: the
 * brows' line is a landmark's, and an independent one may sit a little higher.
 */
const KEPT_DYE = { full: 0.12, none: 0.03 };

/** The old hair kept over the forehead (finishLocks): its pixels, coverage and CIE L about the old hair's median. */
export interface KeptLocks {
  at: Int32Array;
  alpha: Float32Array;
  dL: Float32Array;
}

/**
 * How far (face widths) a kept lock's cut ends taper into the fill (finishLocks): a lock kept up to
 * the natural hairline ended there in a straight cut across it, and at the face's width bound in
 * a vertical one, a slab with square corners on the bare forehead (s6-left's Crew Cut).
 */
const LOCK_TAPER = 0.05;

/**
 * The old hair the removal keeps over the forehead (a lock over the face, kept up to the new hair:
 * keepLocks) finished: its cut ends tapered into the fill, and the lock listed for composite to
 * dye the new colour under the new hair (left in its own colour, a black lock under a brown or
 * blonde Crew Cut read as her own hair under a wig). The taper: old hair of the hole within
 * LOCK_TAPER of the kept lock comes back over the fill, the nearer the more (quadratically), so
 * the lock thins out where it was cut instead of ending in a straight edge; in `filled` (the
 * task's own copy), in place. The dye: the lock's light and dark are the photo's (dL, its CIE L
 * about the old hair's median), its coverage the old hair's soft mask (times the taper's weight on
 * the taper) fading to none towards the brows (KEPT_DYE), so the lock's ends below them keep her
 * own colour. Only within the locks keepLocks kept (`locks`, grown by the removal's margin: their
 * own soft edge; the old hair's faint edge beyond it, on the forehead's skin, is not tinted) and
 * their taper, off the protected face and other people. Null where there is none.
 */
export function finishLocks(an: HeadAnalysis, filled: RgbImage, hole: Uint8Array, locks: Uint8Array | null): KeptLocks | null {
  if (!locks) return null;
  const { frame, anchors, hair } = an;
  const { width: W, height: H, data } = an.image;
  const R = Math.max(2, Math.round(LOCK_TAPER * frame.scale));
  const box = grownMaskBox(locks, W, H, R);
  if (!box) return null;
  const { x0, y0 } = box, bw = box.x1 - x0, bh = box.y1 - y0;
  const bottom = anchors.brows - KEPT_DYE.none;
  const L0 = srgbToLab(...an.hairColour)[0]!;
  const at: number[] = [], alpha: number[] = [], dL: number[] = [];
  // The kept lock's pixels (the seeds of the taper's distance).
  const kept = takeBytes(bw * bh);
  for (let y = 0; y < bh; y++) {
    for (let x = 0, j = y * bw, i = (y + y0) * W + x0; x < bw; x++, j++, i++) {
      if (locks[i] && !hole[i] && hair[i]! > HAIR_ON && !an.protect[i] && !an.others[i]) kept[j] = 1;
    }
  }
  const dist = filled !== an.image ? chamfer(kept, bw, bh) : null;
  for (let y = 0; y < bh; y++) {
    for (let x = 0, j = y * bw, i = (y + y0) * W + x0; x < bw; x++, j++, i++) {
      const h = hair[i]!;
      if (!h || an.protect[i] || an.others[i]) continue;
      let cover: number;
      if (hole[i]) {
        // The taper: old hair of the hole near the kept lock (distances in thirds of a pixel).
        // Over the wall too: kept to the skin, the lock's cut at the face's width bound stayed a
        // square corner against the filled wall (s6-left's right temple); tapered, a soft dark edge.
        if (!dist || h <= HAIR_ON) continue;
        const f = 1 - dist[j]! / (3 * R);
        if (f <= 0) continue;
        cover = taperBack(filled.data, data, i, f, h);
      } else if (locks[i]) cover = h / 255;
      else continue;
      const v = frameV(frame, x + x0 + 0.5, y + y0 + 0.5);
      if (v >= bottom) continue;
      const a = cover * (1 - smooth(anchors.brows - KEPT_DYE.full, bottom, v));
      if (a <= 0.004) continue;
      at.push(i), alpha.push(a), dL.push(labAt(data, i)[0]! - L0);
    }
  }
  giveBack(kept);
  return at.length ? { at: Int32Array.from(at), alpha: Float32Array.from(alpha), dL: Float32Array.from(dL) } : null;
}

/** How far below the brows a lock must reach over the face to be kept above them (face widths). */
const LOCK_BELOW = 0.12;
/**
 * The slants a lock may take (face widths across per face width down): side-swept hair crosses the
 * brows at a slant, and a lock tested in its own column only was cut where it left that column
 * (s6-left's temples: a flat band of filled forehead between the new fringe and the lock).
 */
const LOCK_SLOPES = [0, -0.25, 0.25, -0.5, 0.5];
/**
 * The CIE Lab distance between the old hair's median colour and the new colour's target under
 * which slanted locks are kept (about black to mid brown). A strand of her own hair coming out from
 * under new hair of its colour reads as her hair; under a contrasting colour it reads as her hair
 * under a hat or a wig (the reference parser: s6-left's grey Buzz Cut 93% read as hair with the
 * temples filled, 19% with her black locks kept up to it; pink and white alike).
 */
const LOCK_SAME_COLOUR = 30;
/**
 * How far past the face oval's half width at the brows a lock may lie (face widths): a lock over
 * the temple (at the oval's own width, s6-left's outer locks were cut where they crossed it).
 */
const LOCK_MARGIN = 0.045;

/**
 * Hair lying over the face below the brows stays (the face is kept as it is), so where such a lock
 * reaches up over the forehead it is kept there too, from the brows up to the new hair: removed
 * above the brows only, it was a slab of old hair on the cheek cut off straight at the brow line,
 * under a band of filled forehead. Only locks (old hair along a line from the pixel down to
 * LOCK_BELOW under the brows, at one of `slopes`: halfway to the brows, at them, and halfway
 * and LOCK_BELOW below them), not a fringe ending at the brows; only between the natural hairline
 * (NATURAL_HAIRLINE above the forehead landmark) and the brows, inside the face's width, and only
 * where the new hair (`covered`) lies above (underNewHair; straight up the head's frame, also for
 * a slanted lock). Clears the locks from `raw` (the hair to remove) and returns them grown by the
 * removal's margin `r`: the removal's grown edge must not eat into them.
 */
function keepLocks(an: HeadAnalysis, raw: Uint8Array, r: number, slopes: readonly number[], covered: Uint8Array): Uint8Array | null {
  const { frame, anchors, hair } = an;
  const { width: W, height: H } = an.image;
  const box = maskBox(raw, W, H);
  if (!box) return null;
  const kept = new Uint8Array(W * H);
  let any = false;
  for (let y = box.y; y < box.y + box.height; y++) {
    for (let x = box.x, i = y * W + x; x < box.x + box.width; x++, i++) {
      if (!raw[i]) continue;
      const v = frameV(frame, x + 0.5, y + 0.5);
      if (v < anchors.forehead - NATURAL_HAIRLINE || v >= anchors.brows) continue;
      const u = frameU(frame, x + 0.5, y + 0.5);
      if (Math.abs(u) > anchors.ovalHalfWidth(anchors.brows, u) + LOCK_MARGIN) continue;
      const lock = slopes.some((slope) => {
        for (const at of [(v + anchors.brows) / 2, anchors.brows, anchors.brows + LOCK_BELOW / 2, anchors.brows + LOCK_BELOW]) {
          const [fx, fy] = fromFrame(frame, u + slope * (at - v), at);
          const qx = Math.floor(fx), qy = Math.floor(fy);
          if (qx < 0 || qy < 0 || qx >= W || qy >= H || hair[qy * W + qx]! <= HAIR_ON) return false;
        }
        return true;
      });
      if (lock && underNewHair(an, covered, u, v)) (raw[i] = 0), (kept[i] = 1), (any = true);
    }
  }
  return any ? dilate(kept, W, H, r) : null;
}

/**
 * Whether the new hair lies above (u, v) (frame coordinates) within LOCK_UNDER face widths past
 * the natural hairline: a lock kept there comes out from under it. A lock beside the new hair's
 * side came out of nothing: cut at the natural hairline and at the face's width bound, a dark
 * slab stood at s6-centre-right's temple beside her Crew Cut.
 */
function underNewHair(an: HeadAnalysis, covered: Uint8Array, u: number, v: number): boolean {
  const { frame, anchors } = an;
  const { width: W, height: H } = an.image;
  // A pixel's step up the head's frame (v - 1 / scale), walked without a point per step.
  const steps = Math.floor((v - (anchors.forehead - NATURAL_HAIRLINE - LOCK_UNDER)) * frame.scale);
  let [fx, fy] = fromFrame(frame, u, v);
  for (let k = 0; k <= steps; k++, fx += frame.uy, fy -= frame.ux) {
    const x = Math.floor(fx), y = Math.floor(fy);
    if (x < 0 || y < 0 || x >= W || y >= H) return false;
    if (covered[y * W + x]) return true;
  }
  return false;
}

/**
 * Old hair lying over the face across the brows (a side-swept fringe, a lock over an eye) is kept
 * below them (the face is kept as it is) and removed above: it ended in a straight cut along the
 * brow line under a plate of filled forehead (s5-left and s6-left under a Buzz Cut). Tapered as a
 * kept lock's cut ends are (finishLocks): old hair of the hole above the brows within LOCK_TAPER
 * of the protected old hair just below them (within LOCK_TAPER of the brow line) comes back over
 * the fill, the nearer the more (quadratically, times its soft mask), so the lock thins out upwards
 * instead of ending in a line. Not dyed (the lock below keeps her colour), not below the brows (the
 * hair beside a cheek is the long hair a short style removes), off other people; in place.
 */
function taperAtBrows(an: HeadAnalysis, img: RgbImage, hole: Uint8Array): void {
  const { frame, anchors, hair, protect } = an;
  const { width: W, height: H, data } = an.image;
  const pb = maskBox(protect, W, H);
  if (!pb) return;
  const R = Math.max(2, Math.round(LOCK_TAPER * frame.scale));
  // The protected old hair just below the brow line, on the protected face's box grown by R.
  const x0 = Math.max(0, pb.x - R), y0 = Math.max(0, pb.y - R), x1 = Math.min(W, pb.x + pb.width + R), y1 = Math.min(H, pb.y + pb.height + R);
  const bw = x1 - x0, bh = y1 - y0;
  const seeds = takeBytes(bw * bh);
  let any = false;
  for (let y = pb.y; y < pb.y + pb.height; y++) {
    for (let x = pb.x, i = y * W + x; x < pb.x + pb.width; x++, i++) {
      if (!protect[i] || hair[i]! <= HAIR_ON || frameV(frame, x + 0.5, y + 0.5) >= anchors.brows + LOCK_TAPER) continue;
      seeds[(y - y0) * bw + x - x0] = 1;
      any = true;
    }
  }
  if (!any) return giveBack(seeds);
  // Distances in thirds of a pixel (chamfer).
  const dist = chamfer(seeds, bw, bh);
  for (let y = y0; y < y1; y++) {
    for (let x = x0, i = y * W + x, j = (y - y0) * bw; x < x1; x++, i++, j++) {
      const h = hair[i]!;
      if (!hole[i] || h <= HAIR_ON || an.others[i]) continue;
      const f = 1 - dist[j]! / (3 * R);
      if (f <= 0 || frameV(frame, x + 0.5, y + 0.5) >= anchors.brows) continue;
      taperBack(img.data, data, i, f, h);
    }
  }
  giveBack(seeds);
}

/**
 * A taper's step (finishLocks, taperAtBrows): the photo's old hair at pixel `i` brought back over
 * the fill `out` with weight f^2 times its soft mask `h` (f: 1 at the kept hair, 0 at the taper's
 * reach), in place; returns that weight.
 */
function taperBack(out: Uint8Array, photo: Uint8Array, i: number, f: number, h: number): number {
  const w = f * f * (h / 255);
  for (let c = 0; c < 3; c++) out[3 * i + c] = Math.round(out[3 * i + c]! * (1 - w) + photo[3 * i + c]! * w);
  return w;
}

/** How far above the natural hairline (face widths) underNewHair looks for the new hair. */
const LOCK_UNDER = 0.05;

/**
 * The fill's preference for nearby sources (patchFill's locality): a source a quarter of the fill
 * region away costs as much as 18 levels of difference per pixel and channel, half the region away
 * 35. Without it the fill took the texture that matched the hole best overall (a window's blinds, a
 * bright wall) all around the head: a pale hood against the door frame or the stairs that the hair
 * had covered beside it. Stronger (20000) it also continued a neighbour's hair into the gap beside
 * the head (s6-right mirrored), which the face parser reads as the target's hair left.
 */
const FILL_LOCALITY = 5000;

/**
 * Fills the removed hair with what it most likely hides: each fill group (background, skin,
 * clothing) by exemplar patches of that group only, so a wall is continued with wall and a neck
 * with skin, never with a face or hair. The groups are first smoothed (the most common group in a
 * window of ~3% of the face width), so where a neck meets the wall the outline is a curve, not
 * the staircase of the geometric rules and the flood. Skin is copied from the parsed face and
 * neck and from the skin-coloured person pixels around the hole, clothing from the parsed cloth
 * and the target's clothing around the hole (bodyAround). The copies cross-fade where the match
 * field changes (patchFill's blend): a bared chest or a plain wall showed the copy levels' blocks
 * as a mosaic of squares.
 */
export function fillRemoved(an: HeadAnalysis, hole: Uint8Array, seed: number, look: Pick<Look, 'edgeBlur' | 'grain' | 'lightSide' | 'monochrome'>): RgbImage {
  const n = hole.length;
  const { width: W, height: H } = an.image;
  let img = an.image;
  // The hole's pixels, listed once (a small part of the photo): each group's part and the clearing
  // of the hole from its sources walk this list, not the photo.
  let count = 0;
  for (let i = 0; i < n; i++) if (hole[i]) count++;
  const holeAt = new Int32Array(count);
  for (let i = 0, k = 0; k < count; i++) if (hole[i]) holeAt[k++] = i;
  const groups = smoothGroups(an.under, hole, holeAt, W, H, an.sources.length, Math.max(1, Math.round(0.03 * an.frame.scale)));
  // The fills marked for matchSharpness on the hole's box and a margin around it: each group's
  // part and its sources there (beside it).
  const margin = Math.round(0.1 * an.frame.scale) + 8;
  const hb = indicesBox(holeAt, W) ?? { x0: 0, y0: 0, x1: 0, y1: 0 };
  const region = { x0: Math.max(0, hb.x0 - margin), y0: Math.max(0, hb.y0 - margin), x1: Math.min(W, hb.x1 + margin), y1: Math.min(H, hb.y1 + margin) };
  const rw = region.x1 - region.x0;
  const marked: SharpnessFills = { region, bits: new Uint8Array(rw * (region.y1 - region.y0)), fills: [] };
  // The finest detail the skin and clothing fills keep (~1.2% of the face width: pores, grain, weave).
  const fine = Math.max(2, Math.round(0.012 * an.frame.scale));
  for (let g = 1; g < an.sources.length; g++) {
    const part = new Uint8Array(n);
    let any = 0;
    for (let k = 0; k < count; k++) if (groups[k] === g) any = part[holeAt[k]!] = 1;
    if (!any) continue;
    // The group's sources (0/1) less the hole: a copy, cleared on the hole's pixels.
    const src = new Uint8Array(an.sources[g]!);
    if (g === UNDER.skin || g === UNDER.clothing) bodyAround(an, part, hole, src, g === UNDER.skin);
    for (const i of holeAt) src[i] = 0;
    if (g === UNDER.clothing) clearOfHair(an, src);
    if (g === UNDER.skin) skinColouredOnly(an, part, src);
    // The first group's fill is a new picture; the next ones fill it in place.
    img = patchFill(img, part, { source: src, seed: seed + g, inPlace: img !== an.image, locality: FILL_LOCALITY, blend: true, sourcesPerHole: 1 });
    // Bare skin keeps only the copied texture's finest detail (~1.2% of the face width: pores,
    // grain) over an even tone; at 4% the copy's blocks and blotches still showed.
    if (g === UNDER.skin && img !== an.image) {
      evenTone(img, part, src, an.hair, Math.max(1, Math.round(TONE_CLEAR * an.frame.scale)), fine, jawShade(an), { grain: look.grain, seed: seed + g });
      meetSkin(an, img, part, hole);
    }
    // The background's fill meets the background beside it in tone (BACKGROUND_MEET).
    if (g === UNDER.background && img !== an.image) {
      meetAround(an.image, img, part, hole, an.frame.scale, BACKGROUND_MEET.fadeOut, BACKGROUND_MEET.smooth, (q) => !an.others[q] && !an.protect[q] && an.hair[q]! <= HAIR_ON && an.under[q] === UNDER.background && an.person[q]! < 128, Math.max(1, Math.round((BACKGROUND_MEET.smooth * an.frame.scale) / 4)));
    }
    // Clothing without a pattern at the copy's block scale loses the copy's blocks (BLOCKS).
    if (g === UNDER.clothing && img !== an.image && textureAround(an.image, part, src, fine) < PATTERNED) dropBlocks(img, part, src, fine, Math.round(BLOCKS * an.frame.scale));
    if (img !== an.image && marked.fills.length < 4) markFill(marked, part, src, holeAt, groups, g, W);
  }
  // Each group's fill as soft as its sources beside it (an out-of-focus background's fill was
  // sharper than the photo there: block edges and seams): once every group is filled, so no blur
  // reaches the old hair of a group still to fill.
  matchSharpness(img, marked, margin);
  if (img !== an.image) {
    softenSeams(img, holeAt, groups, look.edgeBlur);
    taperAtBrows(an, img, hole);
    // The ears the old hair hid, drawn over the fill (under the new hair).
    drawEars(an, img, hole, look, seed);
  }
  return img;
}

/**
 * How the background's fill meets the background beside it (meetAround): the difference between
 * the known background along the hole's edge (off any person: the old hair's own edge, her body and
 * other people are not what the fill continues) and the fill there, averaged along the edge over
 * `smooth` face widths (the tone, not the texture: blinds' slats out of phase average out), is
 * spread into the fill, three quarters of it a third of `fadeOut` in and none past `fadeOut`. The
 * exemplar fill takes its structure from where the hole is widest: a narrow band between a new
 * style's outline and the old hair's was filled with the blinds that fill the rest of the hole,
 * a white rim against the yellow wall above s6-left's head (issue 11's halo); its colour offset
 * (patch-fill.ts) measures lighting between matched patches, not this mismatch. Where the fill
 * already continues what is beside it the difference is texture, and averages out.
 */
const BACKGROUND_MEET = { fadeOut: 0.2, smooth: 0.06 };

/**
 * The softest and the sharpest seam softenSeams makes (px, a Gaussian's sigma): a sharp photo's
 * edges still spread over a pixel or so (its lens and its anti-aliasing), and past 3 px the
 * window grows costly for no visible gain.
 */
const SEAM_BLUR = { min: 0.7, max: 3 };

/**
 * The seams of the fill as soft as the photo's own edges: where one fill group meets another (a
 * filled neck against the filled wall), the groups were cut along the pixel grid, a razor-sharp
 * staircase on a soft photo (a neck cut out like a sticker). Each filled pixel within 2.5 sigma of
 * such a seam takes what a Gaussian blur of that sigma would bring it from the other groups'
 * side, and nothing of its own: the mass m of the other groups' pixels in its window, their
 * weighted mean M, and out = (1 - m) x its own value + m x M. Away from a seam m is 0 and the
 * fill's texture is kept; at a seam between two flat areas the result is the blurred step a lens
 * makes. Where the fill meets the photo's own pixels nothing is blended: the old hair's remnants
 * at the hole's edge were drawn into the fill (the reference parser's long hair left rose past
 * 0.15 on two development runs). Only the hole's pixels change.
 */
function softenSeams(img: RgbImage, holeAt: Int32Array, groups: Uint8Array, edgeBlur: number): void {
  const { width: W, height: H, data } = img;
  const sigma = Math.min(SEAM_BLUR.max, Math.max(SEAM_BLUR.min, edgeBlur));
  const R = Math.ceil(2.5 * sigma);
  const hb = indicesBox(holeAt, W);
  if (!hb) return;
  // Labels on the hole's box grown by R + 1 (a window never leaves it): 0 for the photo's own
  // pixels, 1 + the group in the hole.
  const x0 = Math.max(0, hb.x0 - R - 1), y0 = Math.max(0, hb.y0 - R - 1), x1 = Math.min(W, hb.x1 + R + 1), y1 = Math.min(H, hb.y1 + R + 1);
  const bw = x1 - x0, bh = y1 - y0;
  const label = takeBytes(bw * bh);
  for (let k = 0; k < holeAt.length; k++) {
    const i = holeAt[k]!, x = i % W, y = (i - x) / W;
    label[(y - y0) * bw + x - x0] = 1 + groups[k]!;
  }
  // Seam pixels (a hole pixel with a 4-neighbour of another group), then the pixels within R of one.
  const seam = takeBytes(bw * bh);
  let any = false;
  for (let y = 0; y < bh; y++) {
    for (let x = 0, j = y * bw; x < bw; x++, j++) {
      const l = label[j]!;
      if (!l) continue;
      if ((x + 1 < bw && label[j + 1] && label[j + 1] !== l) || (y + 1 < bh && label[j + bw] && label[j + bw] !== l)) {
        seam[j] = 1;
        any = true;
      }
    }
  }
  if (!any) return giveBack(label, seam);
  const near = dilate(seam, bw, bh, R + 1);
  // The Gaussian's weights over the window, by squared distance.
  const g = new Float64Array(2 * R * R + 1);
  for (let d2 = 0; d2 < g.length; d2++) g[d2] = Math.exp(-d2 / (2 * sigma * sigma));
  let wsum = 0;
  for (let dy = -R; dy <= R; dy++) for (let dx = -R; dx <= R; dx++) wsum += g[dx * dx + dy * dy]!;
  // Each pixel's result from the pixels as they were: written once every pixel is computed.
  const out: number[] = [];
  for (let y = 0; y < bh; y++) {
    for (let x = 0, j = y * bw; x < bw; x++, j++) {
      const own = label[j]!;
      if (!own || !near[j]) continue;
      let m = 0, s0 = 0, s1 = 0, s2 = 0;
      for (let dy = Math.max(-R, -y); dy <= Math.min(R, bh - 1 - y); dy++) {
        for (let dx = Math.max(-R, -x); dx <= Math.min(R, bw - 1 - x); dx++) {
          const q = j + dy * bw + dx;
          if (!label[q] || label[q] === own) continue;
          const w = g[dx * dx + dy * dy]!;
          const k = 3 * ((y0 + y + dy) * W + x0 + x + dx);
          (m += w), (s0 += w * data[k]!), (s1 += w * data[k + 1]!), (s2 += w * data[k + 2]!);
        }
      }
      if (!m) continue;
      // The rest of the window (its own group, the photo's own pixels, past the photo's edge)
      // counts as the pixel's own side.
      m /= wsum;
      const k = 3 * ((y0 + y) * W + x0 + x);
      out.push(k, (1 - m) * data[k]! + s0 / wsum, (1 - m) * data[k + 1]! + s1 / wsum, (1 - m) * data[k + 2]! + s2 / wsum);
    }
  }
  for (let t = 0; t < out.length; t += 4) {
    const k = out[t]!;
    (data[k] = Math.round(out[t + 1]!)), (data[k + 1] = Math.round(out[t + 2]!)), (data[k + 2] = Math.round(out[t + 3]!));
  }
  giveBack(label, seam, near);
}

/**
 * Clothing sources within this many face widths of the old hair are left out of the clothing's
 * fill: beside hair lying over a top, the top lies in the hair's shadow and is crossed by stray
 * strands, and copied from there the fill was darker and streaked (s5-right's red top 14.6 dE from
 * the top below the hair, 10.2 now; dark streaks over s6-centre-left's maroon one). Not for skin:
 * the same band round s5-left's bared shoulder left its lit skin too far off (5.6 -> 11.5 dE).
 */
const CLEAR_OF_HAIR = 0.06;

/**
 * clearOfHair: `src` less the band CLEAR_OF_HAIR wide round the old hair (soft mask above 30%, as
 * removal reads it), unless that leaves under a third of the sources (or 200 pixels): a top
 * nearly all under long hair keeps them all.
 */
function clearOfHair(an: HeadAnalysis, src: Uint8Array): void {
  const { width: W, height: H } = an.image;
  const n = W * H;
  const near = nearOldHair(an.hair, W, { x0: 0, y0: 0, x1: W, y1: H }, Math.max(1, Math.round(CLEAR_OF_HAIR * an.frame.scale)));
  let all = 0, kept = 0;
  for (let i = 0; i < n; i++) {
    if (!src[i]) continue;
    all++;
    if (!near[i]) kept++;
  }
  if (kept >= Math.max(200, all / 3)) for (let i = 0; i < n; i++) if (near[i]) src[i] = 0;
  giveBack(near);
}

/**
 * The band `r` px wide round the old hair (soft mask over HAIR_ON, as removal reads it) and round
 * `also` where given, on `box` of a photo `W` wide: a mask of the box's size (row by row). The
 * pixels a fill's sources keep clear of, where hair shades what lies beside it and its stray
 * strands cross it (clearOfHair for clothing, evenTone's tone for skin).
 */
function nearOldHair(hair: Uint8Array, W: number, box: PixelBox, r: number, also?: Uint8Array): Uint8Array {
  const bw = box.x1 - box.x0, bh = box.y1 - box.y0;
  const seed = takeBytes(bw * bh);
  for (let y = 0; y < bh; y++) {
    for (let x = 0, i = (y + box.y0) * W + box.x0; x < bw; x++, i++) seed[y * bw + x] = also?.[i] || hair[i]! > HAIR_ON ? 1 : 0;
  }
  const near = dilate(seed, bw, bh, r);
  giveBack(seed);
  return near;
}

/**
 * Clothing filled without its copy's blocks: what the copy varies by between a fine radius (1.2% of
 * the face width: the weave, grain) and BLOCKS face widths is taken out, the finer detail and the
 * broader light kept. The copy takes a plain top's folds block by block, and the blocks' light
 * differs: over s5-right's red top a mosaic of lighter and darker squares (its texture at that
 * scale 3.3 times the top's own; 1.9 times now, the dev-set test). Wider (12%) it also evened out
 * the copy's light over s6-left's ribbed green top towards one flat block (its lightness spread
 * under 35% of the top's, which the dev-set test counts as a painted block); an even tone under the
 * finest detail, as for skin, flattened that top further.
 */
const BLOCKS = 0.04;
/**
 * Clothing whose sources' texture at the copy's block scale (textureAround, luma levels) reaches
 * this has a pattern there, stripes or a print, which dropBlocks would blur: its copy is kept. On
 * the development photos the plain tops under long hair measure 2.0-3.2, s6-right's striped one 42.
 */
const PATTERNED = 10;

/**
 * The texture of `sources` around `part` at the copy's block scale: the RMS (luma levels) of the
 * difference between their means over radius r and over 4r, each mean over the sources alone (a
 * window across the hole would count the old hair's edges), at the sources whose 4r window is at
 * least half sources. 0 without such sources.
 */
function textureAround(img: RgbImage, part: Uint8Array, sources: Uint8Array, r: number): number {
  const { width: W, height: H, data } = img;
  const box = grownMaskBox(part, W, H, 8 * r);
  if (!box) return 0;
  const { x0, y0 } = box, bw = box.x1 - x0, bh = box.y1 - y0, n0 = bw * bh;
  // The luma and the sources' mask, each then blurred over r (fine) and 4r (coarse), in place.
  const fine = takePlane(n0), fineN = takePlane(n0), coarse = takePlane(n0), coarseN = takePlane(n0);
  for (let y = 0; y < bh; y++) {
    for (let x = 0, i = (y + y0) * W + x0, j = y * bw; x < bw; x++, i++, j++) {
      if (!sources[i] || part[i]) continue;
      fine[j] = coarse[j] = 0.299 * data[3 * i]! + 0.587 * data[3 * i + 1]! + 0.114 * data[3 * i + 2]!;
      fineN[j] = coarseN[j] = 1;
    }
  }
  boxBlurInPlace([fine, fineN], bw, bh, r);
  boxBlurInPlace([coarse, coarseN], bw, bh, 4 * r);
  let e = 0, n = 0;
  for (let y = 0; y < bh; y++) {
    for (let x = 0, i = (y + y0) * W + x0, j = y * bw; x < bw; x++, i++, j++) {
      if (!sources[i] || part[i] || coarseN[j]! < 0.5) continue;
      const d = fine[j]! / fineN[j]! - coarse[j]! / coarseN[j]!;
      (e += d * d), n++;
    }
  }
  giveBack(fine, fineN, coarse, coarseN);
  return n ? Math.sqrt(e / n) : 0;
}

/**
 * dropBlocks (see BLOCKS): each pixel of `part` less its mean over radius r plus its mean over
 * radius R, both means over the part and its sources only (not the face or the background beside
 * a top), so the light at the fill's edge is the sources'.
 */
function dropBlocks(img: RgbImage, part: Uint8Array, sources: Uint8Array, r: number, R: number): void {
  const { width: W, height: H, data } = img;
  const box = grownMaskBox(part, W, H, R);
  if (!box) return;
  const { x0, y0 } = box, bw = box.x1 - x0, bh = box.y1 - y0, n0 = bw * bh;
  // The mask of the part and its sources and its three channels, over r (near) and R (far).
  const near = [takePlane(n0), takePlane(n0), takePlane(n0), takePlane(n0)];
  const far = [takePlane(n0), takePlane(n0), takePlane(n0), takePlane(n0)];
  for (let y = 0; y < bh; y++) {
    for (let x = 0, i = (y + y0) * W + x0, j = y * bw; x < bw; x++, i++, j++) {
      if (!part[i] && !sources[i]) continue;
      near[0]![j] = far[0]![j] = 1;
      for (let c = 0; c < 3; c++) near[c + 1]![j] = far[c + 1]![j] = data[3 * i + c]!;
    }
  }
  boxBlurInPlace(near, bw, bh, r);
  boxBlurInPlace(far, bw, bh, R);
  const nr = near[0]!, nR = far[0]!;
  for (let y = 0; y < bh; y++) {
    for (let x = 0, i = (y + y0) * W + x0, j = y * bw; x < bw; x++, i++, j++) {
      // Every part pixel is in its own windows, so both counts are positive there.
      if (!part[i]) continue;
      for (let c = 0; c < 3; c++) data[3 * i + c] = Math.max(0, Math.min(255, Math.round(data[3 * i + c]! - near[c + 1]![j]! / nr[j]! + far[c + 1]![j]! / nR[j]!)));
    }
  }
  giveBack(...near, ...far);
}

/**
 * Marks group g's fill for matchSharpness: its part (the hole's pixels of the group) and its
 * sources on the marked region (the hole's box and the margin around it), as the next fill's bits.
 */
function markFill(marked: SharpnessFills, part: Uint8Array, src: Uint8Array, holeAt: Int32Array, groups: Uint8Array, g: number, W: number): void {
  const f = marked.fills.length;
  const { region, bits } = marked;
  const rw = region.x1 - region.x0;
  const partBit = 2 << (2 * f), refBit = 1 << (2 * f);
  for (let k = 0; k < holeAt.length; k++) {
    if (groups[k] !== g) continue;
    const i = holeAt[k]!, x = i % W;
    bits[((i - x) / W - region.y0) * rw + x - region.x0]! |= partBit;
  }
  const box = indicesBox(holeAt, W, (k) => groups[k] === g)!;
  let references = 0;
  for (let y = region.y0; y < region.y1; y++) {
    for (let i = y * W + region.x0, j = (y - region.y0) * rw; j < (y - region.y0 + 1) * rw; i++, j++) {
      if (src[i] && !part[i]) (bits[j]! |= refBit), references++;
    }
  }
  marked.fills.push({ box, references });
}

/** The jaw's shadow on the neck: its darkening (a factor on RGB) just below the jaw, and its reach. */
const JAW_SHADOW = 0.18, JAW_SHADOW_FULL = 0.1, JAW_SHADOW_END = 0.3;

/**
 * The light left on the neck under the jaw's shadow, a factor (1 - JAW_SHADOW .. 1) per pixel, in
 * the head's frame: full shadow from the jaw line (the face oval's lower edge at that u) down to
 * JAW_SHADOW_FULL face widths, fading out by JAW_SHADOW_END, within the neck's reach of the
 * midline. Measured with the reference parser's neck class on eight development photos whose neck
 * shows: 0.0-0.2 face widths below the chin the neck is 6-24 L darker than the face's skin (the
 * jaw shades it from the light above), level with it or lighter from ~0.3 on. The skin fill's
 * tone, pulled from the face's skin, had none of it: a filled neck was as light as the cheeks, a
 * flat plate under the chin.
 */
function jawShade(an: Pick<HeadAnalysis, 'frame' | 'anchors'>): (x: number, y: number) => number {
  const { frame } = an;
  const jaw = jawLine(an.anchors);
  return (x, y) => {
    const u = frameU(frame, x + 0.5, y + 0.5);
    if (Math.abs(u) >= 0.5) return 1;
    const d = frameV(frame, x + 0.5, y + 0.5) - jaw(u);
    // Eased in over 0.02 face widths at the jaw line (a fill crossing it is not stepped).
    const w = d < -0.02 ? 0 : d < 0.02 ? (d + 0.02) / 0.04 : d <= JAW_SHADOW_FULL ? 1 : d >= JAW_SHADOW_END ? 0 : 0.5 + 0.5 * Math.cos((Math.PI * (d - JAW_SHADOW_FULL)) / (JAW_SHADOW_END - JAW_SHADOW_FULL));
    // Fading out at the side of the neck's reach (0.4-0.5 face widths from the midline).
    const side = Math.abs(u) < 0.4 ? 1 : (0.5 - Math.abs(u)) / 0.1;
    return 1 - JAW_SHADOW * w * side;
  };
}

/**
 * The skin fill's sources less what is not of the face's skin colour (toneSource), while most of
 * those around the part are: the parser's neck and skin take in a necklace's grey glint or a top's
 * edge, the fill copied them and evenTone's pull-push spread such an island nearest the part over
 * all of it: s5-right's filled neck and chest a grey-mauve plate (110,73,56 beside her shoulder's
 * 124,67,24; 103,62,43 without), a maroon smudge of her top on s6-centre-left's filled chest
 * (rotated -35 degrees). In place.
 */
function skinColouredOnly(an: Pick<HeadAnalysis, 'image' | 'skin'>, part: Uint8Array, src: Uint8Array): void {
  const { width: W, height: H, data } = an.image;
  // Where patchFill looks for sources.
  const pb = maskBox(part, W, H);
  if (!pb) return;
  const box = sourceRegion(pb, W, H);
  const ref = srgbToLab(an.skin[0], an.skin[1], an.skin[2]);
  const minChroma = TONE_CHROMA * Math.hypot(ref[1], ref[2]);
  // One test per source pixel: the failing ones listed, cleared once the share is known.
  const off = takeInts((box.x1 - box.x0) * (box.y1 - box.y0));
  let all = 0, n = 0;
  for (let y = box.y0; y < box.y1; y++) {
    for (let i = y * W + box.x0; i < y * W + box.x1; i++) {
      if (!src[i]) continue;
      all++;
      if (!toneSource(labAt(data, i), ref, minChroma)) off[n++] = i;
    }
  }
  // Mostly off the face's colour: the light on the body, not the sources, differs from the face's.
  if (all - n >= TONE_KEPT * all) for (let k = 0; k < n; k++) src[off[k]!] = 0;
  giveBack(off);
}

/**
 * skinColouredOnly's test of a source against the face's skin (CIE Lab `ref`): of its colour
 * (steps/color.ts skinColoured, at any lightness: the shadow under a jaw is skin, darker by 30 L
 * and more) and at least `minChroma` (TONE_CHROMA of its chroma). Skin in shade or lit warm is as saturated as
 * the face or more (s5-right's shoulder 41 against her face's 27); a necklace's grey glint or a
 * pale strap within skinColoured's bound is not (12-15).
 */
function toneSource(lab: readonly number[], ref: readonly number[], minChroma: number): boolean {
  return skinColoured(lab, ref, 100) && lab[1]! * lab[1]! + lab[2]! * lab[2]! >= minChroma * minChroma;
}
/**
 * How far (face widths) evenTone's tone keeps from the old hair: the skin along it is in the hair's
 * shade (s6-left's forehead between her two locks took the temple's rim, L* 52 against the
 * forehead's 72; 56 with the rim left out) and s5-right's filled neck a grey plate (its chroma 0.68
 * of her face's by the reference parser, 0.80 without the rim). Narrower than the clothing's
 * CLEAR_OF_HAIR, and for the tone only: a band that wide left s5-left's lit shoulder too far off.
 */
const TONE_CLEAR = 0.025;
/**
 * How much fine detail a skin fill keeps (levels of luma): the lightness of evenTone's copied
 * detail is squeezed softly (t x tanh(d / t)) to about this, SKIN_DETAIL.grain times the photo's
 * own grain (Look.grain) and at least SKIN_DETAIL.min; its colour variation is kept (squeezed
 * too, the fill's skin read greyer to the reference parser on s5-right at 0.6 scale, its median
 * chroma 0.78 -> 0.68 of the face's). Skin at a group photo's scale (a face 100 px wide)
 * has no fine detail stronger than the photo's noise; what has is the dark hair strands the patch
 * copies brought from the skin between them (a neck seen between strands): kept as they were, a
 * filled neck was woven with thin stripes, like burlap (face-api's sample6 at 1 MP). The photo's
 * own grain is laid over it instead (squeezed alone, that neck was smoother than her skin: detail
 * 2.1 levels RMS in a 5x5 window, her cheek, chin and neck 3.2-5.5).
 */
const SKIN_DETAIL = { grain: 1.5, min: 3 };
/** toneSource's least chroma, as a share of the face's. */
const TONE_CHROMA = 0.6;
/** The share of the sources that must pass toneSource for skinColouredOnly to apply it. */
const TONE_KEPT = 0.5;

/**
 * Bare skin filled by patches copied from the face, the neck and the shoulders is a mosaic of
 * their lighting and of the copy's blocks (blotches a body does not have). Its tone is replaced by
 * a smooth one and its finest texture kept: the fill's detail finer than `r` (the fill less its own
 * box mean over the part) over the skin sources' colours interpolated into the part (pull-push),
 * the way a retoucher separates frequencies. `shade` (a light factor per pixel, the jaw's shadow)
 * is taken out of the sources before the interpolation and put back on the part: a visible neck
 * in the shadow and the face's skin above it are interpolated as one tone, and the filled neck
 * beside the visible one gets the same shadow, without a seam. The tone is taken from skin at
 * least `clear` px from the old hair (`hair`, soft 0..255) and the part; the copied detail's
 * lightness is squeezed to a few times the photo's grain (`detail.grain`, Look.grain: SKIN_DETAIL)
 * and that grain laid over it, seeded by `detail.seed`.
 */
function evenTone(img: RgbImage, part: Uint8Array, sources: Uint8Array, hair: Uint8Array, clear: number, r: number, shade: (x: number, y: number) => number, detail: { grain: number; seed: number }): void {
  const { width: W, height: H, data } = img;
  const box = grownMaskBox(part, W, H, 4 * r);
  if (!box) return;
  const { x0, y0 } = box, bw = box.x1 - x0, bh = box.y1 - y0;
  // The tone: the skin sources' colours in the box, interpolated over the rest of it.
  // Planes from the thread's pool (a neck and chest box is a few hundred thousand pixels: fresh
  // memory's first touch was most of this function's time).
  const val = takePlane(3 * bw * bh), wt = takePlane(bw * bh);
  // Not the skin within `clear` of the old hair or the part: hair shades the skin beside it and its
  // stray strands lie over it, and where few sources are near (a forehead between two locks, a neck
  // between strands) that darker, greyer rim was the whole tone the part took.
  const near = nearOldHair(hair, W, box, clear, part);
  // (Where every source lies near the hair, those are the tone.)
  let any = false;
  for (const keepClear of [true, false]) {
    for (let y = 0; y < bh; y++) {
      for (let x = 0; x < bw; x++) {
        const i = (y + y0) * W + x + x0, j = y * bw + x;
        if (!sources[i] || part[i] || (keepClear && near[j])) continue;
        const f = shade(x + x0, y + y0);
        for (let c = 0; c < 3; c++) val[3 * j + c] = data[3 * i + c]! / f;
        wt[j] = 1;
        any = true;
      }
    }
    if (any) break;
  }
  if (!any) return giveBack(val, wt, near);
  pullPush(bw, bh, val, wt);
  // The fill's own local mean over the part (a box of radius r, summed by integral images).
  const sw = bw + 1;
  const flat = Math.max(SKIN_DETAIL.min, SKIN_DETAIL.grain * detail.grain);
  const d3 = new Float64Array(3);
  const noise = bellNoise(detail.seed >>> 0 || 1);
  // Integer sums in 32 bits: on a very large box they wrap, but a window's sum (a few thousand
  // levels), taken modulo 2^32 (`| 0`), is exact.
  const S = takeInts(4 * sw * (bh + 1));
  for (let y = 0; y < bh; y++) {
    let n = 0, s0 = 0, s1 = 0, s2 = 0;
    for (let x = 0; x < bw; x++) {
      const i = (y + y0) * W + x + x0;
      if (part[i]) (n++, (s0 += data[3 * i]!), (s1 += data[3 * i + 1]!), (s2 += data[3 * i + 2]!));
      const k = 4 * ((y + 1) * sw + x + 1), u = 4 * (y * sw + x + 1);
      S[k] = S[u]! + n;
      S[k + 1] = S[u + 1]! + s0;
      S[k + 2] = S[u + 2]! + s1;
      S[k + 3] = S[u + 3]! + s2;
    }
  }
  for (let y = 0; y < bh; y++) {
    const ya = Math.max(0, y - r), yb = Math.min(bh, y + r + 1);
    for (let x = 0; x < bw; x++) {
      const i = (y + y0) * W + x + x0;
      if (!part[i]) continue;
      const xa = Math.max(0, x - r), xb = Math.min(bw, x + r + 1);
      // The window's corners in the sums: its count, then its three channels' totals.
      const A = 4 * (yb * sw + xb), B = 4 * (yb * sw + xa), C = 4 * (ya * sw + xb), D = 4 * (ya * sw + xa);
      const n = (S[A]! - S[B]! - S[C]! + S[D]!) | 0;
      const j = y * bw + x;
      const f = shade(x + x0, y + y0);
      // The photo's grain, as the drawn hair gets it (composite.ts: the same for the three channels).
      const g = detail.grain * 1.7 * noise();
      // The copied detail per channel; its lightness (Rec. 601 luma) squeezed, its colour kept:
      // the strands are dark lines, and the skin's own colour variation is its look.
      for (let c = 0; c < 3; c++) d3[c] = data[3 * i + c]! - ((S[A + c + 1]! - S[B + c + 1]! - S[C + c + 1]! + S[D + c + 1]!) | 0) / n;
      const dY = 0.299 * d3[0]! + 0.587 * d3[1]! + 0.114 * d3[2]!;
      const dq = flat * Math.tanh(dY / flat) - dY + g;
      for (let c = 0; c < 3; c++) data[3 * i + c] = Math.max(0, Math.min(255, Math.round(f * val[3 * j + c]! + d3[c]! + dq)));
    }
  }
  giveBack(val, wt, S, near);
}

/**
 * How far (face widths) meetSkin's fade reaches into a skin fill from the skin it meets: none of
 * the offset past MEET_REACH, three quarters a third of the way in (a smoothstep), where the fill
 * keeps evenTone's tone. (Until stop 48 this said three quarters at MEET_REACH and none past three
 * times it: the fade's distances are chamfer's, 3 a pixel step, and were read as pixels.)
 */
const MEET_REACH = 0.08;
/** How much darker than the face's skin (CIE L) skin beside a skin fill may be for meetSkin to match it. */
const MEET_DARKER = 15;

/**
 * A skin fill meets the photo's own skin beside it without a seam: where a filled pixel has a
 * 4-neighbour outside the hole that is skin (below), the difference between the two is measured,
 * smoothed along the seam, interpolated over the part
 * (pull-push) and added, fading out by MEET_REACH from where it was measured. evenTone's tone
 * comes from the skin sources, the face's colour's (steps/color.ts skinColoured): a lit shoulder is too
 * light to be one, and a filled shoulder was a flat patch a shade darker than the shoulder beside
 * it, with a visible edge (s5-left). Only `part`'s pixels change.
 */
export function meetSkin(an: Pick<HeadAnalysis, 'image' | 'frame' | 'others' | 'hair' | 'skin'>, img: RgbImage, part: Uint8Array, hole: Uint8Array): void {
  // Skin beside the fill: in the broad box of skin tones (steps/color.ts skinLike), clear of the
  // old hair's mask, and not much darker than the face (brown wisps of hair beyond the parser's
  // outline are skin-like too; matched to them, a filled neck darkened into a strand of hair).
  const floor = srgbToLab(an.skin[0], an.skin[1], an.skin[2])[0] - MEET_DARKER;
  const src = an.image.data;
  meetAround(an.image, img, part, hole, an.frame.scale, MEET_REACH, 0.02, (q) => !an.others[q] && an.hair[q]! <= 20 && skinLike(src[3 * q]!, src[3 * q + 1]!, src[3 * q + 2]!) && labAt(src, q)[0] >= floor);
}

/**
 * A fill meets what lies beside it without a seam (meetSkin's way, for any fill): where a pixel
 * of `part` has a 4-neighbour outside the hole that `beside` accepts (of the photo `photo`), the
 * difference between the two is measured, smoothed along the seam (a box of radius `smooth` face
 * widths, `scale` px each, over the seam's measured pixels only: one pixel's difference is mostly
 * the two sides' texture), interpolated over the part (pull-push) and added, fading out by
 * `fadeOut` face widths from the seam (three quarters left a third of the way in, a smoothstep).
 * With `cell` over 1 the differences are gathered, smoothed, interpolated and faded on a grid of
 * cells that many pixels wide and read back bilinearly (the field is smooth: a wide fade over a
 * large fill cost ~80 ms at 1 MP per pixel, mostly the box blur and the pull-push); at 1 it is
 * per pixel. Only `part`'s pixels of `img` change.
 */
function meetAround(photo: RgbImage, img: RgbImage, part: Uint8Array, hole: Uint8Array, scale: number, fadeOut: number, smooth: number, beside: (q: number) => boolean, cell = 1): void {
  const { width: W, height: H, data } = img;
  const box = grownMaskBox(part, W, H, 1);
  if (!box) return;
  const { x0, y0 } = box, bw = box.x1 - x0, bh = box.y1 - y0;
  // The grid (the box itself at cell 1).
  const cw = Math.ceil(bw / cell), ch = Math.ceil(bh / cell), n = cw * ch;
  const val = takePlane(3 * n), wt = takePlane(n);
  const seed = takeBytes(n);
  const src = photo.data;
  let any = false;
  for (let y = 0; y < bh; y++) {
    for (let x = 0, i = (y + y0) * W + x0; x < bw; x++, i++) {
      if (!part[i]) continue;
      let m = 0, s0 = 0, s1 = 0, s2 = 0;
      // The four neighbours in turn, without an array per pixel (as morphology.ts eachComponent).
      for (let k = 0; k < 4; k++) {
        const q = k === 0 ? (x + x0 > 0 ? i - 1 : -1) : k === 1 ? (x + x0 < W - 1 ? i + 1 : -1) : k === 2 ? (y + y0 > 0 ? i - W : -1) : y + y0 < H - 1 ? i + W : -1;
        if (q < 0 || hole[q] || !beside(q)) continue;
        (m++, (s0 += src[3 * q]!), (s1 += src[3 * q + 1]!), (s2 += src[3 * q + 2]!));
      }
      if (!m) continue;
      const j = ((y / cell) | 0) * cw + ((x / cell) | 0);
      val[3 * j] = val[3 * j]! + s0 / m - data[3 * i]!;
      val[3 * j + 1] = val[3 * j + 1]! + s1 / m - data[3 * i + 1]!;
      val[3 * j + 2] = val[3 * j + 2]! + s2 / m - data[3 * i + 2]!;
      wt[j] = wt[j]! + 1;
      seed[j] = 1;
      any = true;
    }
  }
  if (!any) return giveBack(val, wt, seed);
  // Each cell's mean difference, then smoothed along the seam.
  const planes = [takePlane(n), takePlane(n), takePlane(n), takePlane(n)];
  for (let j = 0; j < n; j++) {
    if (!wt[j]) continue;
    for (let c = 0; c < 3; c++) planes[c]![j] = val[3 * j + c]! / wt[j]!;
    planes[3]![j] = 1;
  }
  boxBlurInPlace(planes, cw, ch, Math.max(1, Math.round((smooth * scale) / cell)));
  for (let j = 0; j < n; j++) {
    if (!wt[j]) continue;
    wt[j] = 1;
    for (let c = 0; c < 3; c++) val[3 * j + c] = planes[c]![j]! / planes[3]![j]!;
  }
  giveBack(...planes);
  pullPush(cw, ch, val, wt);
  // (chamfer's distances are 3 a cell step.)
  const dist = chamfer(seed, cw, ch);
  const far = (3 * fadeOut * scale) / cell;
  for (let y = 0; y < bh; y++) {
    for (let x = 0, i = (y + y0) * W + x0; x < bw; x++, i++) {
      if (!part[i]) continue;
      // Bilinear between the four cells around the pixel's centre (at a cell of one, the pixel's own).
      const fx = Math.min(cw - 1, Math.max(0, (x + 0.5) / cell - 0.5)), fy = Math.min(ch - 1, Math.max(0, (y + 0.5) / cell - 0.5));
      const ax = Math.floor(fx), ay = Math.floor(fy), bx = Math.min(cw - 1, ax + 1), by = Math.min(ch - 1, ay + 1), tx = fx - ax, ty = fy - ay;
      const j00 = ay * cw + ax, j10 = ay * cw + bx, j01 = by * cw + ax, j11 = by * cw + bx;
      const w00 = (1 - tx) * (1 - ty), w10 = tx * (1 - ty), w01 = (1 - tx) * ty, w11 = tx * ty;
      const f = Math.max(0, 1 - (w00 * dist[j00]! + w10 * dist[j10]! + w01 * dist[j01]! + w11 * dist[j11]!) / far);
      if (!f) continue;
      const w = f * f * (3 - 2 * f);
      for (let c = 0; c < 3; c++) {
        const d = w00 * val[3 * j00 + c]! + w10 * val[3 * j10 + c]! + w01 * val[3 * j01 + c]! + w11 * val[3 * j11 + c]!;
        data[3 * i + c] = Math.max(0, Math.min(255, Math.round(data[3 * i + c]! + w * d)));
      }
    }
  }
  giveBack(val, wt, seed);
}

/**
 * The fill group of each hole pixel (in holeAt's order): the most common group (UNDER, 0 counted
 * as background) among the hole's pixels within radius r (a square window, summed by integral
 * images over the hole's box); ties keep the pixel's own group.
 */
function smoothGroups(under: Uint8Array, hole: Uint8Array, holeAt: Int32Array, W: number, H: number, groups: number, r: number): Uint8Array {
  const out = new Uint8Array(holeAt.length);
  const box = maskBox(hole, W, H);
  if (!box) return out;
  const { x: x0, y: y0, width: bw, height: bh } = box;
  const sw = bw + 1;
  // Every group's sums in one pass over the box (a pass per group read the hole and the groups again).
  const sums: Int32Array[] = [];
  for (let g = 1; g < groups; g++) sums[g] = new Int32Array(sw * (bh + 1));
  const row = new Int32Array(groups);
  for (let y = 0; y < bh; y++) {
    row.fill(0);
    for (let x = 0; x < bw; x++) {
      const i = (y + y0) * W + x + x0;
      if (hole[i]) row[under[i] || UNDER.background]!++;
      const k = (y + 1) * sw + x + 1, u = y * sw + x + 1;
      for (let g = 1; g < groups; g++) sums[g]![k] = sums[g]![u]! + row[g]!;
    }
  }
  for (let k = 0; k < holeAt.length; k++) {
    const i = holeAt[k]!;
    const x = (i % W) - x0, y = (i - (i % W)) / W - y0;
    const xa = Math.max(0, x - r), xb = Math.min(bw, x + r + 1), ya = Math.max(0, y - r), yb = Math.min(bh, y + r + 1);
    let best = under[i] || UNDER.background;
    const S0 = sums[best]!;
    let bestN = S0[yb * sw + xb]! - S0[ya * sw + xb]! - S0[yb * sw + xa]! + S0[ya * sw + xa]!;
    for (let g = 1; g < groups; g++) {
      const S = sums[g]!;
      const c = S[yb * sw + xb]! - S[ya * sw + xb]! - S[yb * sw + xa]! + S[ya * sw + xa]!;
      if (c > bestN) (best = g), (bestN = c);
    }
    out[k] = best;
  }
  return out;
}

/**
 * Sets `out` on the body around `part` (within 0.3 face widths of its box; never the hole, other
 * people or old hair) of one kind: with `skin`, the skin-coloured person pixels (a lit shoulder
 * outside the parser's crop is as good an exemplar for a bared chest as the parsed neck, and often
 * a better one: the neck lies in the jaw's shadow, and copied onto a lit shoulder it drew a dark
 * plate); without, the target's clothing: person pixels below the chin, off the face, not of the
 * skin's colour (the parser's cloth class ends at its crop's lower edge, a little below the chin,
 * while long hair over a shoulder reaches well below it: with only the few cloth pixels in the
 * crop to copy, the fill there was one flat colour, a green block on a green top's shoulder).
 * Pixels already in `out` are not tested again (the Selfie version's skin sources are most of the
 * person already: its colour tests took ~30 ms at 1 MP).
 */
function bodyAround(an: HeadAnalysis, part: Uint8Array, hole: Uint8Array, out: Uint8Array, skin: boolean): void {
  const { width: W, height: H } = an.image;
  const box = grownMaskBox(part, W, H, Math.max(8, Math.round(0.3 * an.frame.scale)));
  if (!box) return;
  const { x0, y0, x1, y1 } = box;
  const ref = srgbToLab(an.skin[0], an.skin[1], an.skin[2]);
  const { frame, anchors } = an;
  const worn = skin ? null : clothingColours(an.image, out, x0, y0, x1, y1);
  for (let y = y0; y < y1; y++) {
    for (let x = x0, i = y * W + x0; x < x1; x++, i++) {
      if (out[i] || hole[i] || an.others[i] || an.person[i]! <= 128 || an.hair[i]! > 20) continue;
      if (!skin && (an.protect[i] || frameV(frame, x + 0.5, y + 0.5) <= anchors.chin)) continue;
      const lab = labAt(an.image.data, i);
      if (skinColoured(lab, ref) === skin && (!worn || worn[labBin(lab)])) out[i] = 1;
    }
  }
}

/** CIE Lab bins of the clothing palette: 8 units of L, 6 of a and b. */
const BINS = { L: 13, ab: 44 };
const labBin = (lab: readonly number[]): number => {
  const l = Math.min(BINS.L - 1, Math.max(0, Math.floor(lab[0]! / 8)));
  const a = Math.min(BINS.ab - 1, Math.max(0, Math.floor((lab[1]! + 132) / 6)));
  const b = Math.min(BINS.ab - 1, Math.max(0, Math.floor((lab[2]! + 132) / 6)));
  return (l * BINS.ab + a) * BINS.ab + b;
};

/**
 * The colours of the target's own clothing (the sources already in `known`: the parser's cloth
 * class in the target's body column), as the Lab bins within one bin of a colour that at least
 * 0.5% of those pixels have; null when too few are known to tell. Two people who touch share the
 * person mask, and long hair over a shoulder lies beside a neighbour's dress: copied from there,
 * s6-left's green top was continued in the maroon of the dress beside it.
 */
function clothingColours(image: RgbImage, known: Uint8Array, x0: number, y0: number, x1: number, y1: number): Uint8Array | null {
  const W = image.width;
  const count = new Uint32Array(BINS.L * BINS.ab * BINS.ab);
  let total = 0;
  for (let y = y0; y < y1; y++) for (let x = x0, i = y * W + x0; x < x1; x++, i++) if (known[i]) (count[labBin(labAt(image.data, i))]! += 1), total++;
  if (total < 200) return null;
  const min = Math.max(3, 0.005 * total);
  const ok = new Uint8Array(count.length);
  for (let l = 0; l < BINS.L; l++) {
    for (let a = 0; a < BINS.ab; a++) {
      for (let b = 0; b < BINS.ab; b++) {
        if (count[(l * BINS.ab + a) * BINS.ab + b]! < min) continue;
        for (let dl = -1; dl <= 1; dl++) for (let da = -1; da <= 1; da++) for (let db = -1; db <= 1; db++) {
          const L = l + dl, A = a + da, B = b + db;
          if (L >= 0 && A >= 0 && B >= 0 && L < BINS.L && A < BINS.ab && B < BINS.ab) ok[(L * BINS.ab + A) * BINS.ab + B] = 1;
        }
      }
    }
  }
  return ok;
}

