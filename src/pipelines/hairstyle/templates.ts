// The 12 hairstyle templates, drawn procedurally in the canonical face frame (frame.ts):
// u along the eye line, v towards the chin, one unit = the face width. Each template is
//   sdf(u, v)    signed distance to its outline (negative inside), in frame units: the hair's
//                volume stands off the skull by a style-dependent amount (a few % of the face
//                width for a buzz cut, far more for curls), never hugging it like a cap
//   flow(u, v)   the direction the strands run at (u, v): the renderer draws strands, clumped
//                edges and the anisotropic highlight along it
//   shade(u, v)  the style's own relief in -1..1 (braids, ropes, curls, facets, layer steps);
//                light, strands and self-shadowing are the renderer's (render.ts), shared by all
//   opacity      below 1 for close-cropped styles, where the scalp shows through
// Every template is also kept off the face: inside the face oval only above its fringe line.
// Short styles reach down the temples to the ear tops (a cap that stops above them reads as a hat).
// A change that alters the pictures needs an algorithm_version bump (golden outputs check it).
import type { Hairstyle } from '../../domain/job.ts';
import { FOREHEAD_WIDTH_BELOW, NATURAL_HAIRLINE, type Anchors } from './frame.ts';

export interface Variant {
  /** Parting position (frame units, - is the image-left side). */
  parting: number;
  /** Volume scale of the silhouette (about 0.94 to 1.08). */
  volume: number;
  /** Strength of the highlight band. */
  shine: number;
  /** Phase for waves, curls and layer cuts. */
  phase: number;
  seed: number;
}

export interface TemplateContext {
  a: Anchors;
  p: Variant;
  /** One pixel in frame units: fine strands are kept coarser than this (no moire on small faces). */
  px: number;
  /** Light from the image-right (+1) or image-left (-1) side, estimated on the face. */
  lightSide: number;
}

/** The hair's mass as an ellipsoid (frame units): the renderer's surface normals for light and highlight. */
export interface Bulk {
  /** Centre, v below the forehead top. */
  cy: number;
  rx: number;
  ry: number;
}

export interface Template {
  name: Hairstyle;
  /** Close to the head: original hair outside its outline must be removed (no long hair left). */
  short: boolean;
  opacity: number;
  /** Clumped outline: frame units the strand clumps stick out or fall short of the outline by. */
  wisps: number;
  /** Weight of the plain strands along the flow (0 where the relief draws its own fibres). */
  strands: number;
  /** Strength of the anisotropic highlight (sleek hair 1, curls and ropes less, facets none). */
  gloss: number;
  bulk: Bulk;
  /**
   * Curled strands: each strand swings across its flow by `amp` (frame units) once per `period`
   * along it, in phase within a ringlet (one clump of strands) and out of phase between ringlets:
   * a corkscrew seen from the side, which the highlight breaks into the glints of curly hair.
   */
  curl?: {
    period: number;
    amp: number;
    /**
     * The swing as value noise about `period` long (up to 2.2 `amp` across) instead of a sine, its
     * phase turning across the strands as well as between ringlets: kinky short curls, where a
     * regular zigzag read as a knitted cap.
     */
    irregular?: boolean;
  };
  /**
   * Clipped hair (frame units): each fibre is cut into pieces about this long, each piece its own
   * fibre, their ends staggered, so the hair shows as short bristles lying along the flow instead of
   * long strands from the crown to the hairline. Absent: strands as long as the hair.
   */
  strandLength?: number;
  /**
   * The cut shows the forehead up to the natural hairline (bareForehead): the renderer draws the
   * hairline's fine hairs there, NATURAL_HAIRLINE above the forehead landmark. Set by
   * showsHairline, with the outline it goes with.
   */
  naturalHairline?: boolean;
  sdf(u: number, v: number, c: TemplateContext): number;
  /** Strand direction in radians: 0 runs down the v axis (to the chin), pi/2 along +u, pi up. */
  flow(u: number, v: number, c: TemplateContext): number;
  /**
   * The across-strand coordinate (frame units), constant along each strand, where the flow's angle
   * swings along the strands (waves). Absent: the position turned by the flow's angle about the
   * frame's origin, which is that coordinate only where the angle changes slowly; where it swung
   * to and fro the strands far from the origin were swept across each other at every swing,
   * tight contour bands like wood grain or marble (Long Wave's lengths).
   */
  stream?(u: number, v: number, c: TemplateContext): number;
  shade(u: number, v: number, c: TemplateContext, depth: number): number;
}

// --- procedural helpers ------------------------------------------------------------------------
const fract = (x: number) => x - Math.floor(x);
/**
 * Length of (a, b). Not Math.hypot: the templates run per pixel, and hypot's guard against
 * overflow (which unit-scale frame values never reach) costs several times a square root.
 */
const len = (a: number, b: number) => Math.sqrt(a * a + b * b);
const clamp = (x: number, lo = 0, hi = 1) => Math.min(hi, Math.max(lo, x));
/** Smoothstep from e0 to e1 (the renderer's too). */
export const smooth = (e0: number, e1: number, x: number) => {
  const t = clamp((x - e0) / (e1 - e0));
  return t * t * (3 - 2 * t);
};
function hash(n: number): number {
  let h = Math.imul(n | 0, 0x27d4eb2d) ^ 0x165667b1;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}
