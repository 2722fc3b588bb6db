// A lock kept over the forehead comes out from under the new hair (src/pipelines/hairstyle/render.ts
// removal, keepLocks), on a synthetic head: two vertical dark locks run from over the face below
// the brows up across the forehead; the new hair covers the top of the picture only above the
// first. The first is kept up to the new hair (and listed as a kept lock); the second, beside the
// new hair's side, is removed above the brows (in the hole): kept, it stood beside the new hair as
// a dark slab cut square at the natural hairline and at the face's width bound (s6-centre-right's
// Crew Cut, stop 41).
import { describe, expect, it } from 'vitest';
import { removal } from '../../src/pipelines/hairstyle/removal.ts';
import type { HeadAnalysis } from '../../src/pipelines/hairstyle/render.ts';
import type { Anchors } from '../../src/pipelines/hairstyle/frame.ts';

const W = 200, H = 200;
// u = (x - 100) / 200, v = (y - 100) / 200.
const frame = { ox: 100, oy: 100, ux: 1, uy: 0, scale: 200 };
// Forehead landmark at y 40, natural hairline 0.1 above it (y 20), brows at y 120.
const anchors = { forehead: -0.3, midline: 0, brows: 0.1, ears: 0.2, chin: 0.45, halfWidth: 0.4, turn: 0, ovalHalfWidth: () => 0.4 } as unknown as Anchors;
const SKIN = [210, 170, 140], LOCK = [30, 25, 22];
// The locks' columns: under the new hair (x 60-70) and beside it (x 140-150).
const UNDER = [60, 70], BESIDE = [140, 150];

function scene() {
  const photo = new Uint8Array(W * H * 3), hair = new Uint8Array(W * H), covered = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      const onLock = (x >= UNDER[0]! && x < UNDER[1]!) || (x >= BESIDE[0]! && x < BESIDE[1]!);
      const c = onLock ? LOCK : SKIN;
      for (let k = 0; k < 3; k++) photo[3 * i + k] = c[k]!;
      if (onLock) hair[i] = 255;
      // The new hair: over the top of the picture down to the natural hairline, left of x 100 only.
      if (y < 20 && x < 100) covered[i] = 1;
    }
  }
  const an = { image: { width: W, height: H, data: photo }, frame, anchors, hair, protect: new Uint8Array(W * H), others: new Uint8Array(W * H), hairColour: [30, 25, 22] as const } as unknown as HeadAnalysis;
  return { an, covered };
}

describe('a lock kept over the forehead', () => {
  it('is kept where it comes out from under the new hair, removed above the brows beside it', () => {
    const { an, covered } = scene();
    const { hole, locks } = removal(an, covered, 'black');
    expect(locks).not.toBeNull();
    // Well above the brows (y 60), between the natural hairline and the brows.
    expect(locks![60 * W + 65]).toBe(1);
    expect(hole[60 * W + 65]).toBe(0);
    expect(locks![60 * W + 145]).toBe(0);
    expect(hole[60 * W + 145]).toBe(1);
  });
});
