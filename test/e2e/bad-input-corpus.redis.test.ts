// A corpus of bad inputs for the three create endpoints (create-task and both create-jobs), sent by
// real HTTP clients to a listening server. Each case checks the specific code and message, and
// that nothing was charged (balance and ledger unchanged) and nothing stored (no task or job
// record in Redis, no new folder under the blob store's tasks/). Also: a refused multi-file upload
// is answered at once and its request completes (the rest of the body is read and discarded), path
// parameters too long for the router get their API's not-found answer, and the messages of issue 15.
import fs from 'node:fs';
import http from 'node:http';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACE_VERSION, startHarness, type Harness } from '../helpers/harness.ts';
import { retentionText } from '../../src/api/routes/jobs.ts';

const HS = '/api/service/v1/ai-hairstyle';
const TO = '/api/service/v1/ai-virtual-try-on';
const CAP = 300_000; // JOB_FILE_MAX_BYTES of this harness
let h: Harness;
let jpeg: Buffer; // a 256x256 JPEG portrait
let png: Buffer; // a PNG "garment"
let bomb: Buffer; // a small JPEG whose frame header says 20000x20000

beforeAll(async () => {
  h = await startHarness({ worker: false, env: { JOB_FILE_MAX_BYTES: String(CAP), INPUT_MAX_PIXELS: '4000000' } });
  jpeg = await sharp('test/fixtures/astronaut.png').resize(256).jpeg({ quality: 85 }).toBuffer();
  png = await sharp({ create: { width: 300, height: 400, channels: 3, background: '#c0392b' } }).png().toBuffer();
  bomb = Buffer.from(jpeg);
  const sof = [...bomb.keys()].find((i) => bomb[i] === 0xff && (bomb[i + 1] === 0xc0 || bomb[i + 1] === 0xc2))!;
  bomb.writeUInt16BE(20_000, sof + 5); // height
  bomb.writeUInt16BE(20_000, sof + 7); // width
});
afterAll(() => h?.close());

// --- what "nothing charged, nothing stored" means -------------------------------------------------

async function countKeys(pattern: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await h.services.redis.scan(cursor, 'MATCH', `${h.config.redisKeyPrefix}:${pattern}`, 'COUNT', 1000);
    cursor = next;
    n += keys.length;
  } while (cursor !== '0');
  return n;
}

async function snapshot(userId: number) {
  const tasksDir = `${h.config.blobDir}/tasks`;
  return {
    balance: await h.services.accounts.balance(userId),
    ledger: (await h.services.accounts.ledger(userId)).length,
    userTasks: await h.services.redis.zcard(`${h.config.redisKeyPrefix}:user:${userId}:tasks`),
    taskRecords: await countKeys('task:*'),
    jobRecords: await countKeys('job:*'),
    queued: (await h.services.queue.counts()).wait,
    blobs: fs.existsSync(tasksDir) ? fs.readdirSync(tasksDir).sort() : [],
  };
}

// --- clients ------------------------------------------------------------------------------------

type Value = string | { bytes: Buffer; name: string; type?: string };
type Part = [field: string, value: Value];
type Raw = { body: string | Buffer; contentType?: string };

async function post(path: string, auth: string | null, body: Part[] | Raw) {
  const headers: Record<string, string> = {};
  if (auth !== null) headers.authorization = auth;
  let payload: FormData | string | Buffer;
  if (Array.isArray(body)) {
    const form = new FormData();
    for (const [field, v] of body) {
      if (typeof v === 'string') form.append(field, v);
      else form.append(field, new Blob([new Uint8Array(v.bytes)], { type: v.type ?? 'image/jpeg' }), v.name);
    }
    payload = form;
  } else {
    payload = body.body;
    if (body.contentType !== undefined) headers['content-type'] = body.contentType;
  }
  const res = await fetch(h.baseUrl + path, { method: 'POST', headers, body: payload as BodyInit });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: JSON.parse(text) as any };
}