export const hash2 = (x: number, y: number, s: number) => hash(Math.imul(x, 73856093) ^ Math.imul(y, 19349663) ^ Math.imul(s, 83492791));
/** 1-D value noise in 0..1. */
export function noise1(x: number, seed: number): number {
  const i = Math.floor(x);
  const t = x - i;
  const w = t * t * (3 - 2 * t);
  return hash2(i, 0, seed) * (1 - w) + hash2(i + 1, 0, seed) * w;
}
/** 2-D value noise in 0..1. */
export function noise2(x: number, y: number, seed: number): number {
  const i = Math.floor(x), j = Math.floor(y);
  const tx = x - i, ty = y - j;
  const wx = tx * tx * (3 - 2 * tx), wy = ty * ty * (3 - 2 * ty);
  const a = hash2(i, j, seed), b = hash2(i + 1, j, seed), c = hash2(i, j + 1, seed), d = hash2(i + 1, j + 1, seed);
  return (a * (1 - wx) + b * wx) * (1 - wy) + (c * (1 - wx) + d * wx) * wy;
}
/**
 * Curls, -1..1, as real curly hair looks from a step back: no two ringlets alike.
 *   clumps    the mass breaks into curl clumps of uneven size (jittered cells over a warped
 *             domain), each a rounded bundle lit on its upper side, dark in the creases between
 *   coils     inside, the strands: contour lines of a noise field (loops and squiggles of a few
 *             pixels' pitch, their spacing uneven), with a faint turn of the clump's own spiral
 *   masses    large-scale light and shadow across the whole head of curls
 */
function curls(u: number, v: number, freq: number, seed: number, px: number): number {
  // Warp the domain so the clumps are neither round nor on a grid.
  const wu = u + (0.45 / freq) * (noise2(u * freq * 0.6, v * freq * 0.6, seed + 5) * 2 - 1);
  const wv = v + (0.45 / freq) * (noise2(u * freq * 0.6, v * freq * 0.6, seed + 6) * 2 - 1);
  const x = wu * freq, y = wv * freq;
  const i = Math.floor(x), j = Math.floor(y);
  let d1 = 9, d2 = 9, bx = 0, by = 0, bh = 0;
  for (let dj = -1; dj <= 1; dj++) {
    for (let di = -1; di <= 1; di++) {
      const h = hash2(i + di, j + dj, seed);
      const cx = i + di + 0.1 + 0.8 * h;
      const cy = j + dj + 0.1 + 0.8 * hash2(i + di, j + dj, seed + 1);
      // Uneven clump sizes: a per-cell weight on the distance.
      const d = len(x - cx, y - cy) * (0.75 + 0.5 * hash2(i + di, j + dj, seed + 3));
      if (d < d1) {
        d2 = d1;
        d1 = d;
        bx = x - cx;
        by = y - cy;
        bh = h;
      } else if (d < d2) d2 = d;
    }
  }
  const theta = Math.atan2(by, bx);
  // The coiled strands: a strand every ~3 px (never finer: no moire on small faces), as the
  // contour lines of a two-octave noise field whose frequency is a few times the clumps'.
  const f = freq * 3.2;
  const n = noise2(u * f, v * f, seed + 7) + 0.5 * noise2(u * f * 2.1, v * f * 2.1, seed + 8);
  const k = (2 * Math.PI) / (Math.max(3 * px, 0.004) * f * 1.2);
  const coil = Math.sin(n * k + 0.6 * (bh > 0.5 ? theta : -theta) + d1 * 6);
  const strands = coil * coil * 2 - 1;
  // Each clump a rounded bundle: lit on its upper side, in shadow below and in the creases.
  const lit = -0.3 * (by / (d1 + 1e-6)) * Math.min(1, d1 * 2.5);
  const crease = -0.55 * (1 - smooth(0, 0.14, d2 - d1));
  const spiral = 0.12 * Math.sin((bh > 0.5 ? theta : -theta) + d1 * (10 + 6 * bh));
  const masses = 0.3 * (noise2(u * 3, v * 3, seed + 9) * 2 - 1);
  return clamp(0.38 * strands + spiral + lit + crease + masses + 0.2 * (bh - 0.5) + 0.15, -1, 1);
}
const ellipse = (u: number, v: number, cx: number, cy: number, rx: number, ry: number) => (len((u - cx) / rx, (v - cy) / ry) - 1) * Math.min(rx, ry);
const union = (a: number, b: number) => Math.min(a, b);
const intersect = (a: number, b: number) => Math.max(a, b);

/**
 * The skull (where hair grows: top about 0.55 face widths above the forehead landmark, as hair
 * pulled tight shows on the development photos; half-width 0.58) grown by `lift` (the hair's thickness standing off it) on top and `side` at the temples,
 * scaled by the variant's volume, cut at `bottom`.
 */
