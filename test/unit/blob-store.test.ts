// The local blob store: only a missing file reads as "not found"; other file-system faults surface.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalBlobStore } from '../../src/store/blob-store.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-blobs-'));
const blobs = new LocalBlobStore(root);
afterAll(() => {
  if (fs.existsSync(path.join(root, 'locked'))) fs.chmodSync(path.join(root, 'locked'), 0o755);
  fs.rmSync(root, { recursive: true, force: true });
});

describe('LocalBlobStore.open', () => {
  it('finds a stored blob; null when there is none', async () => {
    await blobs.put('tasks/t1/out.png', new Uint8Array([1, 2, 3]));
    expect((await blobs.open('tasks/t1/out.png'))?.size).toBe(3);
    expect(await blobs.open('tasks/t1/missing.png')).toBeNull();
    expect(await blobs.open('tasks/t1/out.png/below')).toBeNull(); // ENOTDIR: no such blob either
    expect(await blobs.open('tasks/t1')).toBeNull(); // a folder is no blob
  });

  it('surfaces other errors instead of answering 404 (ELOOP)', async () => {
    fs.mkdirSync(path.join(root, 'tasks/t2'), { recursive: true });
    fs.symlinkSync('b.png', path.join(root, 'tasks/t2/a.png'));
    fs.symlinkSync('a.png', path.join(root, 'tasks/t2/b.png'));
    await expect(blobs.open('tasks/t2/a.png')).rejects.toMatchObject({ code: 'ELOOP' });
  });

  // root reads through any permission, so EACCES can only be seen by other users.
  it.skipIf(process.getuid?.() === 0)('surfaces EACCES instead of answering 404', async () => {
    await blobs.put('locked/t3/out.png', new Uint8Array([1]));
    fs.chmodSync(path.join(root, 'locked'), 0o000);
    await expect(blobs.open('locked/t3/out.png')).rejects.toMatchObject({ code: 'EACCES' });
  });
});
