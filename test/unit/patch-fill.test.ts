// The exemplar fill (src/steps/patch-fill.ts) on synthetic pictures whose right answer is known:
// a hole in stripes must be filled with stripes in phase (a blur would give flat grey), pixels
// outside the hole must not move, the source mask must be obeyed, a seed reproduces the fill, and
// with `blend` the copied blocks cross-fade instead of meeting in seams, and with `sourcesPerHole`
// the structure comes from where the sources are, not from a few whole patches in the corners.
import { describe, expect, it } from 'vitest';
import type { RgbImage } from '../../src/imaging/image.ts';
import { componentsTouching } from '../../src/imaging/morphology.ts';
import { patchFill } from '../../src/steps/patch-fill.ts';

const W = 160, H = 120;

function image(pixel: (x: number, y: number) => [number, number, number]): RgbImage {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) data.set(pixel(x, y), 3 * (y * W + x));
  return { data, width: W, height: H };
}

function square(x0: number, y0: number, side: number): Uint8Array {
  const m = new Uint8Array(W * H);
  for (let y = y0; y < y0 + side; y++) for (let x = x0; x < x0 + side; x++) m[y * W + x] = 1;
  return m;
}

/** Share of the hole's pixels (by index) for which `pass` holds. */
function holeShare(hole: Uint8Array, pass: (i: number) => boolean): number {
  let hit = 0, n = 0;
  for (let i = 0; i < hole.length; i++) {
    if (!hole[i]) continue;
    n++;
    if (pass(i)) hit++;
  }
  return hit / n;
}

const stripe = (x: number) => (Math.floor(x / 6) % 2 ? 230 : 20);
const stripes = image((x) => [stripe(x), stripe(x), stripe(x)]);

