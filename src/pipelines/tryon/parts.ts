// Garment parts as strips: a part (torso, sleeve, trouser leg, pelvis, skirt) is a centre line
// sampled at fixed stations with an image-left and an image-right edge point at each. The garment
// photo and the body each give the same strips (same stations), and each part is warped by a
// thin-plate spline through its pairs (warp.ts), so a sleeve bends at the elbow, a leg follows the
// knee, and the torso takes the body's width row by row.
//   body strips  torso: stations from the shoulder line down the spine, edges measured on the
//                target's instance (arms cut out) along the across direction; sleeves: along
//                shoulder -> elbow -> wrist by arc length; legs: hip -> knee -> ankle
//   clips        where each part may land: the instance (dilated a little), the torso without the
//                arms that are in front, an arm's or a leg's capsule, the skirt's hull
import type { ClothesType } from '../../domain/job.ts';
import { copyBytes } from '../../imaging/image.ts';
import { dilate } from '../../imaging/morphology.ts';
import { polygonMask } from '../../imaging/polygon.ts';
import { segmentDistance, shapeDistance, type Shape } from '../../steps/person-instance.ts';
import { add, arm, armShapes, hiddenArm, leg, len, lerp, mid, perp, sub, unit, unsureArm, type Body, type P } from './body.ts';
import { andNot, intersect, union } from './masks.ts';

export interface Strip {
  centre: P[];
  left: P[];
  right: P[];
}

export type PartName = 'torso' | 'sleeveL' | 'sleeveR' | 'pelvis' | 'legL' | 'legR' | 'skirt';
export type Strips = Partial<Record<PartName, Strip>>;

export const TORSO_STATIONS = [0, 0.15, 0.3, 0.45, 0.6, 0.8, 1];
export const LIMB_STATIONS = [0, 0.33, 0.67, 1];
export const PELVIS_STATIONS = [0, 0.5, 1];

/** Point and direction at arc length s along a polyline (extended past its end along the last segment). */
export function alongPolyline(pts: P[], s: number): { p: P; d: P } {
  let acc = 0;
  for (let i = 0; i + 1 < pts.length; i++) {
    const seg = len(sub(pts[i + 1]!, pts[i]!));
    const last = i + 2 === pts.length;
    if (s <= acc + seg || last) {
      const t = (s - acc) / seg;
      const d = unit(sub(pts[i + 1]!, pts[i]!));
      // Near a joint the direction turns smoothly (the bisector), so the edges do not cross.
      const near = 0.15 * seg;
      let dir = d;
      if (!last && s > acc + seg - near) {
        const nd = unit(sub(pts[i + 2]!, pts[i + 1]!));
        const k = (s - (acc + seg - near)) / (2 * near);
        dir = unit(lerp(d, nd, Math.min(0.5, k)));
      } else if (i > 0 && s < acc + near) {
        const pd = unit(sub(pts[i]!, pts[i - 1]!));
        const k = 0.5 - (s - acc) / (2 * near);
        dir = unit(lerp(d, pd, Math.max(0, k)));
      }
      return { p: add(pts[i]!, d, t * seg), d: dir };
    }
    acc += seg;
  }
  return { p: pts[0]!, d: [0, 1] };
}

export const polylineLength = (pts: P[]) => pts.slice(1).reduce((s, p, i) => s + len(sub(p, pts[i]!)), 0);

/** A limb strip: stations along `pts` from arc `start` for `length`, half-widths per station. */
export function limbStrip(pts: P[], start: number, length: number, half: number[], offset?: number[]): Strip {
  const s: Strip = { centre: [], left: [], right: [] };
  LIMB_STATIONS.forEach((f, i) => {
    const { p: q, d } = alongPolyline(pts, start + f * length);
    const n = perp(d);
    // A measured arm's middle, across its axis (BlazePose's arm line can lie near one edge).
    const p = offset ? add(q, n, offset[i]!) : q;
    s.centre.push(p);
    s.left.push(add(p, n, half[i]!));
    s.right.push(add(p, n, -half[i]!));
  });
  return s;
}

/**
 * Walks from `c` along `u` and returns the distance to the farthest pixel of `allowed` (less
 * `deny`) reached without crossing more than `gap` pixels in a row of `stop` pixels (background);
 * `skip` pixels (an arm in front) neither count nor stop. Capped at `max`. `allowed` is a mask or
 * a test asked pixel by pixel (a sleeve's skin, known only where a walk goes).
 */
export function edgeDistance(c: P, u: P, max: number, gap: number, allowed: Uint8Array | ((i: number) => boolean), skip: Uint8Array | null, W: number, H: number, deny?: Uint8Array): number | null {
  const at = typeof allowed === 'function' ? allowed : (i: number) => allowed[i] !== 0;
  let last: number | null = null, run = 0;
  for (let d = 0; d <= max; d += 1) {
    const x = Math.round(c[0] + u[0] * d), y = Math.round(c[1] + u[1] * d);
    if (x < 0 || y < 0 || x >= W || y >= H) return d;
    const i = y * W + x;
    if (at(i) && !deny?.[i]) (last = d), (run = 0);
    else if (!skip || !skip[i]) if (++run > gap) break;
  }
  return last;
}

