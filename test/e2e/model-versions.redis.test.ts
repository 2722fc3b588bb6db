// The imported model versions through the task API (HTTP -> Redis -> worker threads -> files), on
// the astronaut photo: each output is checked for what it should say about her.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let token: string;
const id = (name: string) => h.services.registry.byName(name)!.id;

beforeAll(async () => {
  h = await startHarness();
  ({ token } = await h.user(1000));
});
afterAll(() => h?.close());

async function run(version: string, image = '/files/astronaut.png') {
  const r = await h.call('POST', '/api/tasks/v1/create', { token, body: { version: id(version), input: { image: h.fixtures.url(image) } } });
  expect(r.status).toBe(200);
  return h.waitForTask(token, r.json.result.task_id, undefined, 60_000);
}

/** A grey PNG's single channel (sharp widens grey to RGB on raw output unless asked not to). */
async function grey(buf: Buffer) {
  expect((await sharp(buf).metadata()).channels).toBe(1);
  return sharp(buf).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
}

async function file(url: string) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

// Her face spans roughly x 172-277, y 73-178 (BlazeFace box) in the 512x512 photo.
const inFace = (x: number, y: number) => x > 150 && x < 300 && y > 50 && y < 200;

describe('imported model versions via the task API', () => {
  it('face-landmarks: 468 landmarks inside her face, with stage timings', async () => {
    const t = await run('face-landmarks-facemesh');
    expect(t.status).toBe('succeeded');
    expect(t.logs).toMatch(/^inference: /m);
    const j = JSON.parse((await file(t.output[0])).toString());
    expect(j.faces).toHaveLength(1);
    const lm = j.faces[0].landmarks as Array<[number, number, number]>;
    expect(lm).toHaveLength(468);
    expect(lm.filter(([x, y]) => inFace(x, y)).length).toBeGreaterThan(460);
    // Landmark 1 is the nose tip, landmark 152 the chin: the chin is below the nose.
    expect(lm[152]![1]).toBeGreaterThan(lm[1]![1]);
  });

  it('face-parsing: hair above the face, skin on it, masks at full resolution', async () => {
    const t = await run('face-parsing-bisenet');
    expect(t.status).toBe('succeeded');
    const names = t.output.map((u: string) => u.split('/').pop());
    expect(names).toEqual(['parsing.json', 'labels.png', 'hair_mask.png', 'face_mask.png', 'preview.jpg']);
    const j = JSON.parse((await file(t.output[0])).toString());
    expect(j.fractions.hair).toBeGreaterThan(0.05);
    expect(j.fractions.skin).toBeGreaterThan(0.03);
    const labels = await grey(await file(t.output[1]));
    expect([labels.info.width, labels.info.height, labels.info.channels]).toEqual([512, 512, 1]);
    const at = (x: number, y: number) => labels.data[y * 512 + x]!;
    expect(at(225, 150)).not.toBe(17); // her cheek/nose area is not hair
    // Hair (class 17) lies mostly above the eyes (y ~ 110).
    let above = 0, below = 0;
    for (let y = 0; y < 512; y++) for (let x = 0; x < 512; x++) if (at(x, y) === 17) (y < 110 ? above++ : below++);
    expect(above).toBeGreaterThan(below);
    const hair = await grey(await file(t.output[2]));
    expect(hair.info.channels).toBe(1);
    const soft = [...hair.data].filter((v) => v > 0 && v < 255).length;
    expect(soft).toBeGreaterThan(0); // feathered edges, not a hard cut-out
  });

  it('face-parsing: a photo without a face fails with a clear error', async () => {
    const noFace = await sharp('test/fixtures/astronaut.png').extract({ left: 0, top: 300, width: 512, height: 212 }).png().toBuffer();
    const t = await run('face-parsing-bisenet', h.fixtures.serve('noface.png', noFace));
    expect(t.status).toBe('failed');
    expect(t.error).toBe('NO_FACE_FOUND: no face found in the image');
  });

  it.each(['person-segmentation-selfie', 'person-segmentation-meet'])('%s: a soft mask covering her, transparent cut-out', async (v) => {
    const t = await run(v);
    expect(t.status).toBe('succeeded');
    const j = JSON.parse((await file(t.output[0])).toString());
    expect(j.person_fraction).toBeGreaterThan(0.2);
    expect(j.person_fraction).toBeLessThan(0.85);
    const mask = await grey(await file(t.output[1]));
    expect([mask.info.width, mask.info.height, mask.info.channels]).toEqual([512, 512, 1]);
    expect(mask.data[150 * 512 + 225]).toBeGreaterThan(200); // her face
    expect(mask.data[20 * 512 + 480]).toBeLessThan(60); // the backdrop, top right
    const cutout = await sharp(await file(t.output[2])).metadata();
    expect([cutout.channels, cutout.hasAlpha]).toEqual([4, true]);
  });

  it.each(['pose-movenet-lightning', 'pose-movenet-thunder'])('%s: nose and eyes on her face, shoulders below it', async (v) => {
    const t = await run(v);
    expect(t.status).toBe('succeeded');
    const j = JSON.parse((await file(t.output[0])).toString());
    const k = j.keypoints;
    for (const name of ['nose', 'left_eye', 'right_eye']) expect(inFace(k[name].x, k[name].y)).toBe(true);
    expect(k.left_shoulder.y).toBeGreaterThan(k.nose.y + 50);
    expect(k.right_shoulder.y).toBeGreaterThan(k.nose.y + 50);
    // Her left shoulder is on the image's right.
    expect(k.left_shoulder.x).toBeGreaterThan(k.right_shoulder.x);
  });

  it('hairstyle: a task with image URLs makes num_outputs pictures the size of the photo', async () => {
    const r = await h.call('POST', '/api/tasks/v1/create', {
      token,
      body: { version: id('hairstyle-bisenet'), input: { image_files: [h.fixtures.url('/files/astronaut.png')], hair_color: 'green', hairstyle: 'short curly', num_outputs: 2 } },
    });
    expect(r.status).toBe(200);
    expect(r.json.result.task_cost).toBe(6);
    const t = await h.waitForTask(token, r.json.result.task_id, undefined, 60_000);
    expect(t.status).toBe('succeeded');
    expect(t.logs).toMatch(/chosen: image 1/);
    const pics = t.output.filter((u: string) => /result-\d\.jpg$/.test(u));
    expect(pics).toHaveLength(2);
    for (const u of pics) expect(await sharp(await file(u)).metadata()).toMatchObject({ width: 512, height: 512, format: 'jpeg' });
  }, 60_000);

  it('hairstyle: refuses a stored-file reference from a task API caller', async () => {
    const r = await h.call('POST', '/api/tasks/v1/create', {
      token,
      body: { version: id('hairstyle-bisenet'), input: { image_files: [`blob:tasks/${'a'.repeat(32)}/inputs/1.jpg`], hair_color: 'red' } },
    });
    expect(r.status).toBe(422);
    expect(r.json.message.en).toMatch(/input\.image_files\[0\]: only http\(s\) URLs are allowed/);
  });

  it('face-detection via the TF.js import finds the same face as the ONNX original', async () => {
    const a = JSON.parse((await file((await run('face-detection-blazeface')).output[0])).toString()).faces;
    const b = JSON.parse((await file((await run('face-detection-blazeface-tfjs')).output[0])).toString()).faces;
    expect(b).toHaveLength(a.length);
    expect(Math.abs(a[0].box.x - b[0].box.x)).toBeLessThan(3);
    expect(Math.abs(a[0].box.width - b[0].box.width)).toBeLessThan(3);
  });
});