function cap(u: number, v: number, c: TemplateContext, side: number, lift: number, bottom: number): number {
  const { a, p } = c;
  const cy = a.forehead + 0.2;
  const rx = (0.58 + side) * p.volume;
  const ry = (0.75 + lift) * p.volume;
  return intersect(ellipse(u, v, 0, cy, rx, ry), v - bottom);
}

/**
 * A squarer dome than an ellipse (a superellipse of exponent `n`, half-width `rx`, half-height
 * `ry`, centred where the skull is, scaled by the variant's volume): brushed-up hair on top of the
 * head, broad across the crown. An ellipse taller than wide came to a point (a bullet, a helmet).
 * Its distance is a bound (the superellipse's radius scaled), as the SDFs' min/max are.
 */
function crown(u: number, v: number, c: TemplateContext, rx: number, ry: number, n: number): number {
  const X = Math.abs(u) / (rx * c.p.volume), Y = Math.abs(v - (c.a.forehead + 0.2)) / (ry * c.p.volume);
  return (Math.pow(Math.pow(X, n) + Math.pow(Y, n), 1 / n) - 1) * Math.min(rx, ry) * c.p.volume;
}

/**
 * Where short hair meets the face at the side: not a line above the ears (a cap stops there) but
 * sideburns running down in front of the ears, beside the face oval, narrowing to `length` below
 * the ear level; `width` beyond the oval at the temple. Union it with a cap cut above the ears.
 */
function sideburns(u: number, v: number, c: TemplateContext, length: number, width: number): number {
  const { a } = c;
  const bottom = a.ears + length;
  const w = width * (1 - 0.55 * smooth(a.ears - 0.2, bottom, v));
  return Math.max(Math.abs(u) - (a.ovalHalfWidth(v, u) + w), v - bottom, a.ears - 0.35 - v);
}

/** Keeps hair off the face: inside the oval only above `fringe` (a v line). SDF of the allowed area. */
export function allowedArea(u: number, v: number, a: Anchors, fringe: number): number {
  if (v >= a.chin) return -1;
  const inside = Math.abs(u) - a.ovalHalfWidth(v, u);
  return Math.min(v - fringe, -inside);
}

// --- the 12 templates ----------------------------------------------------------------------------
const hairline = (a: Anchors) => a.forehead + 0.03;
/**
 * The hairline arched, rising towards the temples (`lift` higher at the centre too): a straight cut
 * across the forehead read as a cap's rim or a fringe under a bonnet. Where a style shows the
 * natural hairline (bareForehead) that sets the line across the forehead, and the arch only keeps
 * the hair off the face at the temples.
 */
const archedHairline = (a: Anchors, u: number, lift = 0) => hairline(a) - lift - 0.8 * u * u;
/**
 * The bare forehead under a style that shows the hairline (the Crew Cut, the Buzz Cut, the Braided
 * Crown's pulled-back hair, the Mohawk's strip and shaved sides): a superellipse
 * (exponent 3: flat across the top, rounded at the temples) from the brows up to the natural
 * hairline, NATURAL_HAIRLINE above FaceMesh's forehead landmark, between the face oval's sides a
 * little below that landmark. Hair cut down to the landmark itself (the old arched line)
 * covered half the forehead: bangs, a bowl cut, on every development photo whose forehead shows
 * (there the hair's edge lies 0.15-0.35 face widths above the landmark at the midline). SDF,
 * negative on the bare forehead.
 */
function bareForehead(u: number, v: number, a: Anchors): number {
  const { cx, cy, rx, ry } = foreheadShape(a);
  const X = Math.abs(u - cx) / rx, Y = Math.abs(v - cy) / ry;
  return (Math.cbrt(X * X * X + Y * Y * Y) - 1) * Math.min(rx, ry);
}

/**
 * bareForehead's superellipse for a head, worked out once (it is evaluated per pixel): from the
 * brows up to the natural hairline, between the oval's sides FOREHEAD_WIDTH_BELOW under its top
 * (each side's own: a turned face's near side is wider).
 */
const FOREHEAD_SHAPES = new WeakMap<Anchors, { cx: number; cy: number; rx: number; ry: number }>();
function foreheadShape(a: Anchors): { cx: number; cy: number; rx: number; ry: number } {
  let shape = FOREHEAD_SHAPES.get(a);
  if (!shape) {
    const at = a.forehead + FOREHEAD_WIDTH_BELOW, left = a.ovalHalfWidth(at, -1), right = a.ovalHalfWidth(at, 1);
    shape = { cx: (right - left) / 2, cy: a.brows, rx: (left + right) / 2, ry: a.brows - (a.forehead - NATURAL_HAIRLINE) };
    FOREHEAD_SHAPES.set(a, shape);
  }
  return shape;
}
/** Parted hair: from the parting down each side, turning to fall straight below the ears. */
const parted = (u: number, v: number, c: TemplateContext, fall: number) => {
  const side = u < c.p.parting ? -1 : 1;
  return side * 1.25 * smooth(c.a.ears + 0.05, c.a.forehead - 0.35, v) + side * fall;
};
/**
 * From the whorl on the crown, behind the top of the head: seen from the front the strands run
 * forward and down to the hairline, never out of a star on the forehead.
 */
