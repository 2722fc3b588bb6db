// The face-detection pipeline on real photos through the real BlazeFace graph (CPU provider),
// called directly: no Redis, no HTTP.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRegistry } from '../../src/models/registry.ts';
import { SessionCache } from '../../src/models/sessions.ts';
import { faceDetection } from '../../src/pipelines/face-detection/pipeline.ts';

const registry = loadRegistry(path.resolve('models'));
const version = registry.byName('face-detection-blazeface')!;
const sessions = new SessionCache(registry, { provider: 'cpu', intraOpThreads: 1, allowSpinning: false, warn: () => {} });
afterAll(() => sessions.releaseAll());

async function detect(bytes: Uint8Array, input: Record<string, unknown> = {}) {
  const r = await faceDetection.run(
    { params: version.manifest.params, session: (g) => sessions.get(version.id, g), maxPixels: 40e6 },
    { image: 'http://fixture/x', ...input },
    { image: [bytes] },
  );
  return { ...r, json: JSON.parse(Buffer.from(r.files[0]!.data).toString()) };
}

const astronaut = fs.readFileSync('test/fixtures/astronaut.png');

describe('face detection pipeline', () => {
  it('reports stage timings and the model time', async () => {
    const r = await detect(astronaut);
    expect(r.stages.map(([s]) => s)).toEqual(['decode', 'preprocess', 'inference', 'postprocess', 'render']);
    expect(r.predictMs).toBeGreaterThan(0);
    expect(r.files.map((f) => [f.name, f.contentType])).toEqual([['faces.json', 'application/json'], ['preview.jpg', 'image/jpeg']]);
  });

  it('gives the same face in original pixels whatever the letterbox (padded to a wide canvas)', async () => {
    const base = (await detect(astronaut)).json.faces[0];
    // Same photo placed at x=300 on a 1200x512 canvas: the box must move by exactly that, within a few px.
    const wide = await sharp({ create: { width: 1200, height: 512, channels: 3, background: '#000' } })
      .composite([{ input: astronaut, left: 300, top: 0 }])
      .png()
      .toBuffer();
    const moved = (await detect(wide)).json.faces[0];
    expect(moved.box.x).toBeGreaterThan(base.box.x + 300 - 8);
    expect(moved.box.x).toBeLessThan(base.box.x + 300 + 8);
    expect(Math.abs(moved.box.y - base.box.y)).toBeLessThan(8);
  });

  it('applies EXIF orientation before detecting (a sideways JPEG tagged to stand upright)', async () => {
    const upright = (await detect(astronaut)).json;
    // Rotate pixels 90 deg counter-clockwise and tag orientation 6 (rotate 90 CW to display).
    const sideways = await sharp(astronaut).rotate(-90).jpeg({ quality: 95 }).withMetadata({ orientation: 6 }).toBuffer();
    const r = (await detect(sideways)).json;
    expect([r.width, r.height]).toEqual([upright.width, upright.height]);
    expect(r.faces).toHaveLength(1);
    expect(Math.abs(r.faces[0].box.x - upright.faces[0].box.x)).toBeLessThan(8);
    expect(Math.abs(r.faces[0].box.y - upright.faces[0].box.y)).toBeLessThan(8);
  });

  it('finds no face in a photo without one', async () => {
    const noFace = await sharp(astronaut).extract({ left: 0, top: 300, width: 512, height: 212 }).png().toBuffer();
    expect((await detect(noFace)).json.faces).toEqual([]);
  });

  it('draws the boxes into the preview (pixels change only near the face)', async () => {
    const r = await detect(astronaut);
    const preview = await sharp(Buffer.from(r.files[1]!.data)).raw().toBuffer({ resolveWithObject: true });
    const orig = await sharp(astronaut).removeAlpha().raw().toBuffer();
    const box = r.json.faces[0].box;
    const diffAt = (x: number, y: number) => {
      const o = (y * 512 + x) * 3;
      return Math.abs(preview.data[o + 1]! - orig[o + 1]!);
    };
    // The green outline sits on the box's top edge; far corners only carry JPEG noise.
    expect(diffAt(Math.round(box.x + box.width / 2), Math.round(box.y))).toBeGreaterThan(60);
    expect(diffAt(5, 500)).toBeLessThan(30);
  });
});
