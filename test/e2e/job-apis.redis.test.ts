// The job APIs end to end: real multipart requests from a real HTTP client (fetch + FormData) to a
// listening server, exact codes for each case, credits charged, refunded, never overdrawn.
import sharp from 'sharp';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../helpers/harness.ts';
import { tshirt } from '../helpers/garments.ts';
import { waitFor } from '../helpers/wait.ts';

const HS = '/api/service/v1/ai-hairstyle';
const TO = '/api/service/v1/ai-virtual-try-on';
let h: Harness;
let small: Buffer; // a 256x256 JPEG portrait
let garment: Buffer; // a PNG "garment"

beforeAll(async () => {
  h = await startHarness({ env: { JOB_FILE_MAX_BYTES: '400000', INPUT_MAX_PIXELS: '4000000' } });
  small = await sharp('test/fixtures/astronaut.png').resize(256).jpeg({ quality: 85 }).toBuffer();
  garment = await sharp({ create: { width: 300, height: 400, channels: 3, background: '#c0392b' } }).png().toBuffer();
});
afterAll(() => h?.close());

type Part = [field: string, value: string | { bytes: Buffer; name: string; type?: string }];

async function post(path: string, parts: Part[], auth?: string | null, init: { body?: string; contentType?: string } = {}) {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = auth;
  let body: FormData | string;
  if (init.body !== undefined) {
    body = init.body;
    headers['content-type'] = init.contentType ?? 'application/json';
  } else {
    const form = new FormData();
    for (const [field, v] of parts) {
      if (typeof v === 'string') form.append(field, v);
      else form.append(field, new Blob([new Uint8Array(v.bytes)], { type: v.type ?? 'application/octet-stream' }), v.name);
    }
    body = form;
  }
  const res = await fetch(h.baseUrl + path, { method: 'POST', headers, body });
  return { status: res.status, json: (await res.json()) as any };
}

async function getJob(path: string, jobId: string, auth: string | null) {
  const res = await fetch(`${h.baseUrl}${path}/get-job/${jobId}`, { headers: auth ? { authorization: auth, accept: 'application/json' } : {} });
  return { status: res.status, json: (await res.json()) as any };
}

const img = (bytes: Buffer, name = 'photo.jpg') => ({ bytes, name, type: 'image/jpeg' });
const hairstyleParts = (extra: Part[] = []): Part[] => [['image_files', img(small)], ['hair_color', 'blonde'], ...extra];
const tryonParts = (extra: Part[] = []): Part[] => [
  ['clothes_image', img(garment, 'shirt.png')],
  ['custom_model', img(small, 'model.jpg')],
  ['clothes_type', 'upper_body'],
  ...extra,
];

/** Tasks (and so jobs) ever queued for a user: their task index. Other tests' jobs do not count. */
async function queuedFor(userId: number): Promise<number> {
  return h.services.redis.zcard(`${h.config.redisKeyPrefix}:user:${userId}:tasks`);
}

