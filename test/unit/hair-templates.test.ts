// Hairstyle templates (pipelines/hairstyle/templates.ts) drawn along their flow: a template's strand
// coordinate (`stream`, or the position turned by the flow's angle) must stay constant along the
// flow, or the strands cross each other and show as contour bands. Checked by following the flow's
// tangent from points on Long Wave's lengths: its stream stays put, where the turned position (what
// it drew before) drifts by many strands.
import { describe, expect, it } from 'vitest';
import type { Anchors } from '../../src/pipelines/hairstyle/frame.ts';
import { TEMPLATES, variantFor, type TemplateContext } from '../../src/pipelines/hairstyle/templates.ts';

const anchors: Anchors = { forehead: -0.45, midline: 0, brows: -0.15, ears: 0.1, chin: 0.75, halfWidth: 0.5, turn: 0, ovalHalfWidth: () => 0.5 };
const ctx: TemplateContext = { a: anchors, p: variantFor(7, 0), px: 1 / 300, lightSide: 0 };

/** The largest change of `coord` along the flow from (u, v), 1.2 face widths down in small steps. */
function drift(coord: (u: number, v: number) => number, u: number, v: number): number {
  const t = TEMPLATES['Long Wave'];
  const start = coord(u, v);
  let worst = 0;
  for (let k = 0; k < 1200; k++) {
    const th = t.flow(u, v, ctx);
    // One step of 0.001 face widths along the strand (its tangent: (sin, cos) in (u, v)).
    u += 0.001 * Math.sin(th);
    v += 0.001 * Math.cos(th);
    worst = Math.max(worst, Math.abs(coord(u, v) - start));
  }
  return worst;
}

describe('Long Wave strands', () => {
  const t = TEMPLATES['Long Wave'];
  const turned = (u: number, v: number) => {
    const th = t.flow(u, v, ctx);
    return u * Math.cos(th) - v * Math.sin(th);
  };
  // Points on the side lengths below the ears, on both sides of the parting.
  const starts: Array<[number, number]> = [[-0.6, 0.3], [-0.45, 0.5], [0.5, 0.3], [0.62, 0.6]];

  it('keep their across-strand coordinate along the flow (no strands crossing: no wood grain)', () => {
    // A strand is about 1/260 face widths across (the renderer's finest fibre): the stream may
    // drift by a small part of one over 1.2 face widths of length.
    for (const [u, v] of starts) expect(drift((a, b) => t.stream!(a, b, ctx), u, v), `${u}, ${v}`).toBeLessThan(0.004);
  });

  it('drifted by tens of strands with the position turned by the flow angle (what drew wood grain)', () => {
    for (const [u, v] of starts) expect(drift(turned, u, v), `${u}, ${v}`).toBeGreaterThan(0.1);
  });
});