/** Pixel bounds, inclusive on both ends. */
export interface Bounds {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** A shape's bounding box in pixels, within `clip` (both inclusive). */
export function shapeBounds(s: Shape, clip: Bounds): Bounds {
  const pts = 'poly' in s ? s.poly : [s.a, s.b];
  const r = 'poly' in s ? 0 : s.r;
  return {
    x0: Math.max(clip.x0, Math.floor(Math.min(...pts.map((p) => p[0])) - r)),
    x1: Math.min(clip.x1, Math.ceil(Math.max(...pts.map((p) => p[0])) + r)),
    y0: Math.max(clip.y0, Math.floor(Math.min(...pts.map((p) => p[1])) - r)),
    y1: Math.min(clip.y1, Math.ceil(Math.max(...pts.map((p) => p[1])) + r)),
  };
}

/** Whether the centre of pixel (x, y) lies in the shape. */
export function inShape(s: Shape, x: number, y: number): boolean {
  return 'poly' in s ? shapeDistance(s, x + 0.5, y + 0.5) <= 0 : segmentDistance(s.a, s.b, x + 0.5, y + 0.5) <= s.r;
}

/** Rasterizes shapes into a 0/1 mask (within their bounding boxes). */
export function shapesMask(shapes: readonly Shape[], W: number, H: number): Uint8Array {
  const out = new Uint8Array(W * H);
  const frame = { x0: 0, y0: 0, x1: W - 1, y1: H - 1 };
  for (const s of shapes) {
    const { x0, x1, y0, y1 } = shapeBounds(s, frame);
    for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) if (!out[y * W + x] && inShape(s, x, y)) out[y * W + x] = 1;
  }
  return out;
}

/** Lengths of the garment's parts on this body (pixels): torso (from the shoulder line), sleeves, legs, pelvis. */
export interface PartLengths {
  torso?: number;
  sleeveL?: number;
  sleeveR?: number;
  legL?: number;
  legR?: number;
  skirt?: number;
}

export interface BodyParts {
  strips: Strips;
  clips: Partial<Record<PartName, Uint8Array>>;
  /** Arms (forearms + hands) in front of the torso, hands: never covered. */
  arms: Uint8Array;
  hands: Uint8Array;
  /** Where old clothing may be replaced (the type's band of the body). */
  band: Uint8Array;
  /** Sleeve ends: where each sleeve is cut across its arm (compose.ts fades it out there). */
  cuffs: Partial<Record<PartName, Cuff>>;
}

/**
 * A sleeve's end: the line through `at` across the arm's axis `dir` (pointing on down the arm).
 * The sleeve fades out over `soft` pixels centred on that line, for pixels within `reach` of `at`
 * (a bent arm's other segment may cross the line farther away).
 */
export interface Cuff {
  at: P;
  dir: P;
  soft: number;
  reach: number;
  /** The sleeve ends above the elbow: it lies along a straight upper arm (warp.ts warps it affinely). */
  short: boolean;
}

/** The sleeve's coverage factor of pixel (x, y) at its cuff: 1 before the line, 0 past it, a ramp of `soft` pixels between. */
export function cuffFade(c: Cuff, x: number, y: number): number {
  const dx = x - c.at[0], dy = y - c.at[1];
  if (dx * dx + dy * dy > c.reach * c.reach) return 1;
  const t = dx * c.dir[0] + dy * c.dir[1];
  return Math.min(1, Math.max(0, 0.5 - t / c.soft));
}

/**
 * How far above BlazePose's shoulder joints the shoulders' tops are: the instance walked up (against
 * `down`) from each joint, off the face and hair, the nearer of the two sides less a small margin,
 * at most a fifth of the shoulder width.
 */
function shoulderLift(b: Body, instance: Uint8Array, protect?: Uint8Array): number {
  const up: P = [-b.down[0], -b.down[1]];
  const reach = 0.35 * b.sw;
  const tops = (['L', 'R'] as const).map((sd) => edgeDistance(b[sd].shoulder, up, reach, Math.round(0.02 * b.size), instance, null, b.W, b.H, protect)).filter((d): d is number => d !== null && d > 0);
  if (!tops.length) return 0;
  return Math.max(0, Math.min(0.2 * b.sw, Math.min(...tops) - 0.02 * b.size));
}

/**
 * A top's collar sits at the neck's base: the torso never covers the neck above a line 0.1 face
 * widths above the shoulder joints, a column 0.3 face widths either side of the body's middle whose
 * bottom is rounded into a U over its last 0.15 face widths. The torso's top is lifted to the
 * shoulders' tops, and the product photo's neckline, warped with it, reached up the neck to the
 * chin (s6-green-dress: 13.9% of the neck above the collar covered, a block of the new top under
 * her chin). In place.
 */
function cutCollar(clip: Uint8Array, b: Body, faceWidth: number): void {
  const half = 0.3 * faceWidth, round = 0.5 * half;
  const m = add(b.neck, b.down, -0.1 * faceWidth);
  for (let y = 0, i = 0; y < b.H; y++) {
    for (let x = 0; x < b.W; x++, i++) {
      if (!clip[i]) continue;
      const px = x + 0.5 - m[0], py = y + 0.5 - m[1];
      const dy = px * b.down[0] + py * b.down[1];
      if (dy >= 0) continue;
      const dx = Math.abs(px * b.across[0] + py * b.across[1]);
      const t = Math.max(0, dy + round) / round;
      if (dx <= half * Math.sqrt(Math.max(0, 1 - t * t))) clip[i] = 0;
    }
  }
}

/** Row-filled hull of a mask along `across` (gaps between the legs filled), within a band of rows. */
function hullFill(mask: Uint8Array, W: number, H: number, yFrom: number): Uint8Array {
  const out = copyBytes(mask);
  for (let y = Math.max(0, Math.floor(yFrom)); y < H; y++) {
    let a = -1, b = -1;
    for (let x = 0; x < W; x++) if (mask[y * W + x]) (a < 0 && (a = x), (b = x));
    if (a >= 0) out.fill(1, y * W + a, y * W + b + 1);
  }
  return out;
}

