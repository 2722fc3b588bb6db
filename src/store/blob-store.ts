// Blob storage for task inputs and outputs: a local folder by default (an S3 bucket: s3-blob-store.ts).
// Keys are relative paths ("tasks/<task_id>/preview.jpg"). Writes go straight to the file: a blob is only reachable once
// the task record lists it, which happens after every write has finished.
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

const CONTENT_TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.txt': 'text/plain; charset=utf-8',
};

export interface BlobInfo {
  size: number;
  contentType: string;
  stream(): Readable;
}

export interface BlobStore {
  put(key: string, data: Uint8Array): Promise<void>;
  /**
   * Writes a blob from a stream as it arrives (uploads), so it is never held whole in memory. A
   * failed or aborted write may leave a partial blob: the caller removes its prefix.
   */
  putStream(key: string, data: Readable | AsyncIterable<Uint8Array>): Promise<void>;
  open(key: string): Promise<BlobInfo | null>;
  /** Removes every blob under a prefix folder ("tasks/<id>"). */
  removePrefix(prefix: string): Promise<void>;
}

/** The content type a blob is served with, from its key's extension (every store uses the same map). */
export function contentTypeOf(key: string): string {
  return CONTENT_TYPES[path.extname(key).toLowerCase()] ?? 'application/octet-stream';
}

export function isValidBlobKey(key: string): boolean {
  return KEY.test(key) && !key.split('/').some((s) => s === '.' || s === '..');
}

export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private file(key: string): string {
    if (!isValidBlobKey(key)) throw new Error(`invalid blob key: ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const file = this.file(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    await fs.promises.writeFile(file, data);
  }

  async putStream(key: string, data: Readable | AsyncIterable<Uint8Array>): Promise<void> {
    const file = this.file(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    await pipeline(data, fs.createWriteStream(file));
  }

  async open(key: string): Promise<BlobInfo | null> {
    if (!isValidBlobKey(key)) return null;
    const file = this.file(key);
    let st: fs.Stats;
    try {
      st = await fs.promises.stat(file);
    } catch (e) {
      // Only "no such file" is not found (ENOTDIR: a folder on the way is a file, so no such blob
      // either). EACCES, EIO, ELOOP, EMFILE ... are faults that must surface, not read as 404.
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw e;
    }
    if (!st.isFile()) return null;
    return {
      size: st.size,
      contentType: contentTypeOf(file),
      stream: () => fs.createReadStream(file),
    };
  }

  async removePrefix(prefix: string): Promise<void> {
    await fs.promises.rm(this.file(prefix), { recursive: true, force: true });
  }
}
