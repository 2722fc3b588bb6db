// A kept lock's cut end tapers into the fill (src/pipelines/hairstyle/render.ts finishLocks), on a
// synthetic picture: a vertical dark lock on a light forehead, kept below a cut line and removed
// (the hole, already filled with the forehead's colour) above it. Just past the cut the fill
// carries some of the lock, less further on, none past the taper's reach; the kept lock is listed
// for the dye, tapered pixels with less coverage; the photo it reads is left as it was.
import { describe, expect, it } from 'vitest';
import { finishLocks } from '../../src/pipelines/hairstyle/removal.ts';
import type { HeadAnalysis } from '../../src/pipelines/hairstyle/render.ts';
import type { Anchors } from '../../src/pipelines/hairstyle/frame.ts';

const W = 200, H = 200;
const frame = { ox: 100, oy: 100, ux: 1, uy: 0, scale: 200 };
// Brows low (v 0.4, y 180) so the whole picture lies above them: the dye's fade does not reach it.
const anchors = { forehead: -0.45, midline: 0, brows: 0.4, ears: 0.1, chin: 0.75, halfWidth: 0.5, turn: 0, ovalHalfWidth: () => 0.5 } as Anchors;
const SKIN = [210, 170, 140], LOCK = [30, 25, 22];
const CUT = 100;

function scene() {
  const photo = new Uint8Array(W * H * 3), filled = new Uint8Array(W * H * 3);
  const hair = new Uint8Array(W * H), hole = new Uint8Array(W * H), locks = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x, onLock = x >= 90 && x < 110;
      const c = onLock ? LOCK : SKIN;
      for (let k = 0; k < 3; k++) (photo[3 * i + k] = c[k]!), (filled[3 * i + k] = onLock && y < CUT ? SKIN[k]! : c[k]!);
      if (onLock) hair[i] = 255;
      if (onLock && y < CUT) hole[i] = 1;
      if (onLock && y >= CUT) locks[i] = 1;
    }
  }
  const an = { image: { width: W, height: H, data: photo }, frame, anchors, hair, protect: new Uint8Array(W * H), others: new Uint8Array(W * H), hairColour: [30, 25, 22] as const } as unknown as HeadAnalysis;
  return { an, filled: { width: W, height: H, data: filled }, hole, locks };
}

const red = (d: Uint8Array, x: number, y: number) => d[3 * (y * W + x)]!;

describe("a kept lock's cut end", () => {
  it('tapers into the fill: darker just past the cut, less further, untouched past the reach; listed for the dye', () => {
    const { an, filled, hole, locks } = scene();
    const photo = Buffer.from(an.image.data);
    const kept = finishLocks(an, filled, hole, locks);
    // The taper reaches 0.05 face widths: 10 px here.
    const near = red(filled.data, 100, CUT - 2), mid = red(filled.data, 100, CUT - 6), far = red(filled.data, 100, CUT - 12);
    expect(near).toBeLessThan(SKIN[0]! - 60);
    expect(mid).toBeGreaterThan(near);
    expect(mid).toBeLessThan(SKIN[0]!);
    expect(far).toBe(SKIN[0]);
    // Beside the lock (not in the hole): untouched.
    expect(red(filled.data, 60, CUT - 2)).toBe(SKIN[0]);
    expect(Buffer.from(an.image.data).equals(photo)).toBe(true);
    // Listed for the dye: the kept lock at full coverage, its taper at less.
    expect(kept).not.toBeNull();
    const cover = new Map([...kept!.at].map((i, k) => [i, kept!.alpha[k]!]));
    expect(cover.get((CUT + 5) * W + 100)).toBeCloseTo(1, 2);
    const tapered = cover.get((CUT - 2) * W + 100)!;
    expect(tapered).toBeGreaterThan(0.3);
    expect(tapered).toBeLessThan(1);
    expect(cover.has((CUT - 12) * W + 100)).toBe(false);
  });
});
