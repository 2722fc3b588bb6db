// S3BlobStore against s3rver, a local S3-protocol server started here (a TEST DOUBLE for the
// protocol, not a production store): put, putStream (single and multipart), open with size and
// content type, missing keys, removePrefix over more than one 1000-key page.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BlobStore } from '../../src/store/s3-blob-store.ts';
import { startTestS3, type TestS3 } from '../helpers/s3-server.ts';

let s3: TestS3;
let blobs: S3BlobStore;

beforeAll(async () => {
  s3 = await startTestS3();
  blobs = new S3BlobStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
});
afterAll(async () => {
  blobs?.close();
  await s3?.stop();
});

async function read(key: string): Promise<Buffer | null> {
  const blob = await blobs.open(key);
  if (!blob) return null;
  const parts: Buffer[] = [];
  for await (const c of blob.stream()) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe('S3BlobStore', () => {
  it('puts and opens a blob with its size and content type; null when there is none', async () => {
    await blobs.put('tasks/t1/out.png', new Uint8Array([1, 2, 3]));
    const blob = await blobs.open('tasks/t1/out.png');
    expect(blob?.size).toBe(3);
    expect(blob?.contentType).toBe('image/png');
    expect(await read('tasks/t1/out.png')).toEqual(Buffer.from([1, 2, 3]));
    await blobs.put('tasks/t1/faces.json', Buffer.from('{"faces":[]}'));
    expect((await blobs.open('tasks/t1/faces.json'))?.contentType).toBe('application/json');
    expect(await blobs.open('tasks/t1/missing.png')).toBeNull();
    expect(await blobs.open('tasks/t1')).toBeNull(); // a prefix is no blob
    expect(await blobs.open('../etc/passwd')).toBeNull(); // not a valid key
  });

  it('writes a stream: small ones in one PUT, large ones as a multipart upload', async () => {
    const small = Buffer.alloc(100_000, 7);
    await blobs.putStream('tasks/t2/in.jpg', Readable.from([small.subarray(0, 50_000), small.subarray(50_000)]));
    expect(await read('tasks/t2/in.jpg')).toEqual(small);
    expect((await blobs.open('tasks/t2/in.jpg'))?.contentType).toBe('image/jpeg');

    const big = Buffer.alloc(17 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
    const chunks = Array.from({ length: 17 }, (_, i) => big.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024));
    await blobs.putStream('tasks/t2/big.png', Readable.from(chunks));
    expect((await blobs.open('tasks/t2/big.png'))?.size).toBe(big.length);
    expect((await read('tasks/t2/big.png'))!.equals(big)).toBe(true);
  });

  it('a failed stream surfaces its error and leaves no blob', async () => {
    async function* failing() {
      yield Buffer.alloc(10);
      throw new Error('client went away');
    }
    await expect(blobs.putStream('tasks/t3/in.jpg', failing())).rejects.toThrow('client went away');
    expect(await blobs.open('tasks/t3/in.jpg')).toBeNull();
  });

  it('removePrefix deletes every object under the prefix, past one 1000-key page, and nothing else', async () => {
    const keys = Array.from({ length: 1005 }, (_, i) => `tasks/t4/f${i}.json`);
    for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => blobs.put(k, Buffer.from('x'))));
    await blobs.put('tasks/t40/keep.json', Buffer.from('y')); // same leading characters, other task
    await blobs.removePrefix('tasks/t4');
    expect(await blobs.open('tasks/t4/f0.json')).toBeNull();
    expect(await blobs.open('tasks/t4/f1004.json')).toBeNull();
    expect((await blobs.open('tasks/t40/keep.json'))?.size).toBe(1);
    await blobs.removePrefix('tasks/none'); // an empty prefix is no error
  });

  it('a missing bucket is a fault, not "not found"', async () => {
    const other = new S3BlobStore({ bucket: 'no-such-bucket', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
    try {
      await expect(other.open('tasks/t1/out.png')).rejects.toMatchObject({ name: 'NoSuchBucket' });
    } finally {
      other.close();
    }
  });
});