describe('create-job and get-job', () => {
  function finished(path: string, jobId: string, token: string) {
    return waitFor(
      async () => {
        const job = await getJob(path, jobId, token);
        if (job.json.code !== 300102) return job;
        expect(job.json.message).toEqual({ en: 'Image generation in progress' });
        return undefined;
      },
      { timeoutMs: 50_000, what: `job ${jobId} to finish` },
    );
  }

  it('hairstyle: accepted (100000), 6 credits per picture, then 300103 with num_outputs pictures', async () => {
    const u = await h.user(100);
    const r = await post(`${HS}/create-job`, hairstyleParts([['num_outputs', '3'], ['hairstyle', 'Mohawk']]), u.token);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ code: 100000, result: { job_id: expect.stringMatching(/^[0-9a-f]{32}$/) }, message: { en: 'Request success' } });
    expect((await h.services.accounts.ledger(u.userId)).find((e) => e.reason === 'job:hairstyle')).toMatchObject({ delta: -18 });

    const job = await finished(HS, r.json.result.job_id, u.token);
    expect(job.status).toBe(200);
    expect(job.json).toMatchObject({ code: 300103, message: { en: 'Image generated successfully' }, result: { job_id: r.json.result.job_id, message: '' } });
    expect(job.json.result.output_image_url).toHaveLength(3);
    expect(await h.services.accounts.balance(u.userId)).toBe(82); // charged, not refunded
    // The pictures and the stored input are served at their URLs, without a token.
    for (const url of job.json.result.output_image_url as string[]) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await sharp(Buffer.from(await res.arrayBuffer())).metadata()).toMatchObject({ format: 'jpeg', width: 256, height: 256 });
    }
    const [url] = job.json.result.input_image_url;
    const file = await fetch(url);
    expect(Buffer.from(await file.arrayBuffer()).equals(small)).toBe(true);
    expect((await fetch(url.replace(/\/[0-9a-f]{32}\/inputs/, `/${'0'.repeat(32)}/inputs`))).status).toBe(404);
  }, 60_000);

  it('hairstyle: a photo without a face fails the job (300104) naming the photo, refunded', async () => {
    const u = await h.user(100);
    const noFace = await sharp(small).extract({ left: 0, top: 170, width: 256, height: 86 }).jpeg().toBuffer();
    const r = await post(`${HS}/create-job`, [['image_files', img(small)], ['image_files', img(noFace, 'back.jpg')], ['hair_color', 'red'], ['num_outputs', '1']], u.token);
    const job = await finished(HS, r.json.result.job_id, u.token);
    expect(job.json).toMatchObject({ code: 300104, message: { en: 'Image generation failed' }, result: { output_image_url: [], message: 'no face found in image 2' } });
    expect(await h.services.accounts.balance(u.userId)).toBe(100);
    expect((await h.services.accounts.ledger(u.userId))[0]).toMatchObject({ delta: 6, reason: 'refund:failed' });
  }, 60_000);

  it('try-on: 100000 with the picture of the person wearing the garment; 8 credits kept', async () => {
    const u = await h.user(100);
    const personPhoto = fs.readFileSync('test/fixtures/person-standing.jpg');
    const r = await post(`${TO}/create-job`, [['clothes_image', img(await tshirt(), 'shirt.png')], ['custom_model', img(personPhoto, 'me.jpg')], ['clothes_type', 'upper_body']], u.token);
    const job = await finished(TO, r.json.result.job_id, u.token);
    expect(job.json).toMatchObject({ code: 100000, message: { en: 'Request success' }, result: { job_id: r.json.result.job_id, message: '' } });
    expect(job.json.result.output_image_url).toHaveLength(1);
    const pic = await fetch(job.json.result.output_image_url[0]);
    expect(await sharp(Buffer.from(await pic.arrayBuffer())).metadata()).toMatchObject({ format: 'jpeg', width: 360, height: 962 });
    expect(await h.services.accounts.balance(u.userId)).toBe(92);
  }, 60_000);

  it('try-on: a model image without a person fails (300104) with the reason, refunded', async () => {
    const u = await h.user(100);
    const r = await post(`${TO}/create-job`, [['clothes_image', img(await tshirt(), 'shirt.png')], ['custom_model', img(await tshirt(), 'shirt-again.png')], ['clothes_type', 'upper_body']], u.token);
    const job = await finished(TO, r.json.result.job_id, u.token);
    expect(job.json).toMatchObject({ code: 300104, result: { output_image_url: [], message: 'no person found in the model image' } });
    expect(await h.services.accounts.balance(u.userId)).toBe(100);
  }, 60_000);

  it('hairstyle: stores the canonical template name for any accepted spelling, default Braided Crown', async () => {
    const u = await h.user(1000);
    const cases: Array<[string | undefined, string]> = [
      [undefined, 'Braided Crown'],
      ['braided crown', 'Braided Crown'],
      ['BRAIDED  CROWN', 'Braided Crown'],
      ['Braied Crown', 'Braided Crown'], // the spec table's spelling, one letter missing
      ['Braided Crwn', 'Braided Crown'],
      ['bombshell curls', 'Bombshell Curls'],
      ['LOWPOLY', 'Lowpoly'],
    ];
    for (const [given, stored] of cases) {
      const r = await post(`${HS}/create-job`, hairstyleParts(given === undefined ? [] : [['hairstyle', given]]), u.token);
      expect(r.json.code).toBe(100000);
      const job = await h.services.jobs.get(r.json.result.job_id);
      expect(job!.params).toEqual({ hair_color: 'blonde', hairstyle: stored, num_outputs: 2 });
    }
  });

  it('try-on: accepted with Bearer too, 8 credits, inputs listed garment first then model', async () => {
    const u = await h.user(100);
    const r = await post(`${TO}/create-job`, tryonParts([['prompt', 'a red shirt'], ['forced_cutting', 'TRUE']]), `Bearer ${u.token}`);
    expect(r.json.code).toBe(100000);
    const job = await h.services.jobs.get(r.json.result.job_id);
    expect(job!.params).toEqual({ clothes_type: 'upper_body', prompt: 'a red shirt', forced_cutting: true });
    expect((await h.services.accounts.ledger(u.userId)).find((e) => e.reason === 'job:tryon')).toMatchObject({ delta: -8 });
    const g = await getJob(TO, r.json.result.job_id, u.token);
    const [first, second] = g.json.result.input_image_url as string[];
    expect(Buffer.from(await (await fetch(first!)).arrayBuffer()).equals(garment)).toBe(true);
    expect(Buffer.from(await (await fetch(second!)).arrayBuffer()).equals(small)).toBe(true);
  });

  it('get-job: unknown, someone else\'s or the other API\'s job -> 400501', async () => {
    const a = await h.user(100);
    const b = await h.user(100);
    const r = await post(`${TO}/create-job`, tryonParts(), a.token);
    for (const [path, auth, id] of [
      [TO, b.token, r.json.result.job_id],
      [HS, a.token, r.json.result.job_id],
      [TO, a.token, 'f'.repeat(32)],
      [TO, a.token, 'not-a-job'],
    ] as const) {
      const g = await getJob(path, id, auth);
      expect(g.json).toEqual({ code: 400501, result: {}, message: { en: 'Task not found' } });
    }
  });
});

