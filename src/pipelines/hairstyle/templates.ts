// The 12 hairstyle templates, drawn procedurally in the canonical face frame (frame.ts):
// u along the eye line, v towards the chin, one unit = the face width. Each template is
//   sdf(u, v)    signed distance to its outline (negative inside), in frame units
//   shade(u, v)  lightness offset in -1..1: strands, curls, braids, ropes or facets, plus light
//   opacity      below 1 for close-cropped styles, where the scalp shows through
// Every template is also kept off the face: inside the face oval only above its fringe line.
// Short styles reach down the temples to the ear tops (a cap that stops above them reads as a hat).
// A change that alters the pictures needs an algorithm_version bump (golden outputs check it).
import type { Hairstyle } from '../../domain/job.ts';
import type { Anchors } from './frame.ts';

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

export interface Template {
  name: Hairstyle;
  /** Close to the head: original hair outside its outline must be removed (no long hair left). */
  short: boolean;
  opacity: number;
  /** Wispy outline: frame units of noise on the edge (0 for crisp styles). */
  wisps?: number;
  sdf(u: number, v: number, c: TemplateContext): number;
  shade(u: number, v: number, c: TemplateContext, depth: number): number;
}

// --- procedural helpers ------------------------------------------------------------------------
const fract = (x: number) => x - Math.floor(x);
const clamp = (x: number, lo = 0, hi = 1) => Math.min(hi, Math.max(lo, x));
const smooth = (e0: number, e1: number, x: number) => {
  const t = clamp((x - e0) / (e1 - e0));
  return t * t * (3 - 2 * t);
};
function hash(n: number): number {
  let h = Math.imul(n | 0, 0x27d4eb2d) ^ 0x165667b1;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}
const hash2 = (x: number, y: number, s: number) => hash(Math.imul(x, 73856093) ^ Math.imul(y, 19349663) ^ Math.imul(s, 83492791));
/** 1-D value noise in 0..1. */
function noise1(x: number, seed: number): number {
  const i = Math.floor(x);
  const t = x - i;
  const w = t * t * (3 - 2 * t);
  return hash2(i, 0, seed) * (1 - w) + hash2(i + 1, 0, seed) * w;
}
/** 2-D value noise in 0..1. */
function noise2(x: number, y: number, seed: number): number {
  const i = Math.floor(x), j = Math.floor(y);
  const tx = x - i, ty = y - j;
  const wx = tx * tx * (3 - 2 * tx), wy = ty * ty * (3 - 2 * ty);
  const a = hash2(i, j, seed), b = hash2(i + 1, j, seed), c = hash2(i, j + 1, seed), d = hash2(i + 1, j + 1, seed);
  return (a * (1 - wx) + b * wx) * (1 - wy) + (c * (1 - wx) + d * wx) * wy;
}
/**
 * Strands running along `angle` (radians, 0 = down the v axis), -1..1: fibres (at most one per
 * ~2.5 pixels, so small faces get no moire), clumps of fibres, and per-strand lightness that
 * varies slowly along each strand (strands cross into light and out of it).
 */
function strands(u: number, v: number, angle: number, seed: number, px: number): number {
  const t = u * Math.cos(angle) - v * Math.sin(angle);
  const along = u * Math.sin(angle) + v * Math.cos(angle);
  const fibre = Math.min(260, 0.4 / px);
  const bend = noise1(along * 3, seed + 7) * 6;
  const fine = noise1(t * fibre + bend * (fibre / 260), seed) * 2 - 1;
  const clump = noise1(t * 34 + along * 0.8, seed + 3) * 2 - 1;
  const strandTone = noise2(t * fibre * 0.5, along * 6, seed + 5) * 2 - 1;
  return 0.45 * fine + 0.35 * clump + 0.2 * strandTone;
}
/**
 * Curls, -1..1: the picture is tiled into jittered cells (Worley), each cell one ringlet: a spiral
 * of strands turning around its centre (lit on the side facing up, shadowed underneath), dark in
 * the creases where ringlets meet (distance to the nearest cell edge), fibres along the spiral.
 */