/** What bodyParts needs beyond the body, the person and the garment's type and lengths. */
export interface BodyPartOptions {
  /** The garment hangs as a skirt (one piece over both legs), not as trouser legs. */
  skirtLike: boolean;
  /** The person's bare arm skin (armSkin): a bare arm is cut out by its skin, not its capsules. */
  armSkin?: Uint8Array;
  /** Face and hair (never the garment's), kept out of what the torso's shoulders may reach. */
  protect?: Uint8Array;
  /** The face's width on a photo of a person (not a product photo): the torso's collar is cut at the neck (cutCollar). */
  collarFaceWidth?: number;
  /**
   * Whether a pixel is skin of the instance around the upper arms, shoulder caps included (armSkin
   * leaves them to the torso): with armSkin, what a sleeve's stations are centred on. Asked only
   * along the stations' walks.
   */
  skinAt?: (i: number) => boolean;
  /** Arms whose landmarks lie off the target's skin and torso clothing (unseenArms): no sleeve, not cut out. */
  unseen?: ReadonlyArray<'L' | 'R'>;
}

/**
 * The body's strips and clips for a clothes type (`lengths` from the garment, scaled to this body).
 */
export function bodyParts(b: Body, instance: Uint8Array, type: ClothesType, lengths: PartLengths, opts: BodyPartOptions): BodyParts {
  const parts = partsOf(b, instance, type, lengths, opts);
  // Last, on the torso's finished clip: nothing else in partsOf reads it.
  if (parts.clips.torso && opts.collarFaceWidth) cutCollar(parts.clips.torso, b, opts.collarFaceWidth);
  return parts;
}

/**
 * A garment's sleeve against its torso (both measured on the garment photo, armhole to cuff and
 * shoulder to hem): at `short` or less a short sleeve (ended by the scaled cut and the upper arm's
 * rule), at `wrist` or more a long one, ending at the wrist: `forearm` of the way from the elbow to
 * BlazePose's wrist, whose landmark lies on the joint, so the cuff's opening (it stands off the
 * arm) ends on the wrist and the hand stays; between them the share of that length grows linearly
 * from `from` (where the short rule's longest sleeve ends, 0.7 of the upper arm) to all of it (an
 * elbow sleeve ends near the elbow, a three-quarter one on the forearm). A T-shirt measures 0.25, a
 * flat-lay long-sleeved top 0.56 (its sleeves angled down); a long sleeve hanging straight ~0.75.
 */
const SLEEVE_REACH = { short: 0.3, wrist: 0.55, forearm: 0.85, from: 0.35 };

/** The share of the way from the shoulder to the cuff's place at the wrist that a sleeve of `q` (sleeve over torso, SLEEVE_REACH) reaches; 0 for a short one. */
function sleeveReach(q: number): number {
  if (q <= SLEEVE_REACH.short) return 0;
  const { short, wrist, from } = SLEEVE_REACH;
  return Math.min(1, from + ((1 - from) * (q - short)) / (wrist - short));
}

/** A guessed arm's segment hangs beside the torso when it points within ~45 degrees of the body's down (the cosine's least). */
const GUESSED_HANGS = 0.7;