describe('patchFill', () => {
  it('continues vertical stripes through a hole, in phase, instead of blurring them', () => {
    const hole = square(60, 40, 36);
    const out = patchFill(stripes, hole, { seed: 1 });
    let inPhase = 0, n = 0, sum = 0, sum2 = 0;
    for (let i = 0; i < hole.length; i++) {
      if (!hole[i]) continue;
      const v = out.data[3 * i]!;
      if (Math.abs(v - stripe(i % W)) < 60) inPhase++;
      sum += v;
      sum2 += v * v;
      n++;
    }
    const std = Math.sqrt(sum2 / n - (sum / n) ** 2);
    expect(inPhase / n).toBeGreaterThan(0.85);
    // The stripes' own spread is 105; a blur towards the mean would be near 0.
    expect(std).toBeGreaterThan(80);
  });

  it('changes nothing outside the hole, and reproduces itself for a seed', () => {
    const hole = square(20, 20, 24);
    const a = patchFill(stripes, hole, { seed: 7 });
    const b = patchFill(stripes, hole, { seed: 7 });
    expect(Buffer.from(a.data).equals(Buffer.from(b.data))).toBe(true);
    for (let i = 0; i < hole.length; i++) if (!hole[i]) for (let c = 0; c < 3; c++) expect(a.data[3 * i + c]).toBe(stripes.data[3 * i + c]);
  });

  it('inPlace fills the image it is given, with the same pixels as a copy', () => {
    // The hole painted black first, so a fill shows.
    const hole = square(20, 20, 24);
    const holed = { ...stripes, data: new Uint8Array(stripes.data) };
    for (let i = 0; i < hole.length; i++) if (hole[i]) holed.data.fill(0, 3 * i, 3 * i + 3);
    const copy = patchFill(holed, hole, { seed: 7 });
    const own = { ...holed, data: new Uint8Array(holed.data) };
    const out = patchFill(own, hole, { seed: 7, inPlace: true });
    expect(out).toBe(own);
    expect(Buffer.from(own.data).equals(Buffer.from(copy.data))).toBe(true);
    expect(Buffer.from(own.data).equals(Buffer.from(holed.data))).toBe(false);
  });

  it('copies only from the source mask', () => {
    // Left half red, right half blue; the hole straddles the middle; only the left may be copied.
    const img = image((x) => (x < W / 2 ? [200, 30, 30] : [30, 30, 200]));
    const hole = square(64, 40, 32);
    const source = new Uint8Array(W * H);
    for (let y = 0; y < H; y++) for (let x = 0; x < W / 2; x++) source[y * W + x] = 1;
    const out = patchFill(img, hole, { source, seed: 3 });
    expect(holeShare(hole, (i) => out.data[3 * i]! > 150 && out.data[3 * i + 2]! < 80)).toBeGreaterThan(0.95);
  });

  it('keeps stripes sharp and in phase on a region larger than the search cap (copied, not voted)', () => {
    const BW = 640, BH = 480;
    const data = new Uint8Array(BW * BH * 3);
    const band = (x: number) => (Math.floor(x / 5) % 2 ? 225 : 25);
    for (let y = 0; y < BH; y++) for (let x = 0; x < BW; x++) data.fill(band(x), 3 * (y * BW + x), 3 * (y * BW + x) + 3);
    const hole = new Uint8Array(BW * BH);
    for (let y = 160; y < 320; y++) for (let x = 240; x < 400; x++) hole[y * BW + x] = 1;
    const out = patchFill({ data, width: BW, height: BH }, hole, { seed: 2, searchSide: 128 });
    expect(holeShare(hole, (i) => Math.abs(out.data[3 * i]! - band(i % BW)) < 60)).toBeGreaterThan(0.85);
  });

  it('is not pulled towards what lies beside the hole but may not be copied', () => {
    // Grey texture everywhere (allowed), a red block touching the hole (known, not allowed) and a
    // red patch far away (allowed): matching the red block's context would copy that red patch.
    const img = image((x, y) => {
      if (x >= 44 && x < 60 && y >= 40 && y < 76) return [210, 30, 30];
      if (x >= 130 && x < 150 && y >= 10 && y < 40) return [210, 30, 30];
      const g = 110 + ((x * 7 + y * 13) % 23);
      return [g, g, g];
    });
    const hole = square(60, 40, 36);
    const source = new Uint8Array(W * H).fill(1);
    for (let y = 40; y < 76; y++) for (let x = 44; x < 60; x++) source[y * W + x] = 0;
    const out = patchFill(img, hole, { source, seed: 5 });
    expect(holeShare(hole, (i) => out.data[3 * i]! > 150 && out.data[3 * i + 1]! < 90)).toBeLessThan(0.02);
  });

  it('with sourcesPerHole, decides the structure where enough whole source patches are, not from a few in the corners', () => {
    // A grey frame 12 px wide around a big hole, with white 24 px squares in its corners: at the
    // 40-px level the frame is 3 px wide (no whole 5x5 patch in it) and only the corners hold whole
    // patches, so the hole was seeded white and every finer level refined white (the white hood
    // over s6-left's blinds). Most of the hole's border is grey.
    const data = new Uint8Array(W * H * 3), hole = new Uint8Array(W * H);
    const corner = (x: number, y: number) => (x < 24 || x >= W - 24) && (y < 24 || y >= H - 24);
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        data.fill(corner(x, y) ? 250 : 110 + ((x * 7 + y * 13) % 5) * 8, 3 * i, 3 * i + 3);
        if (x >= 12 && x < W - 12 && y >= 12 && y < H - 12 && !corner(x, y)) hole[i] = 1;
      }
    }
    const white = (sourcesPerHole: number) => {
      const out = patchFill({ data, width: W, height: H }, hole, { seed: 3, sourcesPerHole });
      return holeShare(hole, (i) => out.data[3 * i]! > 200);
    };
    expect(white(0)).toBeGreaterThan(0.8);
    expect(white(1)).toBeLessThan(0.5);
  });

  it('returns the picture as it was when nothing may be copied', () => {
    const hole = square(10, 10, 20);
    const out = patchFill(stripes, hole, { source: new Uint8Array(W * H), seed: 1 });
    expect(Buffer.from(out.data).equals(Buffer.from(stripes.data))).toBe(true);
  });
});

describe('componentsTouching', () => {
  it('keeps the parts that touch the seed and drops the others', () => {
    const mask = new Uint8Array(W * H);
    const a = square(10, 10, 10), b = square(50, 50, 10);
    for (let i = 0; i < mask.length; i++) mask[i] = a[i]! | b[i]!;
    const seed = new Uint8Array(W * H);
    seed[15 * W + 15] = 1;
    const kept = componentsTouching(mask, seed, W, H);
    let inA = 0, inB = 0;
    for (let i = 0; i < kept.length; i++) {
      inA += kept[i]! & a[i]!;
      inB += kept[i]! & b[i]!;
    }
    expect(inA).toBe(100);
    expect(inB).toBe(0);
  });
});

