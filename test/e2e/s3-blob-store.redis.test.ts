// BLOB_STORE=s3 end to end: a real face-detection task writes its outputs to an S3 bucket, the
// API streams them back to the owner only, and the retention sweep deletes the objects. The bucket
// is served by s3rver (test/helpers/s3-server.ts), a TEST DOUBLE for the S3 protocol, not a
// production store.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskOutputKey } from '../../src/domain/blob-keys.ts';
import { S3BlobStore } from '../../src/store/s3-blob-store.ts';
import { startHarness, type Harness } from '../helpers/harness.ts';
import { startTestS3, type TestS3 } from '../helpers/s3-server.ts';

describe('S3 blob store', () => {
  let s3: TestS3;
  let h: Harness;
  let bucket: S3BlobStore;
  beforeAll(async () => {
    s3 = await startTestS3();
    // Retention is driven by hand below: a long window and background sweep.
    h = await startHarness({ env: { ...s3.env, TASK_RETENTION_MS: '600000', SWEEP_INTERVAL_MS: '3600000' } });
    bucket = new S3BlobStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
  });
  afterAll(async () => {
    await h?.close();
    bucket?.close();
    await s3?.stop();
  });

  it('stores outputs in the bucket, serves them to the owner only, and retention deletes them', async () => {
    const { token } = await h.user(10);
    const other = await h.user(10);
    const id = await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') });
    const done = await h.waitForTask(token, id);
    expect(done.status).toBe('succeeded');

    // In the bucket, not on the local disk.
    expect(fs.existsSync(path.join(h.config.blobDir, 'tasks', id))).toBe(false);
    const faces = await bucket.open(taskOutputKey(id, 'faces.json'));
    const preview = await bucket.open(taskOutputKey(id, 'preview.jpg'));
    expect(faces?.contentType).toBe('application/json');
    expect(preview?.contentType).toBe('image/jpeg');
    faces!.stream().destroy();
    preview!.stream().destroy();

    for (const url of done.output as string[]) {
      const res = await h.call('GET', url, { token });
      expect(res.status).toBe(200);
      const name = url.split('/').pop()!;
      const stored = await bucket.open(taskOutputKey(id, name));
      stored!.stream().destroy();
      expect(Number(res.headers.get('content-length'))).toBe(stored!.size);
      expect(res.headers.get('content-type')).toBe(stored!.contentType);
      if (name === 'faces.json') expect(res.json).toHaveProperty('faces');
      // Another user's token gets 404, as for a file that does not exist.
      expect((await h.call('GET', url, { token: other.token })).status).toBe(404);
    }

    // The retention sweep (as the background loop runs it, past the window) deletes the objects.
    expect(await h.services.sweeper.sweep(Date.now() + 3_600_000)).toBeGreaterThanOrEqual(1);
    expect(await bucket.open(taskOutputKey(id, 'faces.json'))).toBeNull();
    expect(await bucket.open(taskOutputKey(id, 'preview.jpg'))).toBeNull();
    for (const url of done.output as string[]) expect((await h.call('GET', url, { token })).status).toBe(410);
  });
});