function partsOf(b: Body, instance: Uint8Array, type: ClothesType, lengths: PartLengths, { skirtLike, armSkin, skinAt, protect, unseen: offHers = [] }: BodyPartOptions): BodyParts {
  const { W, H, size, across, down } = b;
  const grown = dilate(instance, W, H, Math.max(1, Math.round(0.02 * size)));
  // Forearms and hands in front: BlazePose's capsules, and the bare skin connected to them
  // (armSkin). A bare arm (skin near its forearm over half its capsule's area) is cut out by its
  // skin and a thin core along its bones instead of the capsules: BlazePose puts an arm a little
  // inside the torso at times (person-standing), and its capsules then cut a strip of the torso
  // (the old top showed between the garment and the arm) while the arm's outer edge was covered.
  // Arms behind the body (hiddenArm) are neither cut out of the torso nor given a sleeve: the
  // torso hides them. So are arms whose landmarks lie on something else (unseen: a neighbour, the
  // background), where a sleeve would be drawn.
  const bareArm = (sd: 'L' | 'R') => {
    if (!armSkin) return false;
    // The arm's skin within twice the capsule's reach, against the capsule's area on the
    // instance: a forearm BlazePose puts beside the arm (person-standing-mirror) still counts.
    // (Counted over the wide capsule's box, as shapesMask rasterizes: pixel centres within r.)
    const [forearm] = armShapes(b, { upper: false, hands: false, sides: [sd] }) as Array<{ a: P; b: P; r: number }>;
    const e = b[sd].elbow, w = b[sd].wrist, R = 0.22 * size;
    const x0 = Math.max(0, Math.floor(Math.min(e[0], w[0]) - R)), x1 = Math.min(W - 1, Math.ceil(Math.max(e[0], w[0]) + R));
    const y0 = Math.max(0, Math.floor(Math.min(e[1], w[1]) - R)), y1 = Math.min(H - 1, Math.ceil(Math.max(e[1], w[1]) + R));
    let n = 0, k = 0;
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const i = y * W + x, d = segmentDistance(e, w, x + 0.5, y + 0.5);
        if (d <= forearm!.r && instance[i]) n++;
        if (d <= R && armSkin[i]) k++;
      }
    }
    return n > 0 && k / n > 0.5;
  };
  // A bare arm BlazePose only guesses (unsureArm) is someone else's in front of hers: had the
  // photo shown her own bare arm there, BlazePose would see it. On person-standing the guessed arm
  // lies along her friend's, hugging her (elbow and wrist visibility 0.46 and 0.24), and a sleeve
  // was drawn down it. A guessed arm in her own clothing keeps its sleeve (s6-red-dress's far arm
  // behind her hair, 0.24 and 0.33, in her dress's sleeve).
  const guessed = (['L', 'R'] as const).filter((sd) => unsureArm(b, sd) && bareArm(sd));
  const unseen = [...new Set([...offHers, ...guessed])];
  const seen = (['L', 'R'] as const).filter((sd) => !hiddenArm(b, sd) && !unseen.includes(sd));
  const bare = seen.filter(bareArm);
  const clothed = seen.filter((sd) => !bare.includes(sd));
  const hands = shapesMask(armShapes(b, { upper: false, forearm: false, sides: seen }), W, H);
  const cores: Shape[] = bare.flatMap((sd) => [{ a: lerp(b[sd].shoulder, b[sd].elbow, 0.3), b: b[sd].elbow, r: 0.04 * size }, { a: b[sd].elbow, b: b[sd].wrist, r: 0.04 * size }]);
  let arms = union(shapesMask([...armShapes(b, { upper: false, sides: clothed }), ...cores], W, H), hands);
  if (armSkin) arms = union(arms, armSkin);
  const upperArms = shapesMask(armShapes(b, { forearm: false, hands: false, sides: clothed }), W, H);
  const armsAll = union(arms, upperArms);
  // A guessed bare arm (above) hanging beside the torso: what the photo shows along its line is
  // what hides her arm, in front of her, not her torso either. On
  // person-standing her friend's arm hugging her is in the instance along it (no detector finds
  // the friend, her face cut by the photo's edge), and the torso's edge walks, which skip arms
  // (the friend's skin is in armSkin), reached the instance's edge beyond it: the T-shirt's side
  // was drawn down the friend's arm (5,081 px of the T-shirt). The arm's line, from a fifth of
  // the upper arm above the shoulder (the friend's shoulder lies over hers), 0.04 body sizes either
  // side (wider than the walks' gap, so they cannot step over it), bounds the torso: no edge past
  // it, no skipping across it, not part of the clip. Only segments that hang (GUESSED_HANGS): an
  // arm held out sideways lies across the shoulder (s6-green-dress's, laid towards her neighbour:
  // its line cut her shoulder off). Not the arms unseenArms finds by colour with BlazePose sure of
  // them: s5-red-top's far arm, its elbow seen at 0.80, runs down her chest's edge, and the bound
  // left her old top showing there.
  const hangs = (a: P, c: P) => {
    const u = unit(sub(c, a));
    return u[0] * down[0] + u[1] * down[1] > GUESSED_HANGS;
  };
  const hanging = guessed.filter((sd) => hangs(b[sd].shoulder, b[sd].elbow));
  // (null without a hanging guessed arm: the usual case, no mask to subtract.)
  const unseenLine = !hanging.length ? null : shapesMask(
    hanging.flatMap((sd) => {
      const r = 0.04 * size, j = b[sd];
      return [{ a: lerp(j.shoulder, j.elbow, -0.2), b: j.elbow, r }, ...(hangs(j.elbow, j.wrist) ? [{ a: j.elbow, b: j.wrist, r }] : [])];
    }),
    W,
    H,
  );
  const torsoAllowed = unseenLine ? andNot(instance, armsAll, unseenLine) : andNot(instance, armsAll);
  const strips: Strips = {};
  const clips: BodyParts['clips'] = {};
  const cuffs: BodyParts['cuffs'] = {};
  const hipRow = Math.min(b.L.hip[1], b.R.hip[1]);
  // Arms in clothes are measured in body sizes counted at most 1.1 shoulder widths (a turned
  // body's size comes from its torso length, far wider than its arms).
  const armRef = Math.min(size, 1.1 * b.sw);
  // A clothed arm's half-width: what the torso leaves out beside it, and the least a sleeve on it
  // covers. Its inner edge cannot be measured where it lies against the clothed torso, and a
  // sleeve measured by its outer edge alone (within 0.15 of armRef) left a strip of the old
  // sleeve between it and the torso (s6-red-dress).
  const clothedHalf = Math.min(0.14 * size, 0.2 * armRef);
  // A sleeve is centred on the arm's skin, the shoulder cap's too: BlazePose's upper arm lies
  // inside the arm at times (person-standing: a fifth of the arm's width from its inner edge), and
  // the cap's skin, the torso's in armSkin, was no measure there, so the sleeve sat on the arm's
  // inner half and the chest beside it.
  const sleeveSkin = skinAt ? (i: number) => armSkin?.[i] === 1 || skinAt(i) : armSkin ? (i: number) => armSkin[i] === 1 : null;
  const hull = hullFill(grown, W, H, hipRow - 0.1 * b.tl);

  /** Torso-like strip from `top` along `dir` for `length`, edges measured on `allowed`. */
  const measured = (top: P, dir: P, length: number, stations: number[], allowed: Uint8Array, skip: Uint8Array | null, minHalf: number, maxHalf: number, fixed?: (f: number) => [number, number] | null, widerOff?: Uint8Array, widerOn: Uint8Array = allowed, stop?: Uint8Array): Strip => {
    const s: Strip = { centre: [], left: [], right: [] };
    const n: P = unit(perp(dir));
    const acrossN: P = n[0] * across[0] + n[1] * across[1] >= 0 ? n : [-n[0], -n[1]];
    const gap = Math.round(0.06 * size);
    for (const f of stations) {
      const c = add(top, dir, f * length);
      const fx = fixed?.(f);
      const walk = (sgn: number, through: Uint8Array | null, deny?: Uint8Array, on = allowed) => edgeDistance(c, [sgn * acrossN[0], sgn * acrossN[1]], maxHalf, gap, on, through, W, H, deny);
      // With `widerOff`, a fixed station still reaches as far as `widerOn` less it goes, walked
      // without skipping the arms (they stop it): the body there may be wider than the fixed width.
      const side = (sgn: number, k: 0 | 1) => (!fx ? walk(sgn, skip) : widerOff ? Math.max(fx[k], walk(sgn, null, widerOff, widerOn) ?? 0) : fx[k]);
      const dl = side(-1, 0), dr = side(1, 1);
      // `stop`: no edge past it, fixed or measured (down to the least width).
      const until = (sgn: number) => (stop ? Math.max(minHalf, edgeDistance(c, [sgn * acrossN[0], sgn * acrossN[1]], maxHalf, 0, (i) => !stop[i], null, W, H) ?? 0) : maxHalf);
      const hl = Math.min(maxHalf, until(-1), Math.max(minHalf, dl ?? minHalf)), hr = Math.min(maxHalf, until(1), Math.max(minHalf, dr ?? minHalf));
      s.centre.push(c);
      s.left.push(add(c, acrossN, -hl * 1.04));
      s.right.push(add(c, acrossN, hr * 1.04));
    }
    return s;
  };

  if (type !== 'lower_body') {
    const length = lengths.torso ?? 1.1 * b.tl;
    // Above the armpits the torso's edges are the shoulders' (the arms are there), or the body's
    // where it is wider; below, measured.
    // A top's shoulder line sits on the shoulders' tops, not at the joints (s5-top's T-shirt began
    // at her armpits' height: a tube top). Not a dress's: lifted, its top corners stepped onto the
    // neighbour beside s6-red-dress (garment off her body 2.9% -> 3.2%).
    const lift = type === 'upper_body' ? shoulderLift(b, instance, protect) : 0;
    const sideShoulder = (f: number): [number, number] | null => {
      // Above the joints (the lifted top) the body's own width, measured: its shoulders slope down from the neck.
      const depth = f * length - lift;
      if (depth < 0 || depth > 0.28 * b.tl) return null;
      const k = depth / (0.28 * b.tl);
      // The shoulder's outline a little outside its joint: in shoulder widths (a turned body's
      // size comes from its torso length, and 0.1 of it made the shoulders stand out like wings).
      const half = 0.5 * b.sw + 0.1 * Math.min(size, 1.1 * b.sw);
      return [half * (1 - 0.25 * k), half * (1 - 0.25 * k)];
    };
    let allowed = torsoAllowed;
    // A dress's edges are measured on the instance or its row-filled hull, without the arms.
    if (type === 'dresses') allowed = andNot(union(instance, hull), armsAll);
    // Above the armpits the torso still reaches as far as its body goes between the arms (off
    // the face and hair): a body turned or leaning towards the camera is wider there than its
    // shoulder joints, and the fixed widths left the old dress in a strip between the new top and
    // the arm (s5-navy), filled with a smear of skin and wall.
    // Arms beside or in front of the torso stay out of it (a sleeve, if any, covers them).
    // The shoulder cap (the top quarter of the upper arm) is the torso's: the sleeve starts below
    // it, and cutting it out of both left the old clothing showing on top of the shoulder.
    const base = type === 'dresses' ? hull : grown;
    const lowArms = shapesMask(clothed.map((s) => ({ a: lerp(b[s].shoulder, b[s].elbow, 0.3), b: b[s].elbow, r: clothedHalf })), W, H);
    // A top's shoulder stations reach the shoulder caps' outline: the clip gives the caps to the
    // torso, and a torso whose shoulders stopped at the upper arms' capsules left the old dress
    // showing over the cap between its edge and the sleeve (s6-red-dress).
    const capsOn = type === 'upper_body' ? andNot(instance, arms, lowArms) : allowed;
    strips.torso = measured(add(b.neck, down, -lift), down, length, TORSO_STATIONS, allowed, unseenLine ? andNot(armsAll, unseenLine) : armsAll, 0.3 * size, 1.1 * size, sideShoulder, protect, capsOn, unseenLine ?? undefined);
    const clip = andNot(base, arms, lowArms);
    clips.torso = unseenLine ? andNot(clip, unseenLine) : clip;
    for (const s of seen) {
      const l = lengths[`sleeve${s}`];
      if (!l) continue;
      const chain = arm(b, s);
      const full = polylineLength(chain);
      // The garment's sleeve root is the middle of its armhole, half an armhole below the shoulder
      // seam: on the body it starts a little down the arm with an upper arm's half-width, so the
      // sleeve's top corner lands on the shoulder's outline instead of standing above it.
      const start = Math.min(0.08 * size, 0.3 * full);
      // Where the sleeve ends (arc length from the shoulder): its cuff is cut there, across the
      // arm, at 0.9 of the garment's sleeve. The product photo's sleeve end runs slanted to the
      // sleeve's axis, so its nearer corner falls short of the axis' end; the last tenth
      // overhangs the cut, and the cut, not the photo's hem, makes the sleeve's end.
      const upper = len(sub(chain[1]!, chain[0]!));
      let cut = start + 0.9 * Math.min(l, 1.08 * full - start);
      // A long sleeve reaches the wrist whatever the product photo's proportions: sleeves are cut
      // to arms, and the photo's sleeve scaled by its shoulders fell short of a long arm (the
      // long-sleeved top on person-standing ended at her elbows, read as a T-shirt's elbow
      // sleeves). By the sleeve's length against the garment's own torso (SLEEVE_REACH), a share
      // of this arm down to the cuff's place on the forearm, never shorter than the scaled cut. Not
      // where the wrist's landmark lies out of the photo: the hand may still be in it (s6-red-dress's
      // hand on the frame's bottom edge, BlazePose's wrist below it), and a cuff measured from there
      // covered it.
      if (lengths.torso && b[`in${s}`].wrist) cut = Math.max(cut, (upper + SLEEVE_REACH.forearm * (full - upper)) * sleeveReach(l / lengths.torso));
      // A short sleeve (one that ends above the elbow) ends on the upper arm at 40-70% of it from
      // the shoulder (a garment's sleeve scaled from the product photo can end at the armpit or
      // on the elbow); a long one at the wrist, never on the hand (the hands stay in front).
      const short = cut < 0.9 * upper;
      if (short) cut = Math.min(0.7 * upper, Math.max(0.4 * upper, cut));
      cut = Math.min(cut, full - 0.02 * size);
      const length = Math.max(0.05 * size, (cut - start) / 0.9);
      // Half-widths from the arm itself: a bare arm's both edges on its skin (below), at least
      // 1.1x its half-width up to 0.35 of armRef; otherwise the nearer edge on the instance (the
      // other side may run on into the torso), a loose sleeve's 1.3x, within 0.07-0.15 of armRef
      // (the walk may also run on into a neighbour); on a clothed arm at least clothedHalf.
      const armHalf: number[] = [];
      const offset: number[] = [];
      const half = LIMB_STATIONS.map((f) => {
        const { p, d } = alongPolyline(chain, start + f * length);
        const n = perp(d);
        const gap = Math.round(0.02 * size);
        // A bare arm is measured on its skin, both edges (the clothed torso beside it stops the
        // walk): BlazePose's arm line lies near the outer edge at times, and the nearer edge's
        // distance made s5-top's sleeve a strip on the arm's outer half.
        const edges = (on: Uint8Array | ((i: number) => boolean)) => [edgeDistance(p, n, 0.3 * size, gap, on, null, W, H), edgeDistance(p, [-n[0], -n[1]], 0.3 * size, gap, on, null, W, H)] as const;
        const [aS, cS] = sleeveSkin ? edges(sleeveSkin) : [null, null];
        let m: number;
        let onSkin = false;
        if (aS !== null && cS !== null && aS + cS >= 0.1 * armRef && aS + cS <= 0.7 * armRef) {
          let o = (aS - cS) / 2;
          m = (aS + cS) / 2;
          // The arm's outer side ends at the body's outline, not where its skin test does: the lit
          // or shaded rim of an upper arm is no skin colour at times, and on person-standing the
          // sleeve ended short of it, a bare strip down her upper arm's outer side. Where the
          // instance runs on outwards a little past the skin (up to 0.3 of armRef), the strip
          // widens outwards to it; not onto hair hanging beside the arm (protect: the hair in
          // front cut the garment under it into teeth between its strands).
          const out = (s === 'L' ? -1 : 1) * (n[0] * across[0] + n[1] * across[1]) >= 0 ? 1 : -1;
          const skinOut = out * o + m;
          const body = edgeDistance(p, [out * n[0], out * n[1]], skinOut + 0.3 * armRef, gap, (i) => instance[i] === 1 && !protect?.[i], null, W, H);
          if (body !== null && body > skinOut) {
            const more = body - skinOut;
            o += (out * more) / 2;
            m += more / 2;
          }
          offset.push(o);
          onSkin = true;
        } else {
          offset.push(0);
          const [a, c] = edges(instance);
          m = Math.min(a ?? 0.15 * size, c ?? 0.15 * size);
        }
        armHalf.push(Math.min(0.15 * armRef, m));
        let h = Math.min((0.15 - 0.04 * f) * armRef, Math.max(0.07 * armRef, 1.3 * m));
        if (onSkin) h = Math.max(h, Math.min(1.1 * m, 0.35 * armRef));
        return clothed.includes(s) ? Math.max(h, clothedHalf) : h;
      });
      strips[`sleeve${s}`] = limbStrip(chain, start, length, half, offset);
      const { p: at, d: dir } = alongPolyline(chain, cut);
      // The cuff stands off the arm a little (a sleeve's opening is wider than the arm in it).
      const cuffHalf = Math.max(1.1 * half[3]!, 1.25 * Math.max(armHalf[2]!, armHalf[3]!));
      const soft = Math.max(2, 0.015 * size);
      const rArm = 1.1 * Math.max(half[0]!, half[1]!) + Math.max(...offset.map(Math.abs));
      const caps: Shape[] = [{ a: b[s].shoulder, b: b[s].shoulder, r: rArm }];
      // The arm's capsule up to a little past the cut (the cut, not the capsule's round end, makes
      // the sleeve's end).
      const stop = cut + soft;
      const end = alongPolyline(chain, stop).p;
      const pts = [chain[0]!];
      let acc = 0;
      for (let i = 1; i < chain.length && acc < stop; i++) {
        const seg = len(sub(chain[i]!, chain[i - 1]!));
        pts.push(acc + seg > stop ? end : chain[i]!);
        acc += seg;
      }
      for (let i = 1; i < pts.length; i++) caps.push({ a: pts[i - 1]!, b: pts[i]!, r: i === 1 ? rArm : Math.max(rArm * 0.85, cuffHalf) });
      const cuff: Cuff = { at, dir: unit(dir), soft, reach: 1.5 * Math.max(rArm, cuffHalf) + soft, short };
      cuffs[`sleeve${s}`] = cuff;
      // Never above the shoulder line (the torso part makes the shoulder's outline).
      const clip = belowLine(intersect(shapesMask(caps, W, H), grown), W, H, b[s].shoulder, down, -0.02 * size);
      // Past the cuff's ramp nothing is drawn (only pixels within its reach can be past it).
      const x0 = Math.max(0, Math.floor(at[0] - cuff.reach)), x1 = Math.min(W - 1, Math.ceil(at[0] + cuff.reach));
      const y0 = Math.max(0, Math.floor(at[1] - cuff.reach)), y1 = Math.min(H - 1, Math.ceil(at[1] + cuff.reach));
      for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) if (clip[y * W + x] && cuffFade(cuff, x + 0.5, y + 0.5) <= 0) clip[y * W + x] = 0;
      clips[`sleeve${s}`] = clip;
    }
  } else {
    const waist = add(b.pelvis, down, -0.12 * b.tl);
    const crotch = 0.3 * b.tl;
    if (skirtLike) {
      // The upper arms stop the walks too: an elbow held beside the waist is no hip.
      strips.skirt = lowerStrip(b, waist, lengths.skirt ?? 1.2 * b.tl, TORSO_STATIONS, 0.3, andNot(instance, armsAll), armsAll);
      // The skirt lands inside its own strip (a little past its sides and hem), on the instance's
      // row-filled hull (between the legs too) without the arms in front: the hull alone reached
      // from the hips to a hand held out beside them, and the strip box onto the background.
      const k = strips.skirt, last = k.centre.length - 1;
      const out = (q: P, c: P, by: number) => add(q, unit(sub(q, c)), by);
      const outline: P[] = [
        add(out(k.left[0]!, k.centre[0]!, 0.02 * size), down, -0.03 * size),
        ...k.left.slice(1, last).map((q, i) => out(q, k.centre[i + 1]!, 0.02 * size)),
        add(out(k.left[last]!, k.centre[last]!, 0.02 * size), down, 0.05 * size),
        add(out(k.right[last]!, k.centre[last]!, 0.02 * size), down, 0.05 * size),
        ...k.right.slice(1, last).map((q, i) => out(q, k.centre[i + 1]!, 0.02 * size)).reverse(),
        add(out(k.right[0]!, k.centre[0]!, 0.02 * size), down, -0.03 * size),
      ];
      clips.skirt = andNot(intersect(polygonMask(outline, W, H), hull), arms);
    } else {
      strips.pelvis = lowerStrip(b, waist, crotch, PELVIS_STATIONS, 1, andNot(instance, armsAll), armsAll);
      // The pelvis lands inside its own strip (extended a little down into the legs), not wherever
      // the spline's extrapolation reaches on the instance.
      const p = strips.pelvis, last = p.centre.length - 1;
      const outline: P[] = [add(p.left[0]!, down, -0.03 * size), ...p.left.slice(1, last), add(p.left[last]!, down, 0.08 * size), add(p.right[last]!, down, 0.08 * size), ...p.right.slice(1, last).reverse(), add(p.right[0]!, down, -0.03 * size)];
      const hull = polygonMask(outline, W, H);
      clips.pelvis = andNot(intersect(hull, grown), arms);
      for (const s of ['L', 'R'] as const) {
        const l = lengths[`leg${s}`];
        if (!l) continue;
        // The leg's root moves with the pelvis' measured middle (BlazePose's hips on a turned body
        // sit off the visible ones), its knee by a third of that.
        const shift = strips.pelvis.centre[last]![0] - add(waist, down, crotch)[0];
        const chain = leg(b, s).map((q, i): P => [q[0] + shift * [1, 1 / 3, 0][i]!, q[1]]);
        const start = Math.min(0.6 * len(sub(chain[1]!, chain[0]!)), 0.18 * b.tl);
        const full = polylineLength(chain) - start;
        const length = Math.min(l, 1.1 * full);
        // The leg's width: its outer edge's distance from the bone (the inner side runs on into the
        // other leg), measured on the instance at each station, 1.08x for the cloth, within
        // 0.1-0.3 of the body size counted at most 1.1 shoulder widths (a turned body's size
        // comes from its torso length, and legs that wide came out as boxes).
        const ref = Math.min(size, 1.1 * b.sw);
        const half = LIMB_STATIONS.map((f) => {
          const { p, d } = alongPolyline(chain, start + f * length);
          let n = perp(d);
          if (n[0] * across[0] + n[1] * across[1] > 0 === (s === 'L')) n = [-n[0], -n[1]];
          const out = edgeDistance(p, n, 0.4 * ref, Math.round(0.03 * size), instance, null, W, H);
          const m = out || (0.24 - 0.1 * f) * ref;
          return 1.08 * Math.min(0.3 * ref, Math.max(0.1 * ref, m));
        });
        strips[`leg${s}`] = limbStrip(chain, start, length, half);
        const end = alongPolyline(chain, start + length).p;
        const caps: Shape[] = [{ a: chain[0]!, b: chain[1]!, r: Math.max(0.22 * ref, 1.1 * half[1]!) }];
        caps.push({ a: chain[1]!, b: start + length > len(sub(chain[1]!, chain[0]!)) ? end : chain[1]!, r: Math.max(0.16 * ref, 1.1 * half[3]!) });
        clips[`leg${s}`] = andNot(intersect(shapesMask(caps, W, H), grown), arms);
      }
    }
  }

  // The band where uncovered old clothing is replaced: the garment's own part of the body. None
  // for lower_body: inside the legs, old trousers a new (narrower or shorter) garment leaves
  // uncovered became holes of background cut into a leg, and beside the legs the background is
  // most often another person standing next to the target (neighbours cut by the frame are not
  // segmented, so their clothes were copied in); it stays (tryon.json's old_clothing.left).
  if (type === 'lower_body') return { strips, clips, arms, hands, band: new Uint8Array(W * H), cuffs };
  const top = add(b.neck, down, 0.05 * b.tl);
  const bottom = add(b.pelvis, down, type === 'upper_body' ? 0.1 * b.tl : 0.4 * b.tl);
  const span = Math.max(1, len(sub(bottom, top)));
  // The clothing on an upper arm is never filled (tryon.json: it stays where no sleeve covers it):
  // an old sleeve is wider than BlazePose's upper-arm capsule, and the band took the rest of it,
  // filled with the background where the new sleeve did not reach (a grey patch on messi's raised
  // arm, his jersey's short sleeve). Nor is what lies under an unseen arm's landmarks, its
  // forearm and hand too: not hers (a neighbour's dress the instance takes in, filled with skin
  // beside s5-red-top's shoulder; at 300 px wide, a block of the woman in front of s5-top filled
  // brown under the unseen arm's wrist). So every arm but a hidden one (behind the body, laid
  // across the torso) keeps its band.
  const wideArms = shapesMask((['L', 'R'] as const).filter((sd) => !hiddenArm(b, sd)).map((sd) => ({ a: lerp(b[sd].shoulder, b[sd].elbow, 0.2), b: b[sd].elbow, r: 0.22 * armRef })), W, H);
  const unseenLimbs = shapesMask(armShapes(b, { upper: false, sides: unseen.filter((sd) => !hiddenArm(b, sd)) }), W, H);
  return { strips, clips, arms, hands, band: bandMask(andNot(torsoAllowed, wideArms, unseenLimbs), W, H, top, down, span), cuffs };
}

