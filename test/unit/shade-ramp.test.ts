// steps/color.ts shadeRamp: the hair colour's lookup from shade (-1..1) to sRGB. Grey and white
// short hair's shadows fall towards the dark of unpigmented hair (their `depth`), the pink, blue
// and green dyes' darker in their own hue (`dyeShadow`); their lit half, long styles' whole ramp
// and every other colour's keep the target's lightness swing.
import { describe, expect, it } from 'vitest';
import { HAIR_COLOR_TARGETS, shadeRamp, srgbToLab } from '../../src/steps/color.ts';
import { HAIR_COLORS } from '../../src/domain/job.ts';

/** CIE L* of the ramp's entry for shade `sh`. */
const L = (ramp: Uint8Array, sh: number) => {
  const k = Math.round((sh + 1) * 127.5);
  return srgbToLab(ramp[3 * k]!, ramp[3 * k + 1]!, ramp[3 * k + 2]!)[0];
};

describe('shadeRamp', () => {
  it('takes grey and white hair deep into the dark below shade 0, its lit half at the target', () => {
    for (const c of ['grey', 'white'] as const) {
      const ramp = shadeRamp(c);
      const L0 = srgbToLab(...HAIR_COLOR_TARGETS[c].srgb)[0];
      // Within the swing alone the deepest shadow was L0 - swing (white: 80).
      expect(L(ramp, -0.6), c).toBeLessThan(L0 - HAIR_COLOR_TARGETS[c].swing - 10);
      expect(Math.abs(L(ramp, 0) - L0), c).toBeLessThan(1);
      expect(Math.abs(L(ramp, 0.5) - (L0 + 0.5 * HAIR_COLOR_TARGETS[c].swing)), c).toBeLessThan(1.5);
    }
  });

  it('keeps grey and white within their swing for a long style (deep = false)', () => {
    for (const c of ['grey', 'white'] as const) {
      const L0 = srgbToLab(...HAIR_COLOR_TARGETS[c].srgb)[0];
      expect(L(shadeRamp(c, 0, 1, 0, false), -0.6), c).toBeGreaterThan(L0 - 0.6 * HAIR_COLOR_TARGETS[c].swing - 1.5);
    }
  });

  it("takes a dye's short-style shadows darker in its own hue, and not a long style's", () => {
    for (const c of ['pink', 'blue', 'green', 'purple'] as const) {
      const t = HAIR_COLOR_TARGETS[c];
      const L0 = srgbToLab(...t.srgb)[0];
      const ramp = shadeRamp(c);
      // Within the swing alone the shadow at -0.6 was L0 - 0.6 swing.
      expect(L(ramp, -0.6), c).toBeLessThan(L0 - 0.6 * t.swing - 15);
      expect(Math.abs(L(ramp, 0.5) - (L0 + 0.5 * t.swing)), c).toBeLessThan(1.5);
      // The hue of a mid shadow stays the target's (within 12 degrees), its chroma lower.
      const k = Math.round((-0.3 + 1) * 127.5);
      const [, a, b] = srgbToLab(ramp[3 * k]!, ramp[3 * k + 1]!, ramp[3 * k + 2]!);
      const [, a0, b0] = srgbToLab(...t.srgb);
      const dh = Math.abs(((Math.atan2(b, a) - Math.atan2(b0, a0)) * 180) / Math.PI);
      expect(Math.min(dh, 360 - dh), c).toBeLessThan(12);
      expect(L(shadeRamp(c, 0, 1, 0, false), -0.6), c).toBeGreaterThan(L0 - 0.6 * t.swing - 1.5);
    }
  });

  it('keeps the other colours within their swing', () => {
    for (const c of HAIR_COLORS.filter((c) => !['grey', 'white', 'pink', 'blue', 'green', 'purple'].includes(c))) {
      const ramp = shadeRamp(c);
      const L0 = srgbToLab(...HAIR_COLOR_TARGETS[c].srgb)[0];
      expect(L(ramp, -1), c).toBeGreaterThan(Math.max(2, L0 - HAIR_COLOR_TARGETS[c].swing) - 1.5);
    }
  });
});