describe('auth on both APIs', () => {
  it.each([
    ['POST', `${HS}/create-job`],
    ['GET', `${HS}/get-job/${'a'.repeat(32)}`],
    ['POST', `${TO}/create-job`],
    ['GET', `${TO}/get-job/${'a'.repeat(32)}`],
  ])('%s %s: missing token -> 400302, unknown token -> 400303', async (method, path) => {
    const call = async (auth: string | null) => {
      const res = await fetch(h.baseUrl + path, { method, headers: auth ? { authorization: auth } : {}, body: method === 'POST' ? new FormData() : undefined });
      return (await res.json()) as any;
    };
    expect(await call(null)).toEqual({ code: 400302, result: {}, message: { en: 'Token is null' } });
    expect(await call('')).toMatchObject({ code: 400302 });
    expect(await call('iwk_unknown')).toEqual({ code: 400303, result: {}, message: { en: 'Token error' } });
    expect(await call('Bearer iwk_unknown')).toMatchObject({ code: 400303 });
  });
});

describe('validation: 400301, nothing charged, nothing queued', () => {
  const big = () => fs.readFileSync('test/fixtures/astronaut.png'); // 790 KB, above this harness's 400 KB cap
  const text = { bytes: Buffer.from('<!DOCTYPE html><p>hello</p>'), name: 'photo.jpg', type: 'image/jpeg' };

  it.each<[string, string, () => Part[] | { body: string; contentType: string }, RegExp]>([
    ['an unknown color', HS, () => [['image_files', img(small)], ['hair_color', 'orange']], /^Params error: hair_color: must be one of black, brown, blonde, red, white, grey, pink, blue, green, purple \(got "orange"\)$/],
    ['a missing color', HS, () => [['image_files', img(small)]], /hair_color: required/],
    ['an unknown hairstyle', HS, () => hairstyleParts([['hairstyle', 'Afro']]), /hairstyle: must be one of Braided Crown, .*Crew Cut \(got "Afro"\)/],
    ['num_outputs 0', HS, () => hairstyleParts([['num_outputs', '0']]), /num_outputs: must be an integer from 1 to 4 \(got 0\)/],
    ['num_outputs 5', HS, () => hairstyleParts([['num_outputs', '5']]), /num_outputs: must be an integer from 1 to 4/],
    ['num_outputs 2.5', HS, () => hairstyleParts([['num_outputs', '2.5']]), /num_outputs/],
    ['no image', HS, () => [['hair_color', 'red']], /image_files: 1 to 4 files required/],
    ['five images', HS, () => [1, 2, 3, 4, 5].map((i) => ['image_files', img(small, `p${i}.jpg`)] as Part).concat([['hair_color', 'red']]), /image_files: at most 4 files allowed/],
    ['a text file renamed .jpg', HS, () => [['image_files', text], ['hair_color', 'red']], /image_files: file 1 \(photo\.jpg\) is not a JPEG, PNG or WebP image/],
    ['an oversized file', HS, () => [['image_files', { bytes: big(), name: 'big.png' }], ['hair_color', 'red']], /image_files: file 1 \(big\.png\) is larger than 400000 bytes/],
    ['a file field of another name', HS, () => hairstyleParts([['photo', img(small)]]), /unexpected file field "photo"/],
    ['a JSON body', HS, () => ({ body: '{"hair_color":"red"}', contentType: 'application/json' }), /the body must be multipart\/form-data/],
    ['a malformed multipart body', HS, () => ({ body: '--xyz\r\nContent-Disposition: form-data; name="hair_color"\r\n\r\nred\r\n--xy', contentType: 'multipart/form-data; boundary=xyz' }), /malformed multipart body/],
    ['a try-on without custom_model', TO, () => [['clothes_image', img(garment)], ['clothes_type', 'dresses']], /custom_model: exactly 1 file required/],
    ['two garments', TO, () => tryonParts([['clothes_image', img(garment)]]), /clothes_image: at most 1 file allowed/],
    ['an unknown clothes_type', TO, () => [['clothes_image', img(garment)], ['custom_model', img(small)], ['clothes_type', 'hat']], /clothes_type: must be one of upper_body, lower_body, dresses \(got "hat"\)/],
    ['a prompt too long', TO, () => tryonParts([['prompt', 'x'.repeat(1001)]]), /prompt: at most 1000 characters \(got 1001\)/],
    ['forced_cutting not boolean', TO, () => tryonParts([['forced_cutting', 'maybe']]), /forced_cutting: must be true or false/],
  ])('%s', async (_name, api, build, message) => {
    const u = await h.user(100);
    const b = build();
    const r = Array.isArray(b) ? await post(`${api}/create-job`, b, u.token) : await post(`${api}/create-job`, [], u.token, b);
    expect(r.status).toBe(200);
    expect(r.json.code).toBe(400301);
    expect(r.json.result).toEqual({});
    expect(r.json.message.en).toMatch(message);
    expect(await h.services.accounts.balance(u.userId)).toBe(100);
    expect(await h.services.accounts.ledger(u.userId)).toHaveLength(1); // only the test's grant
    expect(await queuedFor(u.userId)).toBe(0);
  });

  it('an image above the pixel cap', async () => {
    const u = await h.user(100);
    const huge = await sharp({ create: { width: 2100, height: 2000, channels: 3, background: '#777' } }).jpeg({ quality: 20 }).toBuffer();
    const r = await post(`${HS}/create-job`, [['image_files', img(huge)], ['hair_color', 'red']], u.token);
    expect(r.json.code).toBe(400301);
    expect(r.json.message.en).toMatch(/image_files: file 1 \(photo\.jpg\) is 2100x2000 pixels, above the limit of 4000000 pixels/);
  });
});