describe('patchFill locality', () => {
  it('copies from nearer places when asked to prefer nearby sources', () => {
    // Noise everywhere fits a hole equally badly from anywhere; the blue channel is the column
    // (x / 2), so a filled pixel's blue says which column it was copied from. Without locality the
    // sources are spread over the region; with it they lie nearer the hole pixel they fill.
    const hash = (x: number, y: number, s: number) => {
      let h = Math.imul((x * 73856093) ^ (y * 19349663) ^ (s * 83492791), 0x27d4eb2d);
      h ^= h >>> 15;
      return (h >>> 0) % 256;
    };
    const noise = image((x, y) => [hash(x, y, 1), hash(x, y, 2), Math.round(x / 2)]);
    const hole = new Uint8Array(W * H);
    for (let y = 45; y < 75; y++) for (let x = 65; x < 95; x++) hole[y * W + x] = 1;
    const meanOffset = (locality: number) => {
      let d = 0, n = 0;
      for (const seed of [1, 2, 3, 4, 5]) {
        const out = patchFill(noise, hole, { seed, locality });
        for (let i = 0; i < hole.length; i++) if (hole[i]) (d += Math.abs(2 * out.data[3 * i + 2]! - (i % W))), n++;
      }
      return d / n;
    };
    const far = meanOffset(0), near = meanOffset(5000);
    expect(near).toBeLessThan(0.8 * far);
  });
});

describe('patchFill blend', () => {
  // A region larger than the search cap: the finer levels copy through the upsampled field, in
  // blocks of 2^k pixels that meet in seams where the field changes.
  const BW = 640, BH = 480;
  const hole = new Uint8Array(BW * BH);
  for (let y = 160; y < 320; y++) for (let x = 240; x < 400; x++) hole[y * BW + x] = 1;
  const picture = (value: (x: number, y: number) => number): RgbImage => {
    const data = new Uint8Array(BW * BH * 3);
    for (let y = 0; y < BH; y++) for (let x = 0; x < BW; x++) data.fill(value(x, y), 3 * (y * BW + x), 3 * (y * BW + x) + 3);
    return { data, width: BW, height: BH };
  };
  /** Mean of the largest 1% of steps between neighbouring pixels inside the hole. */
  const worstSteps = (img: RgbImage) => {
    const steps: number[] = [];
    for (let y = 161; y < 319; y++) {
      for (let x = 241; x < 399; x++) {
        const i = y * BW + x;
        steps.push(Math.abs(img.data[3 * i]! - img.data[3 * i + 3]!), Math.abs(img.data[3 * i]! - img.data[3 * (i + BW)]!));
      }
    }
    const top = steps.sort((a, b) => a - b).slice(Math.floor(0.99 * steps.length));
    return top.reduce((a, b) => a + b, 0) / top.length;
  };

  it("cross-fades the copied blocks where the field changes: no steps beyond the texture's own", () => {
    // A smooth texture whose steps between neighbours are at most ~6 levels.
    const smooth = picture((x, y) => Math.round(120 + 40 * Math.sin(x / 11 + Math.sin(y / 17)) + 30 * Math.sin(y / 8 + x / 29)));
    const own = worstSteps(smooth);
    const copied = worstSteps(patchFill(smooth, hole, { seed: 1, searchSide: 128 }));
    const blended = worstSteps(patchFill(smooth, hole, { seed: 1, searchSide: 128, blend: true }));
    // Without the blend the blocks meet in seams steeper than anything in the texture.
    expect(copied).toBeGreaterThan(1.5 * own);
    expect(blended).toBeLessThan(0.75 * copied);
    expect(blended).toBeLessThan(1.3 * own);
  });

  it('keeps stripes sharp and in phase (a coherent field: the neighbours agree)', () => {
    const band = (x: number) => (Math.floor(x / 5) % 2 ? 225 : 25);
    const out = patchFill(picture(band), hole, { seed: 2, searchSide: 128, blend: true });
    expect(holeShare(hole, (i) => Math.abs(out.data[3 * i]! - band(i % BW)) < 60)).toBeGreaterThan(0.85);
  });
});
