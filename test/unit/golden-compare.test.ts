// The golden-output comparison itself (no models): it tolerates encoder noise and catches changes.
import { describe, expect, it } from 'vitest';
import { compareGolden, type GoldenFile, type ImageDigest } from '../../scripts/lib/golden.ts';

const thumb = (f: (i: number) => number) => Buffer.from(Array.from({ length: 24 * 24 * 3 }, (_, i) => f(i))).toString('base64');
const image = (t: string, width = 64): ImageDigest => ({ type: 'image', width, height: 64, channels: 3, thumb: t });
const golden = (files: GoldenFile['cases'][string]): GoldenFile => ({ version: 'v', algorithm_version: 1, cases: { c: files } });

describe('golden comparison', () => {
  const base = thumb((i) => (i * 7) % 256);
  it('accepts the same outputs and noise within the tolerance', () => {
    const noisy = thumb((i) => Math.min(255, ((i * 7) % 256) + (i % 3)));
    expect(compareGolden(golden({ 'a.png': image(base), 'r.json': { type: 'json', value: { x: 100, s: 'ok' } } }), golden({ 'a.png': image(noisy), 'r.json': { type: 'json', value: { x: 100.5, s: 'ok' } } }))).toEqual([]);
  });
  it('reports a changed picture, size, number, string, list length and file set', () => {
    const shifted = thumb((i) => ((i * 7) % 256) ^ 0x40);
    const diff = compareGolden(
      golden({ 'a.png': image(base), 'b.png': image(base), 'r.json': { type: 'json', value: { x: 100, s: 'ok', l: [1, 2] } }, 'gone.json': { type: 'json', value: 1 } }),
      golden({ 'a.png': image(shifted), 'b.png': image(base, 65), 'r.json': { type: 'json', value: { x: 103, s: 'no', l: [1] } }, 'new.json': { type: 'json', value: 1 } }),
    );
    expect(diff).toEqual([
      expect.stringMatching(/^c\/a\.png: thumbnail differs/),
      'c/b.png: size 64x64 became 65x64',
      'c/gone.json: no longer written',
      'c/new.json: new output file',
      'c/r.json.l: 2 items became 1',
      'c/r.json.s: "ok" became "no"',
      'c/r.json.x: 100 became 103',
    ]);
  });
});