describe('credits', () => {
  it('an insufficient balance -> 400101 with nothing queued or stored', async () => {
    const u = await h.user(11);
    const tasksDir = `${h.config.blobDir}/tasks`;
    const stored = () => (fs.existsSync(tasksDir) ? fs.readdirSync(tasksDir).sort() : []);
    const storedBefore = stored();
    const r = await post(`${HS}/create-job`, hairstyleParts(), u.token); // 2 pictures = 12
    expect(r.json).toEqual({ code: 400101, result: {}, message: { en: 'Insufficient credits: this costs 12 credits; the balance is 11' } });
    expect(await queuedFor(u.userId)).toBe(0);
    expect(await h.services.accounts.balance(u.userId)).toBe(11);
    expect(stored()).toEqual(storedBefore); // the uploaded photo was not kept
  });
});

describe('no overdraft under concurrency', () => {
  let q: Harness;
  beforeAll(async () => {
    q = await startHarness({ worker: false });
  });
  afterAll(() => q?.close());

  it('50 concurrent try-on create-jobs against a balance for 10: exactly 10 accepted, balance 0', async () => {
    const u = await q.user(80);
    const calls = Array.from({ length: 50 }, async () => {
      const form = new FormData();
      form.append('clothes_image', new Blob([new Uint8Array(garment)]), 'g.png');
      form.append('custom_model', new Blob([new Uint8Array(small)]), 'm.jpg');
      form.append('clothes_type', 'upper_body');
      const res = await fetch(`${q.baseUrl}${TO}/create-job`, { method: 'POST', headers: { authorization: u.token }, body: form });
      return ((await res.json()) as any).code as number;
    });
    const codes = await Promise.all(calls);
    expect(codes.filter((c) => c === 100000)).toHaveLength(10);
    expect(codes.filter((c) => c === 400101)).toHaveLength(40);
    expect(await q.services.accounts.balance(u.userId)).toBe(0);
    const c = await q.services.queue.counts();
    expect(c.wait).toBe(10);
  });
});