/** A multipart body as bytes, with its boundary (for node's http client, which streams it). */
function multipartBytes(parts: Part[], boundary: string): Buffer {
  const chunks: Buffer[] = [];
  for (const [field, v] of parts) {
    if (typeof v === 'string') {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"\r\n\r\n${v}\r\n`));
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${v.name}"\r\nContent-Type: ${v.type ?? 'image/jpeg'}\r\n\r\n`), v.bytes, Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/**
 * Streams a multipart body with node's http client, 64 KB at a time with backpressure, and
 * resolves once the answer has been read and the request is done: every byte written ('finish'),
 * or the connection closed by the server.
 */
function streamUpload(baseUrl: string, path: string, token: string, parts: Part[]) {
  const boundary = `----corpus${Date.now()}`;
  const body = multipartBytes(parts, boundary);
  return new Promise<{ status: number; json: any; wroteAll: boolean; requestError: string | null }>((resolve, reject) => {
    let answer: { status: number; json: any } | undefined;
    let requestDone = false;
    let wroteAll = false;
    let requestError: string | null = null;
    const settle = () => {
      if (!answer || !requestDone) return;
      resolve({ ...answer, wroteAll, requestError });
      agent.destroy();
    };
    // A keep-alive connection, as browsers and fetch use: one that asks for "Connection: close"
    // is closed by node right after the answer, whatever is still arriving.
    const agent = new http.Agent({ keepAlive: true });
    const req = http.request(baseUrl + path, {
      method: 'POST',
      agent,
      headers: { authorization: token, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        answer = { status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()) };
        settle();
      });
      res.on('error', reject);
    });
    req.on('finish', () => {
      wroteAll = true;
      requestDone = true;
      settle();
    });
    req.on('error', (e) => {
      requestError = (e as NodeJS.ErrnoException).code ?? e.message;
      requestDone = true;
      if (answer) settle();
      // An error before any answer: the answer, if it comes at all, is lost with the socket.
      else setTimeout(() => (answer ? settle() : reject(e)), 200);
    });
    req.on('close', () => {
      requestDone = true;
      settle();
    });
    // Backpressure by polling what is still buffered: once the answer has ended, node's client no
    // longer emits 'drain' for a request still being written.
    const flushed = async () => {
      while (req.writableLength > 0 && !req.destroyed) await new Promise((r) => setTimeout(r, 2));
    };
    (async () => {
      for (let i = 0; i < body.length && !req.destroyed; i += 64 * 1024) {
        if (!req.write(body.subarray(i, i + 64 * 1024))) await flushed();
      }
      if (!req.destroyed) req.end();
    })().catch(reject);
  });
}

const img = (bytes: Buffer, name = 'photo.jpg', type = 'image/jpeg') => ({ bytes, name, type });
const hs = (extra: Part[] = [], files: Part[] = [['image_files', img(jpeg)]]): Part[] => [...files, ['hair_color', 'blonde'], ...extra];
const to = (extra: Part[] = []): Part[] => [['clothes_image', img(png, 'shirt.png', 'image/png')], ['custom_model', img(jpeg, 'model.jpg')], ['clothes_type', 'upper_body'], ...extra];

// --- the corpus: create-job -----------------------------------------------------------------------

interface JobCase {
  name: string;
  api: string;
  body: () => Part[] | Raw;
  /** message.en; code 400301 unless given. */
  en: RegExp;
  code?: number;
  credits?: number;
  auth?: (token: string) => string | null;
}

const jobCases: JobCase[] = [
  // files
  { name: 'a zero-byte file', api: HS, body: () => hs([], [['image_files', img(Buffer.alloc(0))]]), en: /^Params error: image_files: file 1 \(photo\.jpg\) is empty \(0 bytes\)$/ },
  { name: 'a truncated image (its header cut short)', api: HS, body: () => hs([], [['image_files', img(jpeg.subarray(0, 200))]]), en: /^Params error: image_files: file 1 \(photo\.jpg\) could not be read as an image$/ },
  { name: 'a PNG signature and nothing else', api: TO, body: () => [['clothes_image', img(png.subarray(0, 8), 'g.png', 'image/png')], ['custom_model', img(jpeg)], ['clothes_type', 'dresses']], en: /^Params error: clothes_image: file 1 \(g\.png\) could not be read as an image$/ },
  { name: 'a decompression bomb header (20000x20000 in a small JPEG)', api: HS, body: () => hs([], [['image_files', img(bomb, 'bomb.jpg')]]), en: /^Params error: image_files: file 1 \(bomb\.jpg\) is 20000x20000 pixels, above the limit of 4000000 pixels$/ },
  { name: 'an HTML file named .jpg', api: HS, body: () => hs([], [['image_files', img(Buffer.from('<!DOCTYPE html><p>hi</p>'))]]), en: /^Params error: image_files: file 1 \(photo\.jpg\) is not a JPEG, PNG or WebP image$/ },
  { name: 'a GIF', api: TO, body: () => [['clothes_image', img(Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'g.gif', 'image/gif')], ['custom_model', img(jpeg)], ['clothes_type', 'dresses']], en: /^Params error: clothes_image: file 1 \(g\.gif\) is not a JPEG, PNG or WebP image$/ },
  { name: 'an SVG', api: HS, body: () => hs([], [['image_files', img(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9e9" height="9e9"/>'), 'x.svg', 'image/svg+xml')]]), en: /^Params error: image_files: file 1 \(x\.svg\) is not a JPEG, PNG or WebP image$/ },
  { name: 'a file over the size cap', api: HS, body: () => hs([], [['image_files', img(Buffer.concat([jpeg, Buffer.alloc(CAP)]), 'big.jpg')]]), en: new RegExp(`^Params error: image_files: file 1 \\(big\\.jpg\\) is larger than ${CAP} bytes$`) },
  { name: 'several files, the second over the size cap', api: HS, body: () => hs([], [['image_files', img(jpeg, 'a.jpg')], ['image_files', img(Buffer.concat([jpeg, Buffer.alloc(CAP)]), 'b.jpg')], ['image_files', img(jpeg, 'c.jpg')], ['image_files', img(jpeg, 'd.jpg')]]), en: new RegExp(`^Params error: image_files: file 2 \\(b\\.jpg\\) is larger than ${CAP} bytes$`) },
  { name: '5 files', api: HS, body: () => hs([], [1, 2, 3, 4, 5].map((i) => ['image_files', img(jpeg, `p${i}.jpg`)] as Part)), en: /^Params error: image_files: at most 4 files allowed$/ },
  { name: 'no file', api: HS, body: () => [['hair_color', 'red']], en: /^Params error: image_files: 1 to 4 files required$/ },
  { name: 'try-on without custom_model', api: TO, body: () => [['clothes_image', img(png, 'g.png', 'image/png')], ['clothes_type', 'dresses']], en: /^Params error: custom_model: exactly 1 file required$/ },
  { name: 'two garments', api: TO, body: () => to([['clothes_image', img(png, 'g2.png', 'image/png')]]), en: /^Params error: clothes_image: at most 1 file allowed$/ },
  { name: 'a file in a field of another name', api: HS, body: () => hs([['photo', img(jpeg)]]), en: /^Params error: unexpected file field "photo" \(files go in image_files\)$/ },
  // the body itself
  { name: 'malformed multipart (cut inside its closing boundary)', api: HS, body: () => ({ body: '--xyz\r\nContent-Disposition: form-data; name="hair_color"\r\n\r\nred\r\n--xy', contentType: 'multipart/form-data; boundary=xyz' }), en: /^Params error: malformed multipart body/ },
  { name: 'multipart without a boundary', api: TO, body: () => ({ body: 'hello', contentType: 'multipart/form-data' }), en: /^Params error: malformed multipart body/ },
  { name: 'an empty multipart body', api: HS, body: () => ({ body: '--xyz--\r\n', contentType: 'multipart/form-data; boundary=xyz' }), en: /^Params error: hair_color: required, one of black, brown/ },
  { name: 'an empty try-on form', api: TO, body: () => [['clothes_type', 'dresses']], en: /^Params error: clothes_image: exactly 1 file required$/ },
  { name: 'a JSON body', api: TO, body: () => ({ body: '{"clothes_type":"dresses"}', contentType: 'application/json' }), en: /^Params error: the body must be multipart\/form-data$/ },
  { name: 'a malformed JSON body', api: HS, body: () => ({ body: '{"hair_color":', contentType: 'application/json' }), en: /^Params error: invalid request body: not valid JSON/ },
  { name: '33 text fields', api: HS, body: () => hs(Array.from({ length: 32 }, (_, i) => [`f${i}`, 'x'] as Part)), en: /^Params error: too many form fields \(at most 32\)$/ },
  { name: 'a field named __proto__', api: HS, body: () => hs([['__proto__', 'x']]), en: /^Params error: a field is named after an Object\.prototype property/ },
  // text fields
  { name: 'an unknown hairstyle field', api: HS, body: () => hs([['colour', 'red']]), en: /^Params error: unknown field "colour" \(the fields are image_files, hair_color, hairstyle, num_outputs\)$/ },
  { name: 'an unknown try-on field', api: TO, body: () => to([['mode', 'fast']]), en: /^Params error: unknown field "mode" \(the fields are clothes_image, custom_model, clothes_type, prompt, forced_cutting\)$/ },
  { name: 'an unknown field left empty', api: TO, body: () => to([['seed', '']]), en: /^Params error: unknown field "seed"/ },
  { name: 'a task-API-only input field (output_format)', api: HS, body: () => hs([['output_format', 'png']]), en: /^Params error: unknown field "output_format"/ },
  { name: 'a file field sent as text', api: HS, body: () => [['image_files', 'me.jpg'], ['hair_color', 'red']], en: /^Params error: image_files: must be a file, not a text field$/ },
  { name: 'a text field given twice', api: HS, body: () => hs([['hair_color', 'red']]), en: /^Params error: hair_color: given more than once$/ },
  { name: 'hair_color not in the enum', api: HS, body: () => [['image_files', img(jpeg)], ['hair_color', 'orange']], en: /^Params error: hair_color: must be one of black, brown, blonde, red, white, grey, pink, blue, green, purple \(got "orange"\)$/ },
  { name: 'hairstyle not in the enum', api: HS, body: () => hs([['hairstyle', 'Afro']]), en: /^Params error: hairstyle: must be one of Braided Crown, .*\(got "Afro"\)$/ },
  { name: 'clothes_type not in the enum', api: TO, body: () => [['clothes_image', img(png, 'g.png', 'image/png')], ['custom_model', img(jpeg)], ['clothes_type', 'hat']], en: /^Params error: clothes_type: must be one of upper_body, lower_body, dresses \(got "hat"\)$/ },
  { name: 'num_outputs not a number', api: HS, body: () => hs([['num_outputs', 'two']]), en: /^Params error: num_outputs: must be an integer from 1 to 4 \(got "two"\)$/ },
  { name: 'num_outputs 5', api: HS, body: () => hs([['num_outputs', '5']]), en: /^Params error: num_outputs: must be an integer from 1 to 4 \(got 5\)$/ },
  { name: 'num_outputs 2.5', api: HS, body: () => hs([['num_outputs', '2.5']]), en: /^Params error: num_outputs: must be an integer from 1 to 4 \(got 2\.5\)$/ },
  { name: 'forced_cutting not a boolean', api: TO, body: () => to([['forced_cutting', 'maybe']]), en: /^Params error: forced_cutting: must be true or false \(got "maybe"\)$/ },
  { name: 'a prompt of 1001 characters', api: TO, body: () => to([['prompt', 'x'.repeat(1001)]]), en: /^Params error: prompt: at most 1000 characters \(got 1001\)$/ },
  { name: 'a prompt above the field size', api: TO, body: () => to([['prompt', 'x'.repeat(5000)]]), en: /^Params error: prompt: longer than 4000 bytes$/ },
  // who asks
  { name: 'no token', api: HS, body: () => hs(), auth: () => null, code: 400302, en: /^Token is null$/ },
  { name: 'an unknown token', api: TO, body: () => to(), auth: () => 'iwk_unknown', code: 400303, en: /^Token error$/ },
  { name: '4 credits: below one picture, refused before the files are read', api: HS, body: () => hs([['num_outputs', '1']]), credits: 4, code: 400101, en: /^Insufficient credits: this costs at least 6 credits \(6 per picture\); the balance is 4$/ },
  { name: '7 credits for a try-on (8)', api: TO, body: () => to(), credits: 7, code: 400101, en: /^Insufficient credits: this costs 8 credits; the balance is 7$/ },
  { name: '11 credits for 2 pictures (12), found after the fields are read', api: HS, body: () => hs(), credits: 11, code: 400101, en: /^Insufficient credits: this costs 12 credits; the balance is 11$/ },
];

describe('bad inputs to create-job: the specific code and message; nothing charged, nothing stored', () => {
  it.each(jobCases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const u = await h.user(c.credits ?? 100);
    const before = await snapshot(u.userId);
    const r = await post(`${c.api}/create-job`, c.auth ? c.auth(u.token) : u.token, c.body());
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ code: c.code ?? 400301, result: {}, message: { en: expect.stringMatching(c.en) } });
    expect(await snapshot(u.userId)).toEqual(before);
  });

  it('the good requests these cases are made from are accepted (so each refusal is for its own reason)', async () => {
    const u = await h.user(100);
    for (const [api, parts] of [[HS, hs()], [TO, to()], [TO, to([['prompt', 'x'.repeat(1000)], ['forced_cutting', 'on']])]] as const) {
      const r = await post(`${api}/create-job`, u.token, parts);
      expect(r.json).toMatchObject({ code: 100000 });
    }
    expect(await h.services.accounts.balance(u.userId)).toBe(100 - 12 - 8 - 8);
  });
});

// --- the corpus: create-task ----------------------------------------------------------------------

const good = () => ({ version: FACE_VERSION, input: { image: 'http://127.0.0.1:9/a.jpg' } });
const json = (body: string, contentType = 'application/json'): Raw => ({ body, contentType });

interface TaskCase {
  name: string;
  body: () => unknown | Raw;
  status: number;
  error: string;
  en: RegExp;
  credits?: number;
}

const isRaw = (b: unknown): b is Raw => typeof b === 'object' && b !== null && 'body' in b && ('contentType' in b || Buffer.isBuffer((b as Raw).body));

const taskCases: TaskCase[] = [
  { name: 'malformed JSON', body: () => json('{"version": '), status: 400, error: 'body_invalid', en: /^invalid request body: not valid JSON \(.+\)$/ },
  { name: 'an empty body', body: () => json(''), status: 400, error: 'body_invalid', en: /^invalid request body: the body is empty \(expected a JSON object\)$/ },
  { name: 'a null body', body: () => json('null'), status: 400, error: 'body_invalid', en: /^invalid request body: the body must be a JSON object \(got null\)$/ },
  { name: 'an array body', body: () => json('[1]'), status: 400, error: 'body_invalid', en: /^invalid request body: the body must be a JSON object \(got an array\)$/ },
  { name: 'a string body', body: () => json('"hello"'), status: 400, error: 'body_invalid', en: /^invalid request body: the body must be a JSON object \(got a string\)$/ },
  { name: 'plain text', body: () => json('version=abc', 'text/plain'), status: 400, error: 'body_invalid', en: /^invalid request body: the body must be a JSON object \(got a string\)$/ },
  { name: 'a __proto__ key', body: () => json(`{"__proto__":{"admin":true},"version":"${FACE_VERSION}","input":{"image":"http://127.0.0.1:9/a.jpg"}}`), status: 400, error: 'body_invalid', en: /^invalid request body: __proto__ is not allowed as a key$/ },
  { name: 'a __proto__ key inside input', body: () => json(`{"version":"${FACE_VERSION}","input":{"image":"http://127.0.0.1:9/a.jpg","__proto__":{"x":1}}}`), status: 400, error: 'body_invalid', en: /^invalid request body: __proto__ is not allowed as a key$/ },
  { name: 'a __proto__ key written with \\u escapes', body: () => json(`{"\\u005f_proto__":{},"version":"${FACE_VERSION}","input":{}}`), status: 400, error: 'body_invalid', en: /^invalid request body: __proto__ is not allowed as a key$/ },
  { name: 'a body over BODY_MAX_BYTES', body: () => ({ ...good(), input: { image: `http://127.0.0.1:9/${'a'.repeat(70_000)}` } }), status: 413, error: 'body_too_large', en: /^request body is larger than the limit$/ },
  { name: 'version missing', body: () => ({ input: {} }), status: 400, error: 'body_invalid', en: /^invalid request body: version: required, a 64-character version ID$/ },
  { name: 'version a number', body: () => ({ ...good(), version: 42 }), status: 400, error: 'body_invalid', en: /^invalid request body: version: must be a string, a 64-character version ID \(got a number\)$/ },
  { name: 'version too short', body: () => ({ ...good(), version: 'abc' }), status: 400, error: 'version_invalid', en: /^version must be a 64-character lowercase hex ID \(got 3 characters\)$/ },
  { name: 'version in uppercase', body: () => ({ ...good(), version: FACE_VERSION.toUpperCase() }), status: 400, error: 'version_invalid', en: /^version must be lowercase hex \(it has uppercase letters\)$/ },
  { name: 'version not hex', body: () => ({ ...good(), version: `g${FACE_VERSION.slice(1)}` }), status: 400, error: 'version_invalid', en: /^version must be hex: character 1 is "g"/ },
  { name: 'an unknown version', body: () => ({ ...good(), version: 'f'.repeat(64) }), status: 404, error: 'version_not_found', en: /^model version f{64} not found$/ },
  { name: 'input missing', body: () => ({ version: FACE_VERSION }), status: 400, error: 'body_invalid', en: /^invalid request body: input: required, a JSON object$/ },
  { name: 'input a string', body: () => ({ version: FACE_VERSION, input: 'http://127.0.0.1:9/a.jpg' }), status: 400, error: 'body_invalid', en: /^invalid request body: input: must be a JSON object \(got a string\)$/ },
  { name: 'an unknown top-level field', body: () => ({ ...good(), priority: 1 }), status: 400, error: 'body_invalid', en: /^invalid request body: \(body\): .*"priority"/ },
  { name: 'an unknown input field', body: () => ({ ...good(), input: { ...good().input, mode: 'fast' } }), status: 422, error: 'input_invalid', en: /^invalid input: input: .*"mode"/ },
  { name: 'input.image not a URL', body: () => ({ ...good(), input: { image: 'astronaut.png' } }), status: 422, error: 'input_invalid', en: /^invalid input: input\.image: must be an http\(s\) URL$/ },
  { name: 'input.image a number', body: () => ({ ...good(), input: { image: 7 } }), status: 422, error: 'input_invalid', en: /^invalid input: input\.image: / },
  { name: 'webhook_url not http(s)', body: () => ({ ...good(), webhook_url: 'javascript:alert(1)' }), status: 400, error: 'body_invalid', en: /^invalid request body: webhook_url: must be an http\(s\) URL$/ },
  { name: 'no credits', body: () => good(), credits: 0, status: 402, error: 'insufficient_credits', en: /^this costs 1 credits; the balance is 0$/ },
];

describe('bad inputs to create-task: the specific error and message; nothing charged, nothing stored', () => {
  it.each(taskCases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const u = await h.user(c.credits ?? 100);
    const before = await snapshot(u.userId);
    const b = c.body();
    const r = isRaw(b) ? await post('/api/tasks/v1/create', `Bearer ${u.token}`, b) : await post('/api/tasks/v1/create', `Bearer ${u.token}`, json(JSON.stringify(b)));
    expect(r.status).toBe(c.status);
    expect(r.json.code).toBe(c.status);
    expect(r.json.result.error).toBe(c.error);
    expect(r.json.message.en).toMatch(c.en);
    expect(await snapshot(u.userId)).toEqual(before);
  });

  it('the good body these cases are made from is accepted', async () => {
    const u = await h.user(100);
    const r = await post('/api/tasks/v1/create', `Bearer ${u.token}`, json(JSON.stringify(good())));
    expect(r.json).toMatchObject({ code: 200, result: { task_cost: 1 } });
  });
});

// --- a refused upload is answered at once -----------------------------------------------------------

describe('a multi-file upload refused part-way is answered at once, and its request completes', () => {
  let big: Harness;
  const BIG_CAP = 4 * 1024 * 1024;
  beforeAll(async () => {
    big = await startHarness({ worker: false, env: { JOB_FILE_MAX_BYTES: String(BIG_CAP) } });
  });
  afterAll(() => big?.close());

  it('the rest of the body (more than the socket buffers hold) is read and discarded; the connection stays usable', async () => {
    const u = await big.user(100);
    const junk = (mb: number) => img(Buffer.concat([jpeg, Buffer.alloc(mb * 1024 * 1024, 7)]), `${mb}mb.jpg`);
    const r = await streamUpload(big.baseUrl, `${HS}/create-job`, u.token, [['hair_color', 'red'], ['image_files', img(jpeg, 'ok.jpg')], ['image_files', junk(6)], ['image_files', junk(3.5)], ['image_files', junk(3.5)]]);
    expect(r.json).toEqual({ code: 400301, result: {}, message: { en: `Params error: image_files: file 2 (6mb.jpg) is larger than ${BIG_CAP} bytes` } });
    expect(r).toMatchObject({ status: 200, wroteAll: true, requestError: null });
    expect(fs.existsSync(`${big.config.blobDir}/tasks`) ? fs.readdirSync(`${big.config.blobDir}/tasks`) : []).toEqual([]);
    expect(await big.services.accounts.balance(u.userId)).toBe(100);
  }, 20_000);

  it('a rest beyond what any accepted body could hold is cut off after the answer, which the client still gets', async () => {
    const u = await h.user(100);
    const r = await streamUpload(h.baseUrl, `${HS}/create-job`, u.token, [['image_files', img(jpeg, 'ok.jpg')], ['image_files', img(Buffer.concat([jpeg, Buffer.alloc(20 * 1024 * 1024, 7)]), 'huge.jpg')]]);
    expect(r.json).toEqual({ code: 400301, result: {}, message: { en: `Params error: image_files: file 2 (huge.jpg) is larger than ${CAP} bytes` } });
  }, 20_000);

  it('a refusal before the body is read (credits) is answered at once too', async () => {
    const u = await h.user(4);
    const r = await streamUpload(h.baseUrl, `${HS}/create-job`, u.token, [['image_files', img(Buffer.concat([jpeg, Buffer.alloc(CAP - jpeg.length - 10)]))], ['hair_color', 'red']]);
    expect(r.json).toMatchObject({ code: 400101 });
    expect(r.wroteAll).toBe(true);
  }, 20_000);
});

// --- the upload budget ---------------------------------------------------------------------------------

describe('UPLOAD_INFLIGHT_MAX_BYTES', () => {
  let tight: Harness;
  beforeAll(async () => {
    tight = await startHarness({ worker: false, env: { JOB_FILE_MAX_BYTES: '2000000', UPLOAD_INFLIGHT_MAX_BYTES: '3000000' } });
  });
  afterAll(() => tight?.close());

  it('an upload that does not fit beside those in flight gets 300101 with HTTP 503 and Retry-After; nothing charged or stored', async () => {
    const u = await tight.user(1000);
    const file = img(Buffer.concat([jpeg, Buffer.alloc(1_900_000 - jpeg.length, 7)]));
    const send = async () => {
      const form = new FormData();
      form.append('image_files', new Blob([new Uint8Array(file.bytes)], { type: 'image/jpeg' }), 'p.jpg');
      form.append('hair_color', 'red');
      form.append('num_outputs', '1');
      const res = await fetch(`${tight.baseUrl}${HS}/create-job`, { method: 'POST', headers: { authorization: u.token }, body: form });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as any };
    };
    const answers = await Promise.all(Array.from({ length: 8 }, send));
    const busy = answers.filter((a) => a.status === 503);
    const accepted = answers.filter((a) => a.json.code === 100000);
    expect(busy.length).toBeGreaterThan(0);
    expect(accepted.length).toBeGreaterThan(0);
    expect(busy.length + accepted.length).toBe(8);
    for (const a of busy) {
      expect(a.retryAfter).toBe('5');
      expect(a.json).toEqual({ code: 300101, result: {}, message: { en: 'System error: the service is receiving too many uploads at once; try again in a few seconds' } });
    }
    expect(await tight.services.accounts.balance(u.userId)).toBe(1000 - 6 * accepted.length);
    expect(fs.readdirSync(`${tight.config.blobDir}/tasks`)).toHaveLength(accepted.length);
    // Once they are answered the budget is free again.
    expect((await send()).json.code).toBe(100000);
  }, 30_000);
});

// --- path parameters too long for the router ---------------------------------------------------------

describe('path parameters over the router limit get their API not-found answer, in its envelope', () => {
  const long = 'a'.repeat(300);

  it('get-job: HTTP 200 with 400501 (after the token check, as for any id)', async () => {
    const u = await h.user(1);
    for (const api of [HS, TO]) {
      for (const id of [long, `${'%zz'.repeat(3)}`]) {
        const res = await fetch(`${h.baseUrl}${api}/get-job/${id}`, { headers: { authorization: u.token } });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ code: 400501, result: {}, message: { en: 'Task not found' } });
      }
      const anon = await fetch(`${h.baseUrl}${api}/get-job/${long}`);
      expect(await anon.json()).toEqual({ code: 400302, result: {}, message: { en: 'Token is null' } });
    }
  });

  it('task API: 404 task_not_found on get and cancel; 401 without a token', async () => {
    const u = await h.user(1);
    for (const [method, path] of [['GET', `/api/tasks/v1/get/${long}`], ['POST', `/api/tasks/v1/cancel/${long}`]] as const) {
      const r = await h.call(method, path, { token: u.token });
      expect([r.status, r.json]).toEqual([404, { code: 404, result: { error: 'task_not_found' }, message: { en: 'task not found' } }]);
      expect((await h.call(method, path)).json.result.error).toBe('auth_missing');
    }
  });

  it('files: 404 file_not_found, as other unknown files', async () => {
    const u = await h.user(1);
    const own = await h.call('GET', `/files/tasks/${long}/faces.json`, { token: u.token });
    expect([own.status, own.json.result]).toEqual([404, { error: 'file_not_found' }]);
    const job = await h.call('GET', `/files/jobs/${'0'.repeat(32)}/${long}/inputs/1-image_files.jpg`);
    expect([job.status, job.json.result]).toEqual([404, { error: 'file_not_found' }]);
    const other = await h.call('GET', `/nothing/${long}`);
    expect(other.status).toBe(404);
  });
});

describe('messages', () => {
  it('retention in the unit that reads best', () => {
    expect(retentionText(86_400_000)).toBe('24 hours');
    expect(retentionText(3_600_000)).toBe('1 hour');
    expect(retentionText(5_400_000)).toBe('90 minutes');
    expect(retentionText(60_000)).toBe('1 minute');
    expect(retentionText(30_000)).toBe('30 seconds');
    expect(retentionText(400)).toBe('less than a second');
  });
});