/**
 * The skirt's (or the trousers' pelvis') strip on the body, from `waist` for `length`; the
 * stations down to `hips` (a fraction of it) are the hips. Its waistband runs along the line
 * between the hip landmarks (tilted with the pelvis) and sags a little in the middle (the front of
 * a waist seen from about its height); below, the stations turn across the line to the knees.
 * Each station's edges are measured on `allowed` (the instance without the `arms`; see sideWalk)
 * and its centre is the middle of its edges: on a turned body BlazePose's hips sit off the visible
 * ones, and a strip centred on them put the skirt onto the background on one side. The waist is at
 * most the hips' outline; below, the skirt reaches the instance's outline and stands off the legs
 * by a tenth up to the hips' (a hand on the hip narrows the hips' measure, and the thigh below
 * showed).
 */
function lowerStrip(b: Body, waist: P, length: number, stations: number[], hips: number, allowed: Uint8Array, arms: Uint8Array): Strip {
  const { W, H, size, across, down } = b;
  let hipDir = unit(sub(b.R.hip, b.L.hip));
  if (hipDir[0] * across[0] + hipDir[1] * across[1] < 0.7) hipDir = across;
  const dir = unit(sub(mid(b.L.knee, b.R.knee), waist));
  let legAcross = perp(dir);
  if (legAcross[0] * across[0] + legAcross[1] * across[1] < 0) legAcross = [-legAcross[0], -legAcross[1]];
  // Half the hips' width at most: 0.5 body sizes, or 1.1 hip-joint distances up to 0.62 (a turned
  // body's hip joints are close together, and its hips as wide as a front view's).
  const hipMax = Math.min(0.62 * size, Math.max(0.5 * size, 1.1 * len(sub(b.R.hip, b.L.hip))));
  const minHalf = 0.15 * size, gap = Math.round(0.04 * size);
  /**
   * Like edgeDistance with the arms skipped, except that past an arm only a body's worth of
   * pixels (0.12 body sizes) counts: the sliver the instance takes beyond an arm hanging beside
   * the hips (its fringe, a hand, a neighbour's edge) put the skirt onto the background, while an
   * arm across the belly still has the hip beyond it.
   */
  const sideWalk = (c: P, u: P, max: number): number | null => {
    let last: number | null = null, run = 0, beforeArm: number | null = null, past = 0;
    for (let d = 0; d <= max; d += 1) {
      const x = Math.round(c[0] + u[0] * d), y = Math.round(c[1] + u[1] * d);
      if (x < 0 || y < 0 || x >= W || y >= H) return d;
      const i = y * W + x;
      if (allowed[i]) {
        (last = d), (run = 0);
        if (beforeArm !== null) past++;
      } else if (arms[i]) {
        if (last !== null && beforeArm === null) (beforeArm = last), (past = 0);
      } else if (++run > gap) break;
    }
    return beforeArm !== null && past < 0.12 * size ? beforeArm : last;
  };
  const s: Strip = { centre: [], left: [], right: [] };
  // How far the measured middle sits from the landmarks' line (carried down, so a lower station
  // starts its walks on the body, not between the legs).
  let shift = 0, outlineL = minHalf, outlineR = minHalf;
  let prevL = 0.3 * size, prevR = 0.3 * size;
  for (const f of stations) {
    const u = unit(lerp(hipDir, legAcross, Math.min(1, f / 0.3)));
    const c = add(add(waist, dir, f * length), u, shift);
    // The cap is on the width, not on each side: the walks start off the body's middle.
    const dl = sideWalk(c, [-u[0], -u[1]], 1.5 * hipMax);
    const dr = sideWalk(c, u, 1.5 * hipMax);
    let hl = Math.max(minHalf, dl ?? prevL), hr = Math.max(minHalf, dr ?? prevR);
    const over = (hl + hr) / (2 * hipMax);
    if (over > 1) (hl /= over), (hr /= over);
    (prevL = hl), (prevR = hr);
    if (f <= hips) (outlineL = Math.max(outlineL, hl)), (outlineR = Math.max(outlineR, hr));
    else (hl = Math.max(hl, Math.min(outlineL, 1.1 * hl))), (hr = Math.max(hr, Math.min(outlineR, 1.1 * hr)));
    const m = add(c, u, (hr - hl) / 2);
    shift += (hr - hl) / 2;
    const half = (hl + hr) / 2;
    s.centre.push(f === 0 ? add(m, down, 0.03 * size) : m);
    s.left.push(add(m, u, -half));
    s.right.push(add(m, u, half));
  }
  return s;
}

/** `mask` where a pixel lies at or past the line through `p` across `dir` (signed distance along `dir` >= `min`); in place. */
function belowLine(mask: Uint8Array, W: number, H: number, p: P, dir: P, min: number): Uint8Array {
  for (let y = 0, i = 0; y < H; y++) {
    for (let x = 0; x < W; x++, i++) if (mask[i] && !((x - p[0]) * dir[0] + (y - p[1]) * dir[1] >= min)) mask[i] = 0;
  }
  return mask;
}

/** `allowed` (the instance without the arms) between `top` and `span` pixels down along `down`. */
function bandMask(allowed: Uint8Array, W: number, H: number, top: P, down: P, span: number): Uint8Array {
  const band = new Uint8Array(W * H);
  for (let y = 0, i = 0; y < H; y++) {
    for (let x = 0; x < W; x++, i++) {
      if (!allowed[i]) continue;
      const t = ((x - top[0]) * down[0] + (y - top[1]) * down[1]) / span;
      if (t >= 0 && t <= 1) band[i] = 1;
    }
  }
  return band;
}