const fromCrown = (u: number, v: number, c: TemplateContext) => Math.atan2(u, v - (c.a.forehead - 0.9));
/** The parting line's shadow (above the brows), -0.5 at its centre. */
const partingLine = (u: number, v: number, c: TemplateContext) => {
  const d = (u - c.p.parting) / 0.012;
  return -0.5 * Math.exp(-d * d) * (v < c.a.brows ? 1 : 0);
};
const braidArc = (u: number, v: number, c: TemplateContext) => {
  const cy = c.a.forehead + 0.2;
  const r = len(u / 0.6, (v - cy) / 0.77);
  // on: within the braid's band (above the ears).
  return { cy, r, on: Math.abs(r - 1) * 0.6 < 0.08 && v < c.a.ears };
};

/** Long Wave's waves: the strands' swing from the vertical (radians) and its rate down the hair (per face width). */
const WAVE_SWING = 0.3, WAVE_K = 9;
/** Long Wave below the ears: how far down the waves it is (0 above), the wave's phase and its side's sign. */
const longWave = (u: number, v: number, c: TemplateContext) => ({
  below: smooth(c.a.forehead - 0.1, c.a.ears, v),
  arg: (v - c.a.ears) * WAVE_K + c.p.phase * 4,
  side: u < c.p.parting ? -1 : 1,
});

/**
 * A style that shows the natural hairline (the Crew Cut, the Buzz Cut, the Braided Crown's
 * pulled-back hair, the Mohawk's strip and shaved sides): its outline kept off the bare forehead
 * (bareForehead), and flagged for the renderer, which draws the hairline's fine hairs up to it.
 * One wrapper, so the flag and the outline cannot disagree.
 */
function showsHairline(t: Template): Template {
  return { ...t, naturalHairline: true, sdf: (u, v, c) => intersect(t.sdf(u, v, c), -bareForehead(u, v, c.a)) };
}