describe('job retention', () => {
  let r: Harness;
  beforeAll(async () => {
    r = await startHarness({ env: { JOB_RETENTION_MS: '400', SWEEP_INTERVAL_MS: '100' } });
  });
  afterAll(() => r?.close());

  it('after the retention period the pictures and inputs are gone: URLs answer 410, get-job says so', async () => {
    const u = await r.user(100);
    const form = new FormData();
    form.append('image_files', new Blob([new Uint8Array(small)]), 'p.jpg');
    form.append('hair_color', 'red');
    const created = (await (await fetch(`${r.baseUrl}${HS}/create-job`, { method: 'POST', headers: { authorization: u.token }, body: form })).json()) as any;
    const first = (await (await fetch(`${r.baseUrl}${HS}/get-job/${created.result.job_id}`, { headers: { authorization: u.token } })).json()) as any;
    const [url] = first.result.input_image_url;
    const later: any = await waitFor(
      async () => {
        const j: any = await (await fetch(`${r.baseUrl}${HS}/get-job/${created.result.job_id}`, { headers: { authorization: u.token } })).json();
        return j.code !== 300102 && j.result.input_image_url.length === 0 ? j : undefined;
      },
      { timeoutMs: 20_000, what: 'the job to end and its files to be deleted' },
    );
    // Generated, then deleted after the retention period: the message says so, no URLs are given.
    expect(later.code).toBe(300103);
    expect(later.result).toMatchObject({ output_image_url: [], input_image_url: [], message: expect.stringMatching(/deleted .* after the job ended/) });
    expect(later.message.en).toMatch(/^Image generated successfully; the generated images were deleted/);
    expect((await fetch(url)).status).toBe(410);
  });
});
