// warp.ts stripQuads: a strip's quads map the body onto the garment evenly across each row, and
// carry the end stations on straight (a narrowing strip's bilinear extrapolation blew up).
import { describe, expect, it } from 'vitest';
import { steadyEdges, stripQuads } from '../../src/pipelines/tryon/warp.ts';
import type { Strip } from '../../src/pipelines/tryon/parts.ts';

/** A vertical strip: centre x = cx, stations at ys, half-widths w (one per station, both sides). */
function strip(cx: number, ys: number[], w: number[]): Strip {
  return { centre: ys.map((y) => [cx, y]), left: ys.map((y, i) => [cx - w[i]!, y]), right: ys.map((y, i) => [cx + w[i]!, y]) };
}

describe('stripQuads', () => {
  const ys = [0, 100, 200, 300];
  // The garment: half-width 50 everywhere. The body: its edge swings out to 150 at one station.
  const from = strip(100, ys, [50, 50, 50, 50]);
  const to = strip(500, ys.map((y) => y + 1000), [100, 100, 150, 100]);
  const map = stripQuads(from, to);
  const at = (x: number, y: number) => {
    const out = new Float64Array(2);
    map(x, y, out, 0);
    return [out[0]!, out[1]!] as const;
  };

  it('maps the stations and their edges onto the garment', () => {
    expect(at(500, 1200)).toEqual([100, 200]);
    const [x, y] = at(350, 1200);
    expect(x).toBeCloseTo(50, 6);
    expect(y).toBeCloseTo(200, 6);
  });

  it('stretches a row evenly between the centre and the edge (no bunching at the edge)', () => {
    // At the bulging station, every 15 body pixels across are 5 garment pixels.
    const xs = [500, 485, 470, 455, 440, 425, 410, 395, 380, 365, 350].map((x) => at(x, 1200)[0]);
    for (let i = 1; i < xs.length; i++) expect(xs[i - 1]! - xs[i]!).toBeCloseTo(5, 6);
  });

  it('carries the end stations on straight, also where the strip narrows to them', () => {
    const narrowing = stripQuads(from, strip(500, ys.map((y) => y + 1000), [100, 100, 100, 10]));
    const out = new Float64Array(2);
    narrowing(505, 1340, out, 0);
    // Below the last station (y 1300), half of its half-width (10) out: the garment's row below its
    // last station, half of its half-width (50) out.
    expect(out[0]).toBeCloseTo(125, 6);
    expect(out[1]).toBeCloseTo(340, 6);
  });
});

describe('steadyEdges', () => {
  it("moves one station's edge that jumps out back to its neighbours' distance", () => {
    const s = steadyEdges(strip(0, [0, 100, 200, 300, 400], [100, 100, 180, 100, 100]));
    expect(s.left[2]![0]).toBeCloseTo(-100, 6);
    expect(s.right[2]![0]).toBeCloseTo(100, 6);
    expect(s.left[0]![0]).toBeCloseTo(-100, 6);
  });
});