function curls(u: number, v: number, freq: number, seed: number, px: number): number {
  const x = u * freq, y = v * freq;
  const i = Math.floor(x), j = Math.floor(y);
  let d1 = 9, d2 = 9, bx = 0, by = 0, bh = 0;
  for (let dj = -1; dj <= 1; dj++) {
    for (let di = -1; di <= 1; di++) {
      const h = hash2(i + di, j + dj, seed);
      const cx = i + di + 0.15 + 0.7 * h;
      const cy = j + dj + 0.15 + 0.7 * hash2(i + di, j + dj, seed + 1);
      const d = Math.hypot(x - cx, y - cy);
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
  const spiral = Math.cos(theta * 2 + d1 * 9 + bh * 6);
  const lit = -0.35 * (by / (d1 + 1e-6)) * Math.min(1, d1 * 2);
  const crease = -0.8 * (1 - smooth(0, 0.18, d2 - d1));
  const fine = Math.min(1, 0.05 / (px * freq));
  const fibre = (noise1((theta * 12 + d1 * 40) * Math.max(0.3, fine), seed + 2) * 2 - 1) * 0.35;
  return clamp(0.35 * spiral + lit + crease + fibre, -1, 1);
}
const ellipse = (u: number, v: number, cx: number, cy: number, rx: number, ry: number) => (Math.hypot((u - cx) / rx, (v - cy) / ry) - 1) * Math.min(rx, ry);
const union = (a: number, b: number) => Math.min(a, b);
const intersect = (a: number, b: number) => Math.max(a, b);

/** The head's skull cap (where hair grows), scaled by volume. */
function cap(u: number, v: number, c: TemplateContext, extraX: number, extraTop: number, bottom: number): number {
  const { a, p } = c;
  const cy = a.forehead + 0.22;
  const rx = (0.56 + extraX) * p.volume;
  const ry = (0.55 + extraTop) * p.volume;
  return intersect(ellipse(u, v, 0, cy, rx, ry), v - bottom);
}

/**
 * Lighting shared by all styles: light from above and from the side the face is lit from, darker
 * towards the outline (the hair turns away) and the roots, and an anisotropic highlight: a band
 * across the strands on the crown, broken up by the strands themselves (Kajiya-Kay-like).
 */
function light(v: number, c: TemplateContext, depth: number, top: number, u = 0): number {
  const fromTop = smooth(top, top + 1.6, v);
  const rim = -0.55 * (1 - smooth(0, 0.05, depth));
  const side = 0.3 * c.lightSide * clamp(u / 0.6, -1, 1);
  const bandV = c.a.forehead - 0.1 + 0.06 * c.lightSide * u;
  const band = c.p.shine * 0.55 * Math.exp(-(((v - bandV) / 0.05) ** 2)) * (0.6 + 0.4 * Math.cos(u * 2.2));
  return 0.25 - 0.45 * fromTop + rim + band + side;
}

/** The outline perturbation of a template at (u, v): fine fibres and tufts breaking the edge. */
export function wisp(t: Template, u: number, v: number, seed: number): number {
  const w = t.wisps ?? 0.012;
  if (w === 0) return 0;
  return w * (0.6 * (noise2(u * 90, v * 90, seed + 11) * 2 - 1) + 0.4 * (noise2(u * 18, v * 18, seed + 12) * 2 - 1));
}

/** Keeps hair off the face: inside the oval only above `fringe` (a v line). SDF of the allowed area. */
export function allowedArea(u: number, v: number, a: Anchors, fringe: number): number {
  if (v >= a.chin) return -1;
  const inside = Math.abs(u) - a.ovalHalfWidth(v, u);
  return Math.min(v - fringe, -inside);
}

// --- the 12 templates ----------------------------------------------------------------------------
const hairline = (a: Anchors) => a.forehead + 0.03;

export const TEMPLATES: Readonly<Record<Hairstyle, Template>> = {
  'Braided Crown': {
    name: 'Braided Crown',
    short: true,
    opacity: 1,
    sdf(u, v, c) {
      const sleek = cap(u, v, c, 0.02, -0.01, c.a.ears + 0.02);
      // The braid: a band along an arc over the crown, from ear to ear.
      const cy = c.a.forehead + 0.2;
      const r = Math.hypot(u / 0.52, (v - cy) / 0.5);
      const band = v < c.a.ears ? Math.abs(r - 1) * 0.5 - 0.065 : 1;
      return intersect(union(sleek, band), allowedArea(u, v, c.a, hairline(c.a)));
    },
    shade(u, v, c, depth) {
      const cy = c.a.forehead + 0.2;
      const r = Math.hypot(u / 0.52, (v - cy) / 0.5);
      const onBand = Math.abs(r - 1) * 0.5 < 0.065 && v < c.a.ears;
      if (onBand) {
        const s = Math.atan2(v - cy, u) * 9; // position along the arc
        const across = (r - 1) * 0.5 / 0.065; // -1..1 across the band
        const lobe = Math.abs(fract(s + (across > 0 ? 0.25 : -0.25) + across * 0.35) - 0.5) * 2; // plaited lobes
        return 0.15 + 0.6 * (1 - lobe) - 0.5 * across * across + 0.25 * strands(u, v, s, c.p.seed, c.px);
      }
      // Hair swept back from the face.
      return light(v, c, depth, c.a.forehead - 0.35, u) + 0.45 * strands(u, v, Math.atan2(u, 1) * 0.6, c.p.seed, c.px);
    },
  },
  'Long Layers': {
    name: 'Long Layers',
    short: false,
    opacity: 1,
    sdf(u, v, c) {
      const { a, p } = c;
      const top = cap(u, v, c, 0.06, 0.03, a.ears);
      const bottom = a.chin + 1.3 * p.volume - 0.22 * Math.abs(fract(u * 3.2 + p.phase) - 0.5) * 2;
      const outer = (0.6 + 0.07 * (v - a.ears)) * p.volume;
      const inner = v > a.chin - 0.1 ? 0.19 : 0;
      const curtains = Math.max(Math.abs(u) - outer, inner - Math.abs(u), v - bottom, a.ears - 0.35 - v);
      return intersect(union(top, curtains), allowedArea(u, v, a, hairline(a) + 0.04));
    },
    shade(u, v, c, depth) {
      const side = u < c.p.parting ? -1 : 1;
      const angle = v < c.a.ears ? side * 0.9 * smooth(c.a.ears, c.a.forehead - 0.3, v) : side * 0.08;
      return light(v, c, depth, c.a.forehead - 0.3, u) + 0.5 * strands(u, v, angle, c.p.seed, c.px) - 0.25 * Math.exp(-(((u - c.p.parting) / 0.015) ** 2)) * (v < c.a.brows ? 1 : 0);
    },
  },
  'Buzz Cut': {
    name: 'Buzz Cut',
    short: true,
    opacity: 0.92,
    sdf(u, v, c) {
      return intersect(cap(u, v, c, 0.0, -0.02, c.a.ears + 0.02), allowedArea(u, v, c.a, hairline(c.a)));
    },
    shade(u, v, c, depth) {
      const stubble = noise2(u * Math.min(420, 0.5 / c.px), v * Math.min(420, 0.5 / c.px), c.p.seed) * 2 - 1;
      return -0.2 + 0.35 * stubble + 0.5 * light(v, c, depth, c.a.forehead - 0.3, u);
    },
  },
  'Bowl Cut': {
    name: 'Bowl Cut',
    short: true,
    opacity: 1,
    sdf(u, v, c) {
      const { a } = c;
      const bowl = cap(u, v, c, 0.1, 0.06, a.ears + 0.08);
      // A straight fringe just above the brows.
      return intersect(bowl, allowedArea(u, v, a, a.brows - 0.03));
    },
    shade(u, v, c, depth) {
      const crown = c.a.forehead - 0.25;
      const angle = Math.atan2(u, Math.max(0.05, v - crown)); // radiating from the crown
      return light(v, c, depth, c.a.forehead - 0.4, u) + 0.5 * strands(u, v, angle, c.p.seed, c.px);
    },
  },
  Dreadlocks: {
    name: 'Dreadlocks',
    short: false,
    opacity: 1,
    sdf(u, v, c) {
      const { a, p } = c;
      let d = cap(u, v, c, 0.06, 0.05, a.ears - 0.05);
      const start = a.ears - 0.3;
      for (let i = 0; i < 7; i++) {
        for (const side of [-1, 1]) {
          const centre = side * (0.27 + 0.078 * i) * p.volume + 0.015 * Math.sin(v * 6 + i + p.phase);
          const end = a.chin + (0.75 + 0.35 * hash2(i, side, p.seed)) * p.volume;
          const rope = Math.max(Math.abs(u - centre) - 0.034, start - v, v - end);
          d = union(d, rope);
        }
      }
      return intersect(d, allowedArea(u, v, a, hairline(a)));
    },
    shade(u, v, c, depth) {
      const local = fract((Math.abs(u) - 0.27) / 0.078 + 0.5) - 0.5; // -0.5..0.5 across a rope
      const twist = Math.sin((v * 55 + local * 9) * Math.PI);
      const cylinder = -0.7 * (local * 2) ** 2;
      return light(v, c, depth, c.a.forehead - 0.35, u) * 0.6 + 0.35 * twist + cylinder + 0.2 * (noise2(u * 80, v * 80, c.p.seed) * 2 - 1);
    },
  },
  'Short Hair': {
    name: 'Short Hair',
    short: true,
    opacity: 1,
    sdf(u, v, c) {
      const { a, p } = c;
      const crop = cap(u, v, c, 0.06, 0.05, a.ears + 0.1);
      // A fringe swept to one side, lower on that side.
      const sweep = p.parting <= 0 ? 1 : -1;
      const fringe = a.brows - 0.12 + 0.22 * clamp(sweep * u + 0.1, 0, 0.5);
      return intersect(crop, allowedArea(u, v, a, fringe));
    },
    shade(u, v, c, depth) {
      const sweep = c.p.parting <= 0 ? 1 : -1;
      const angle = -sweep * 1.0 * smooth(c.a.ears, c.a.forehead - 0.2, v);
      return light(v, c, depth, c.a.forehead - 0.35, u) + 0.5 * strands(u, v, angle, c.p.seed, c.px);
    },
  },
  'Bombshell Curls': {
    name: 'Bombshell Curls',
    short: false,
    opacity: 1,
    sdf(u, v, c) {
      const { a, p } = c;
      const top = a.forehead - 0.42 * p.volume;
      const bottom = a.chin + 0.85 * p.volume;
      const cy = (top + bottom) / 2;
      const theta = Math.atan2(v - cy, u);
      const bump = 0.03 * Math.sin(theta * 17 + p.phase * 6);
      const body = ellipse(u, v, 0, cy, 0.86 * p.volume + bump, (bottom - top) / 2 + bump);
      // Open below the chin where the neck is (hair only beside it).
      const neck = v > a.chin - 0.1 ? 0.21 - Math.abs(u) : -1;
      return intersect(intersect(body, neck), allowedArea(u, v, a, hairline(a) + 0.05));
    },
    shade(u, v, c, depth) {
      return 0.7 * light(v, c, depth, c.a.forehead - 0.45, u) + 0.55 * curls(u, v, 9, c.p.seed, c.px);
    },
  },
  Lowpoly: {
    name: 'Lowpoly',
    short: false,
    opacity: 1,
    wisps: 0,
    sdf(u, v, c) {
      const { a, p } = c;
      // A bob whose outline is a polygon: straight edges between 11 vertices.
      const cy = a.forehead + 0.35;
      const theta = Math.atan2(v - cy, u);
      const k = 11;
      const seg = Math.floor(((theta + Math.PI) / (2 * Math.PI)) * k);
      const t0 = (seg / k) * 2 * Math.PI - Math.PI;
      const t1 = ((seg + 1) / k) * 2 * Math.PI - Math.PI;
      const r0 = 0.66 + 0.07 * hash2(seg, 1, p.seed);
      const r1 = 0.66 + 0.07 * hash2((seg + 1) % k, 1, p.seed);
      const f = (theta - t0) / (t1 - t0);
      const r = (r0 * (1 - f) + r1 * f) * p.volume;
      const body = Math.hypot(u, (v - cy) * 0.78) - r;
      const cut = v - (a.chin + 0.12);
      return intersect(intersect(body, cut), allowedArea(u, v, a, a.brows - 0.05));
    },
    shade(u, v, c, depth) {
      // Flat-shaded facets: a jittered triangle grid, one lightness per facet.
      const x = u * 7, y = v * 7;
      const i = Math.floor(x), j = Math.floor(y);
      const upper = x - i + (y - j) < 1 ? 0 : 1;
      const facet = hash2(i * 2 + upper, j, c.p.seed) * 2 - 1;
      return 0.55 * facet + 0.45 * light(v, c, Math.max(depth, 0.05), c.a.forehead - 0.4, u);
    },
  },
  'Long Wave': {
    name: 'Long Wave',
    short: false,
    opacity: 1,
    sdf(u, v, c) {
      const { a, p } = c;
      const top = cap(u, v, c, 0.07, 0.04, a.ears);
      const wave = 0.06 * Math.sin((v - a.ears) * 9 + p.phase * 4);
      const outer = (0.63 + 0.05 * (v - a.ears)) * p.volume + wave;
      const inner = v > a.chin - 0.1 ? 0.2 + wave * 0.5 : 0;
      const bottom = a.chin + 1.25 * p.volume + 0.05 * Math.sin(u * 12);
      const curtains = Math.max(Math.abs(u) - outer, inner - Math.abs(u), v - bottom, a.ears - 0.35 - v);
      return intersect(union(top, curtains), allowedArea(u, v, a, hairline(a) + 0.04));
    },
    shade(u, v, c, depth) {
      const side = u < c.p.parting ? -1 : 1;
      const angle = side * 0.05 + 0.45 * Math.cos((v - c.a.ears) * 9 + c.p.phase * 4);
      const crest = 0.3 * Math.sin((v - c.a.ears) * 9 + c.p.phase * 4 + 1.2);
      return light(v, c, depth, c.a.forehead - 0.3, u) + 0.42 * strands(u, v, angle, c.p.seed, c.px) + crest;
    },
  },
  'Short Curly': {
    name: 'Short Curly',
    short: true,
    opacity: 1,
    sdf(u, v, c) {
      const { a, p } = c;
      const cy = a.forehead + 0.2;
      const theta = Math.atan2(v - cy, u);
      const bump = 0.025 * Math.sin(theta * 19 + p.phase * 5);
      const crop = intersect(ellipse(u, v, 0, cy, 0.68 * p.volume + bump, 0.64 * p.volume + bump), v - a.ears);
      return intersect(crop, allowedArea(u, v, a, a.brows - 0.1 + 0.02 * Math.sin(u * 40)));
    },
    shade(u, v, c, depth) {
      return 0.7 * light(v, c, depth, c.a.forehead - 0.45, u) + 0.6 * curls(u, v, 16, c.p.seed, c.px);
    },
  },
  Mohawk: {
    name: 'Mohawk',
    short: true,
    opacity: 1,
    sdf(u, v, c) {
      const { a, p } = c;
      // Only the central strip is hair; the shaved sides are drawn by the scalp layer (opacity below).
      const top = a.forehead - 0.33 - 0.5 * p.volume;
      const spikes = 0.06 * Math.abs(fract(u * 14 + p.phase) - 0.5) * 2;
      // Along the head's midline: through the forehead top, bending back to the skull's centre.
      const m = a.midline * (1 - smooth(a.forehead, top, v));
      const w = Math.abs(u - m);
      const strip = Math.max(w - (0.075 - 0.03 * smooth(a.forehead, top, v)), top + spikes - v, v - (a.forehead - 0.02));
      const back = intersect(w - 0.075, cap(u, v, c, -0.01, 0, a.ears - 0.15));
      return intersect(union(strip, back), allowedArea(u, v, a, hairline(a)));
    },
    shade(u, v, c, depth) {
      return light(v, c, depth, c.a.forehead - 0.9, u) + 0.5 * strands(u, v, u * 6, c.p.seed, c.px);
    },
  },
  'Crew Cut': {
    name: 'Crew Cut',
    short: true,
    opacity: 1,
    sdf(u, v, c) {
      const { a } = c;
      const sides = cap(u, v, c, 0.02, -0.01, a.ears + 0.02);
      // The top stands up: a flattened dome over the front of the crown.
      const top = intersect(ellipse(u, v, 0, a.forehead - 0.12, 0.42 * c.p.volume, 0.3 * c.p.volume), v - (a.forehead + 0.05));
      return intersect(union(sides, top), allowedArea(u, v, a, hairline(a) - 0.02));
    },
    shade(u, v, c, depth) {
      const sideShadow = -0.3 * smooth(0.36, 0.5, Math.abs(u));
      const upward = Math.PI + u * 1.2; // brushed up
      return light(v, c, depth, c.a.forehead - 0.45, u) + 0.45 * strands(u, v, upward, c.p.seed, c.px) + sideShadow;
    },
  },
};

/**
 * The Mohawk's shaved sides, drawn under its strip: scalp with stubble, in the person's own colours
 * (render.ts's stubble share), nearly opaque: the removed hair under it was filled with what lies
 * beside the head, so a faint layer let the background show through the skull.
 */
export const SHAVED_SIDES: Template = {
  name: 'Mohawk',
  short: true,
  opacity: 0.94,
  sdf(u, v, c) {
    return intersect(cap(u, v, c, 0.0, -0.02, c.a.ears + 0.02), allowedArea(u, v, c.a, hairline(c.a)));
  },
  shade(u, v, c) {
    return -0.3 + 0.3 * (noise2(u * Math.min(420, 0.5 / c.px), v * Math.min(420, 0.5 / c.px), c.p.seed) * 2 - 1);
  },
};

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
