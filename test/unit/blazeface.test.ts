// Anchor decoding and weighted NMS on synthetic model outputs, and the letterbox mapping.
import { describe, expect, it } from 'vitest';
import { BLAZEFACE_BACK_LAYERS, decodeLayer, makeAnchors, weightedNms, type RawDetection } from '../../src/steps/blazeface.ts';
import { boxIou } from '../../src/steps/geometry.ts';
import { toImageSpace } from '../../src/steps/face-detection.ts';
import { letterboxGeometry } from '../../src/imaging/image.ts';

const det = (cx: number, cy: number, w: number, score: number, kp = 0): RawDetection => ({
  cx, cy, w, h: w, score, keypoints: new Float32Array(12).fill(kp),
});

describe('anchors', () => {
  it('has 16x16x2 + 8x8x6 = 896 anchors, cell-major, centred in their cells', () => {
    const [a16, a8] = BLAZEFACE_BACK_LAYERS.map(makeAnchors);
    expect(a16!.length / 2 + a8!.length / 2).toBe(896);
    expect([a16![0], a16![1], a16![2], a16![3]]).toEqual([0.5 / 16, 0.5 / 16, 0.5 / 16, 0.5 / 16]); // 2 anchors in cell (0,0)
    expect([a16![4], a16![5]]).toEqual([1.5 / 16, 0.5 / 16]); // next cell to the right
    const last = a8!.length - 2;
    expect([a8![last], a8![last + 1]]).toEqual([7.5 / 8, 7.5 / 8]);
  });
});

describe('decodeLayer', () => {
  it('applies sigmoid, threshold and offsets in input pixels', () => {
    const anchors = makeAnchors({ cells: 2, perCell: 1 }); // centres .25/.75
    const scores = new Float32Array([-5, 3, -5, -5]);
    const boxes = new Float32Array(4 * 16);
    boxes.set([12.8, -25.6, 64, 32, 0, 0, 25.6, 0, 0, 0, 0, 0, 0, 0, 0, 0], 16); // anchor 1: (.75,.25)
    const out: RawDetection[] = [];
    decodeLayer(anchors, scores, boxes, 256, 0.5, out);
    expect(out).toHaveLength(1);
    const d = out[0]!;
    expect(d.score).toBeCloseTo(1 / (1 + Math.exp(-3)), 6);
    expect(d.cx).toBeCloseTo(0.75 + 0.05, 6);
    expect(d.cy).toBeCloseTo(0.25 - 0.1, 6);
    expect([d.w, d.h]).toEqual([0.25, 0.125]);
    expect(d.keypoints[2]).toBeCloseTo(0.85, 6);
  });

  it('refuses outputs whose sizes disagree with the anchors', () => {
    expect(() => decodeLayer(makeAnchors({ cells: 2, perCell: 1 }), new Float32Array(3), new Float32Array(48), 256, 0.5, [])).toThrow(/disagree/);
  });
});

describe('weighted NMS', () => {
  it('merges overlapping detections into a score-weighted mean and keeps separate faces', () => {
    const a = det(0.3, 0.3, 0.2, 0.9, 1);
    const b = det(0.32, 0.3, 0.2, 0.6, 2); // overlaps a
    const c = det(0.8, 0.8, 0.1, 0.7, 3); // far away
    const box = (d: RawDetection) => ({ x: d.cx - d.w / 2, y: d.cy - d.h / 2, width: d.w, height: d.h });
    expect(boxIou(box(a), box(b))).toBeGreaterThan(0.3);
    const out = weightedNms([b, c, a], 0.3, 10);
    expect(out).toHaveLength(2);
    expect(out[0]!.score).toBe(0.9);
    expect(out[0]!.cx).toBeCloseTo((0.3 * 0.9 + 0.32 * 0.6) / 1.5, 6);
    expect(out[0]!.keypoints[0]).toBeCloseTo((1 * 0.9 + 2 * 0.6) / 1.5, 6);
    expect(out[1]!.cx).toBeCloseTo(c.cx, 12);
    expect(weightedNms([a, c], 0.3, 1)).toHaveLength(1);
  });
});

describe('letterbox mapping', () => {
  it('maps a letterboxed box back to original pixels (wide image: bars top and bottom)', () => {
    const g = letterboxGeometry(1000, 500, 256); // scale .256, 256x128 content, padY 64
    expect([g.w, g.h, g.padX, g.padY]).toEqual([256, 128, 0, 64]);
    // A face at original (500, 250) with width 100 -> letterbox centre (128, 128) px, size 25.6 px.
    const face = toImageSpace(det(0.5, 0.5, 25.6 / 256, 0.9), g, 1000, 500);
    expect(face.box).toEqual({ x: 450, y: 200, width: 100, height: 100 });
  });

  it('clips boxes to the image', () => {
    const g = letterboxGeometry(256, 256, 256);
    const face = toImageSpace(det(0.02, 0.5, 0.2, 0.9), g, 256, 256);
    expect(face.box.x).toBe(0);
    expect(face.box.width).toBeCloseTo((0.02 + 0.1) * 256, 1);
  });
});