export const TEMPLATES: Readonly<Record<Hairstyle, Template>> = {
  'Braided Crown': showsHairline({
    name: 'Braided Crown',
    short: true,
    opacity: 1,
    wisps: 0.008,
    strands: 1,
    gloss: 0.9,
    bulk: { cy: 0.2, rx: 0.66, ry: 0.81 },
    sdf(u, v, c) {
      const sleek = union(cap(u, v, c, 0.02, 0.02, c.a.ears - 0.06), sideburns(u, v, c, 0.1, 0.05));
      // The braid: a thick band along an arc over the crown, from ear to ear, standing off the head.
      const { r } = braidArc(u, v, c);
      const band = v < c.a.ears ? Math.abs(r - 1) * 0.6 - 0.08 : 1;
      // The hair is pulled back, so its hairline shows: the natural one, as the short cuts'.
      return intersect(union(sleek, band), allowedArea(u, v, c.a, archedHairline(c.a, u)));
    },
    flow(u, v, c) {
      const { cy, on } = braidArc(u, v, c);
      if (on) return Math.atan2(-(v - cy), u) + Math.PI / 2;
      // The sleek part combed back over the crown, along its grooves (shade).
      return fromCrown(u, v, c);
    },
    shade(u, v, c) {
      const { cy, r, on } = braidArc(u, v, c);
      if (!on) {
        // The sleek part combed back to the braid: sections of hair with darker grooves between
        // them, converging towards the back of the head (a smooth sheen read as skin or a beret).
        const fan = fromCrown(u, v, c) * 14 + 0.6 * noise1(v * 6, c.p.seed + 3);
        const g = Math.abs(fract(fan) - 0.5) * 2;
        return 0.1 - 0.55 * g * g * g;
      }
      const s = Math.atan2(v - cy, u) * 9; // position along the arc
      const across = ((r - 1) * 0.6) / 0.08; // -1..1 across the band
      // Three strands plaited: lobes alternating from each side, each lobe a rounded bundle; at
      // half the contrast it had before algorithm 65 (a braid of deep lobes read as a beret's
      // pleats in dyes and grey).
      const lobe = Math.abs(fract(s + (across > 0 ? 0.25 : -0.25) + across * 0.45) - 0.5) * 2;
      return 0.5 * (0.2 + 0.75 * (1 - lobe * lobe) - 0.9 * across * across * across * across - 0.35);
    },
  }),
  'Long Layers': {
    name: 'Long Layers',
    short: false,
    opacity: 1,
    wisps: 0.03,
    strands: 1,
    gloss: 1,
    bulk: { cy: 0.25, rx: 0.72, ry: 0.85 },
    sdf(u, v, c) {
      const { a, p } = c;
      const top = cap(u, v, c, 0.08, 0.07, a.ears);
      // Layered ends: a comb of clumps, the longest in the middle of each side.
      const bottom = a.chin + 1.2 * p.volume - 0.18 * Math.abs(fract(u * 3.2 + p.phase) - 0.5) * 2 - 0.12 * smooth(0.4, 0.75, Math.abs(u));
      const outer = (0.64 + 0.1 * clamp(v - a.ears, 0, 1)) * p.volume;
      const inner = v > a.chin - 0.1 ? 0.2 : 0;
      const curtains = Math.max(Math.abs(u) - outer, inner - Math.abs(u), v - bottom, a.ears - 0.35 - v);
      return intersect(union(top, curtains), allowedArea(u, v, a, hairline(a) + 0.04));
    },
    flow(u, v, c) {
      return parted(u, v, c, 0.06 * Math.sin(v * 5 + u * 3));
    },
    shade(u, v, c) {
      // The parting line, and the layer steps: each layer's ends a little darker than the next.
      const part = partingLine(u, v, c);
      const layer = v > c.a.ears ? -0.15 * smooth(0.6, 1, fract((v - c.a.ears) * 2.2 + 0.3 * Math.sin(u * 9))) : 0;
      return part + layer;
    },
  },
  'Buzz Cut': showsHairline({
    name: 'Buzz Cut',
    short: true,
    opacity: 1,
    wisps: 0.006,
    strands: 1,
    gloss: 0.55,
    // Clipped to a few millimetres: bristles, not strands from the crown (those read as a bowl).
    strandLength: 0.03,
    bulk: { cy: 0.2, rx: 0.6, ry: 0.77 },
    sdf(u, v, c) {
      // The front hairline rounded, rising towards the temples (a straight cut across the forehead
      // read as a cap's rim).
      return intersect(union(cap(u, v, c, 0.015, 0.03, c.a.ears - 0.06), sideburns(u, v, c, 0.12, 0.05)), allowedArea(u, v, c.a, archedHairline(c.a, u)));
    },
    flow(u, v, c) {
      return fromCrown(u, v, c);
    },
    shade(u, v, c) {
      // Clipped hair is mostly roots: darker than the ends, darkest where it thins at the sides.
      return -0.15 - 0.2 * smooth(0.3, 0.55, Math.abs(u)) + 0.15 * (noise2(u * 18, v * 18, c.p.seed) * 2 - 1);
    },
  }),
  'Bowl Cut': {
    name: 'Bowl Cut',
    short: true,
    opacity: 1,
    wisps: 0.012,
    strands: 1,
    gloss: 0.6,
    bulk: { cy: 0.18, rx: 0.7, ry: 0.85 },
    sdf(u, v, c) {
      const { a } = c;
      const bowl = cap(u, v, c, 0.11, 0.1, a.ears + 0.08);
      // A straight fringe just above the brows.
      return intersect(bowl, allowedArea(u, v, a, a.brows - 0.03));
    },
    flow(u, v, c) {
      return fromCrown(u, v, c);
    },
    shade() {
      return 0;
    },
  },
  Dreadlocks: {
    name: 'Dreadlocks',
    short: false,
    opacity: 1,
    wisps: 0.006,
    strands: 0.25,
    gloss: 0.25,
    bulk: { cy: 0.2, rx: 0.72, ry: 0.85 },
    sdf(u, v, c) {
      const { a, p } = c;
      let d = cap(u, v, c, 0.08, 0.09, a.ears - 0.05);
      const start = a.ears - 0.35;
      for (let i = 0; i < 7; i++) {
        for (const side of [-1, 1]) {
          const centre = side * (0.28 + 0.08 * i) * p.volume + 0.02 * Math.sin(v * 5 + i * 1.7 + p.phase * 6);
          const end = a.chin + (0.7 + 0.4 * hash2(i, side, p.seed)) * p.volume;
          // Ropes taper a little towards their ends.
          const w = 0.046 - 0.01 * clamp((v - start) / (end - start));
          const rope = Math.max(Math.abs(u - centre) - w, start - v, v - end + 0.5 * Math.max(0, Math.abs(u - centre) - 0.5 * w) - 0.01);
          d = union(d, rope);
        }
      }
      return intersect(d, allowedArea(u, v, a, hairline(a)));
    },
    flow(u, v, c) {
      return v > c.a.ears - 0.35 ? 0.05 * Math.sin(v * 5) : Math.atan2(u, v - (c.a.forehead - 0.3));
    },
    shade(u, v, c) {
      if (v < c.a.ears - 0.3) {
        // Over the top of the head the locks run down from the crown (behind the top, out of sight):
        // ropes fanning out from it, each twisted and rounded like the hanging ones (a grid of parted
        // squares on the scalp read as a knitted cap).
        const du = u, dv = v - (c.a.forehead - 0.9);
        const fan = Math.atan2(du, dv) * 10;
        const local = fract(fan + 0.5) - 0.5;
        const twist = Math.sin((len(du, dv) * 48 + local * 7 + hash2(Math.round(fan), 2, c.p.seed) * 6) * Math.PI);
        const l2 = 4 * local * local;
        return 0.1 + 0.35 * twist - 1.1 * l2 * l2 + 0.3 * (noise2(u * 90, v * 90, c.p.seed) * 2 - 1);
      }
      const pitch = 0.08 * c.p.volume;
      const local = fract((Math.abs(u) - 0.28 * c.p.volume) / pitch + 0.5) - 0.5; // -0.5..0.5 across a rope
      // Matted, twisted ropes: diagonal twist ridges, a rounded cross-section, felted noise.
      const twist = Math.sin((v * 48 + local * 7 + hash2(Math.round((Math.abs(u) - 0.28) / pitch), 0, c.p.seed) * 6) * Math.PI);
      const l2 = 4 * local * local;
      const cylinder = -1.1 * l2 * l2;
      return 0.1 + 0.35 * twist + cylinder + 0.3 * (noise2(u * 90, v * 90, c.p.seed) * 2 - 1);
    },
  },
  'Short Hair': {
    name: 'Short Hair',
    short: true,
    opacity: 1,
    wisps: 0.016,
    strands: 1,
    gloss: 0.9,
    bulk: { cy: 0.18, rx: 0.68, ry: 0.83 },
    sdf(u, v, c) {
      const { a, p } = c;
      const crop = cap(u, v, c, 0.07, 0.09, a.ears + 0.1);
      // A fringe swept to one side, lower on that side.
      const sweep = p.parting <= 0 ? 1 : -1;
      const fringe = a.brows - 0.12 + 0.22 * clamp(sweep * u + 0.1, 0, 0.5);
      return intersect(crop, allowedArea(u, v, a, fringe));
    },
    flow(u, v, c) {
      const sweep = c.p.parting <= 0 ? 1 : -1;
      return -sweep * 1.1 * smooth(c.a.ears, c.a.forehead - 0.2, v) + 0.2 * u;
    },
    shade() {
      return 0;
    },
  },
  'Bombshell Curls': {
    name: 'Bombshell Curls',
    short: false,
    opacity: 1,
    wisps: 0.035,
    strands: 1,
    gloss: 0.7,
    bulk: { cy: 0.45, rx: 0.95, ry: 1.1 },
    // Big loose curls: a long swing (0.34 and 0.065 before algorithm 65: tight crimps).
    curl: { period: 0.55, amp: 0.055 },
    sdf(u, v, c) {
      const { a, p } = c;
      const top = a.forehead - 0.72 * p.volume;
      const bottom = a.chin + 0.85 * p.volume;
      const cy = (top + bottom) / 2;
      const theta = Math.atan2(v - cy, u);
      // Big curls: the outline is a ring of round lobes, one per curl at the edge.
      const bump = 0.035 * Math.abs(Math.sin(theta * 9 + p.phase * 6)) + 0.02 * Math.sin(theta * 23 + p.phase * 3);
      const body = ellipse(u, v, 0, cy, 0.92 * p.volume + bump, (bottom - top) / 2 + bump);
      // Open below the chin where the neck is (hair only beside it).
      const neck = v > a.chin - 0.1 ? 0.22 - Math.abs(u) : -1;
      return intersect(intersect(body, neck), allowedArea(u, v, a, hairline(a) + 0.05));
    },
    flow(u, v, c) {
      return parted(u, v, c, 0);
    },
    shade(u, v, c) {
      // The curl clumps' relief kept light (0.4 before algorithm 65): their dark creases, over
      // tight swings, made a dyed or grey mass read as a hat or a poodle wig to the face parser.
      return 0.2 * curls(u, v, 6.5, c.p.seed, c.px);
    },
  },
  Lowpoly: {
    name: 'Lowpoly',
    short: false,
    opacity: 1,
    wisps: 0,
    // Strands and their highlight under the facets (none before algorithm 66: flat-shaded facets
    // alone read as a hat or a helmet to the face parser, 0.02 of the solid pixels as hair over
    // 3 photos x 8 colours; 0.34 with them, the facets still showing).
    strands: 1,
    gloss: 0.6,
    bulk: { cy: 0.35, rx: 0.8, ry: 1 },
    sdf(u, v, c) {
      const { a, p } = c;
      // A bob whose outline is a polygon: straight edges between 11 vertices.
      const cy = a.forehead + 0.35;
      const theta = Math.atan2(v - cy, u);
      const k = 11;
      const seg = Math.floor(((theta + Math.PI) / (2 * Math.PI)) * k);
      const t0 = (seg / k) * 2 * Math.PI - Math.PI;
      const t1 = ((seg + 1) / k) * 2 * Math.PI - Math.PI;
      const r0 = 0.72 + 0.07 * hash2(seg, 1, p.seed);
      const r1 = 0.72 + 0.07 * hash2((seg + 1) % k, 1, p.seed);
      const f = (theta - t0) / (t1 - t0);
      const r = (r0 * (1 - f) + r1 * f) * p.volume;
      const body = len(u, (v - cy) * 0.72) - r;
      const cut = v - (a.chin + 0.12);
      // Hanging beside the neck, not across it: the shell closed under the chin like a helmet's strap.
      const neck = v > a.chin - 0.05 ? 0.32 - Math.abs(u) : -1;
      return intersect(intersect(intersect(body, cut), neck), allowedArea(u, v, a, a.brows - 0.05));
    },
    flow() {
      return 0;
    },
    shade(u, v, c) {
      // Flat-shaded facets: a jittered triangle grid, each facet a plane with its own normal, lit
      // from the face's light side and from above; at 0.6 of the relief they had alone, over the
      // strands.
      const x = u * 7 + 0.5 * v * 7, y = v * 7;
      const i = Math.floor(x), j = Math.floor(y);
      const upper = x - i + (y - j) < 1 ? 0 : 1;
      const nx = hash2(i * 2 + upper, j, c.p.seed) * 2 - 1;
      const ny = hash2(i * 2 + upper, j, c.p.seed + 1) * 2 - 1;
      return 0.36 * (0.7 * nx * c.lightSide - 0.6 * ny) + 0.15 * (hash2(i * 2 + upper, j, c.p.seed + 2) * 2 - 1);
    },
  },
  'Long Wave': {
    name: 'Long Wave',
    short: false,
    opacity: 1,
    wisps: 0.03,
    strands: 1,
    gloss: 1,
    bulk: { cy: 0.3, rx: 0.75, ry: 0.90 },
    sdf(u, v, c) {
      const { a, p } = c;
      const top = cap(u, v, c, 0.09, 0.08, a.ears);
      const wave = 0.06 * Math.sin((v - a.ears) * 9 + p.phase * 4);
      const outer = (0.66 + 0.08 * clamp(v - a.ears, 0, 1)) * p.volume + wave;
      const inner = v > a.chin - 0.1 ? 0.2 + wave * 0.5 : 0;
      const bottom = a.chin + 1.2 * p.volume + 0.06 * Math.sin(u * 12);
      const curtains = Math.max(Math.abs(u) - outer, inner - Math.abs(u), v - bottom, a.ears - 0.35 - v);
      return intersect(union(top, curtains), allowedArea(u, v, a, hairline(a) + 0.04));
    },
    flow(u, v, c) {
      const { below, arg, side } = longWave(u, v, c);
      return parted(u, v, c, 0) * (1 - below) + below * side * WAVE_SWING * Math.cos(arg);
    },
    stream(u, v, c) {
      // Below the ears the strands' own line: u less the wave's sideways swing (the integral of
      // the flow's tangent, WAVE_SWING / WAVE_K across); above, the parted flow turned as usual.
      const { below, arg, side } = longWave(u, v, c);
      const th = parted(u, v, c, 0);
      const wave = u - side * (WAVE_SWING / WAVE_K) * Math.sin(arg);
      return (u * Math.cos(th) - v * Math.sin(th)) * (1 - below) + wave * below;
    },
    shade(u, v, c) {
      // The crests and troughs of the waves, and the parting.
      const crest = 0.22 * Math.sin((v - c.a.ears) * 9 + c.p.phase * 4 + 1.2) * smooth(c.a.forehead, c.a.ears, v);
      return crest + partingLine(u, v, c);
    },
  },
  'Short Curly': {
    name: 'Short Curly',
    short: true,
    opacity: 1,
    wisps: 0.025,
    strands: 1,
    gloss: 0.7,
    bulk: { cy: 0.2, rx: 0.76, ry: 0.89 },
    // Irregular since algorithm 68 (the in-phase zigzag was a knitted beanie to the eye; read as
    // hair in dyes, white and grey over 3 photos 0.32 -> 0.38).
    curl: { period: 0.05, amp: 0.011, irregular: true },
    sdf(u, v, c) {
      const { a, p } = c;
      const cy = a.forehead + 0.2;
      const theta = Math.atan2(v - cy, u);
      const bump = 0.035 * noise1(theta * 9 + p.phase * 5, p.seed + 47);
      const crop = union(intersect(ellipse(u, v, 0, cy, 0.74 * p.volume + bump, 0.88 * p.volume + bump), v - (a.ears - 0.04)), sideburns(u, v, c, 0.12, 0.09));
      return intersect(crop, allowedArea(u, v, a, a.brows - 0.1 + 0.02 * Math.sin(u * 40)));
    },
    flow(u, v, c) {
      return Math.atan2(u, Math.max(0.05, v - (c.a.forehead - 0.3)));
    },
    shade(u, v, c) {
      // Light relief (0.4 before algorithm 65): deep creases between the curl clumps read as the
      // ribs of a knitted cap to the face parser (0.09 -> 0.32 of the solid pixels as hair in dyes).
      return 0.15 * curls(u, v, 11, c.p.seed, c.px);
    },
  },
  Mohawk: showsHairline({
    name: 'Mohawk',
    short: true,
    opacity: 1,
    wisps: 0.02,
    strands: 1,
    gloss: 0.8,
    bulk: { cy: 0.1, rx: 0.5, ry: 1.05 },
    sdf(u, v, c) {
      const { a, p } = c;
      // Only the central strip is hair; the shaved sides are drawn by the scalp layer (opacity below).
      const top = a.forehead - 0.55 - 0.42 * p.volume;
      const spikes = 0.07 * Math.abs(fract(u * 14 + p.phase) - 0.5) * 2;
      // Along the head's midline: through the forehead top, bending back to the skull's centre.
      const m = a.midline * (1 - smooth(a.forehead, top, v));
      const w = Math.abs(u - m);
      const strip = Math.max(w - (0.12 - 0.04 * smooth(a.forehead, top, v)), top + spikes - v, v - (a.forehead - 0.02));
      const back = intersect(w - 0.12, cap(u, v, c, 0, 0.05, a.ears - 0.15));
      return intersect(union(strip, back), allowedArea(u, v, a, hairline(a)));
    },
    flow(u, v, c) {
      const m = c.a.midline;
      return Math.PI - clamp((u - m) * 5, -0.5, 0.5);
    },
    shade(u, v, c) {
      // The raised part thins into spikes: more gaps between strands, less light through them.
      return -0.35 * smooth(c.a.forehead - 0.3, c.a.forehead - 0.75, v);
    },
  }),
  'Crew Cut': showsHairline({
    name: 'Crew Cut',
    short: true,
    opacity: 1,
    wisps: 0.012,
    strands: 1,
    // Short bristles catch the light one by one: no sleek band (0.9 drew a gold or chrome helmet).
    gloss: 0.45,
    strandLength: 0.06,
    bulk: { cy: 0.15, rx: 0.62, ry: 0.83 },
    sdf(u, v, c) {
      const { a } = c;
      // Clipped close on the sides; on top a little longer, brushed up: a broad crown (crown: 5% of
      // the face width above the skull; an ellipse grown 11% up and narrowed came to a point, a
      // bullet; a tall narrow dome before it read as a helmet), under a rounded hairline.
      const sides = union(cap(u, v, c, -0.005, 0, a.ears - 0.06), sideburns(u, v, c, 0.12, 0.05));
      const top = intersect(crown(u, v, c, 0.56, 0.8, 2.6), v - (a.forehead + 0.05));
      return intersect(union(sides, top), allowedArea(u, v, a, archedHairline(a, u, 0.02)));
    },
    flow(u, v, c) {
      // Forward and down from the crown, as the Buzz Cut (brushed up at the front, the flows met in
      // a seam that read as a plait along each side).
      return fromCrown(u, v, c);
    },
    shade(u) {
      return -0.3 * smooth(0.36, 0.5, Math.abs(u));
    },
  }),
};

/** The shaved sides' own shade (its mean; composite.ts lights the scalp's colour about it). */
export const STUBBLE_SHADE = -0.2;

/**
 * The old hair's share in shaved stubble's colour (the rest the face's skin): a freshly shaved
 * scalp is skin tinted by the bristles' roots. At 0.4, with the stubble's strong texture, the
 * Mohawk's sides were a grey-brown felt (SHAVED_SIDES); at 0.35 a brown leather cap on dark-haired
 * s5-front. Also the hair's share of a shaved pixel in the output's hair mask (composite.ts
 * alphaMask).
 */
export const STUBBLE_HAIR = 0.2;

/**
 * The Mohawk's shaved sides, drawn under its strip: scalp with stubble, in the person's own colours
 * (render.ts's stubble share), nearly opaque: the removed hair under it was filled with what lies
 * beside the head, so a faint layer let the background show through the skull.
 */
export const SHAVED_SIDES: Template = showsHairline({
  name: 'Mohawk',
  short: true,
  opacity: 0.94,
  wisps: 0.003,
  // Stubble: bristles of about 1% of the face width (without them the scalp was a flat beige cap),
  // faint (a fifth of a head of hair's strand texture; the skull's light carries the shape): at
  // full strength, with the noise below at 0.3, the sides were a brown felt that the reference
  // parser read as a hat (36% of the sides on six development photos; 10% now, skin 3% -> 31%).
  strands: 0.2,
  gloss: 0,
  strandLength: 0.012,
  bulk: { cy: 0.2, rx: 0.6, ry: 0.77 },
  sdf(u, v, c) {
    return intersect(union(cap(u, v, c, -0.025, -0.02, c.a.ears - 0.06), sideburns(u, v, c, 0.1, 0.04)), allowedArea(u, v, c.a, hairline(c.a)));
  },
  flow(u, v, c) {
    return fromCrown(u, v, c);
  },
  shade(u, v, c) {
    return STUBBLE_SHADE + 0.08 * (noise2(u * Math.min(420, 0.5 / c.px), v * Math.min(420, 0.5 / c.px), c.p.seed) * 2 - 1);
  },
});

/** Variants for one job: deterministic in the seed; output k of n varies parting, volume, shine. */
export function variantFor(seed: number, k: number): Variant {
  const r = (i: number) => hash2(seed, k, i);
  const partings = [0, -0.14, 0.14, -0.07];
  return {
    parting: partings[k % partings.length]! + (r(1) - 0.5) * 0.03,
    volume: 1 + [0, 0.06, -0.04, 0.03][k % 4]! + (r(2) - 0.5) * 0.02,
    shine: 0.6 + 0.6 * r(3),
    phase: r(4),
    seed: Math.floor(r(5) * 1e9),
  };
}
