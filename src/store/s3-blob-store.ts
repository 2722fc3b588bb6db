// Blob storage in an S3 bucket (AWS S3, MinIO, Ceph RGW, Cloudflare R2 ...): the ONLY importer of
// @aws-sdk/client-s3. Same keys and contract as LocalBlobStore; the object key is the blob key.
// Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN, AWS_PROFILE, instance or container roles). The API streams objects through
// itself (files.ts), so the owner check on task outputs is unchanged and the bucket stays private.
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { contentTypeOf, isValidBlobKey, type BlobInfo, type BlobStore } from './blob-store.ts';

export interface S3Settings {
  bucket: string;
  /** Endpoint of an S3-compatible server (MinIO, Ceph RGW, R2); unset for AWS S3. */
  endpoint?: string | undefined;
  region: string;
  /** Path-style addressing (endpoint/bucket/key), which MinIO and Ceph RGW usually need. */
  forcePathStyle: boolean;
}

/** Upload part size of putStream (S3's minimum is 5 MiB for all parts but the last). */
const PART_BYTES = 8 * 1024 * 1024;
/** Keys one DeleteObjects request may name (S3's limit). */
const DELETE_BATCH = 1000;

export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      // Checksums only where the API requires them: the SDK's default (CRC32 on every request,
      // aws-chunked bodies for streams) is refused by several S3-compatible servers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private checked(key: string): string {
    if (!isValidBlobKey(key)) throw new Error(`invalid blob key: ${key}`);
    return key;
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.checked(key), Body: data, ContentLength: data.byteLength, ContentType: contentTypeOf(key) }),
    );
  }

  /**
   * Reads the stream in parts of PART_BYTES: a blob that fits one part is a single PutObject, a
   * larger one a multipart upload (aborted on failure), so at most one part is held in memory.
   */
  async putStream(key: string, data: Readable | AsyncIterable<Uint8Array>): Promise<void> {
    this.checked(key);
    let uploadId: string | undefined;
    const parts: CompletedPart[] = [];
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const flushPart = async () => {
      uploadId ??= (await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentTypeOf(key) }))).UploadId;
      const body = Buffer.concat(pending);
      pending = [];
      pendingBytes = 0;
      const PartNumber = parts.length + 1;
      const res = await this.client.send(
        new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber, Body: body, ContentLength: body.byteLength }),
      );
      parts.push({ PartNumber, ETag: res.ETag });
    };
    try {
      for await (const chunk of data) {
        pending.push(chunk);
        pendingBytes += chunk.byteLength;
        if (pendingBytes >= PART_BYTES) await flushPart();
      }
      if (uploadId === undefined) {
        await this.put(key, Buffer.concat(pending));
        return;
      }
      if (pendingBytes > 0) await flushPart();
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
      );
    } catch (e) {
      if (uploadId !== undefined) {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
      }
      throw e;
    }
  }

  /**
   * One GET: size and type from its headers, the body handed out by stream(). Every caller reads
   * the stream it opens (files.ts, the job upload check, task inputs); an unread body would hold a
   * pooled connection. Only "no such key" is null: a missing bucket (NoSuchBucket, also a 404),
   * denied access or a dead endpoint throw, as LocalBlobStore surfaces faults other than ENOENT.
   */
  async open(key: string): Promise<BlobInfo | null> {
    if (!isValidBlobKey(key)) return null;
    let res;
    try {
      res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (e) {
      if (e instanceof S3ServiceException && e.name === 'NoSuchKey') return null;
      throw e;
    }
    const body = res.Body;
    if (!(body instanceof Readable)) throw new Error(`S3 returned no readable body for ${key}`);
    let taken = false;
    return {
      size: res.ContentLength ?? 0,
      contentType: res.ContentType || contentTypeOf(key),
      stream: () => {
        if (taken) throw new Error(`the body of ${key} was already read; open it again`);
        taken = true;
        return body;
      },
    };
  }

  /** Lists every object under "<prefix>/" page by page and deletes each page (at most 1000 keys a request). */
  async removePrefix(prefix: string): Promise<void> {
    const Prefix = `${this.checked(prefix)}/`;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix, ContinuationToken }));
      const keys = (page.Contents ?? []).map((o) => o.Key).filter((k): k is string => k !== undefined);
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const res = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: keys.slice(i, i + DELETE_BATCH).map((Key) => ({ Key })), Quiet: true },
          }),
        );
        const failed = res.Errors ?? [];
        if (failed.length > 0) {
          throw new Error(`S3 could not delete ${failed.length} objects under ${Prefix} (first: ${failed[0]!.Key}: ${failed[0]!.Code} ${failed[0]!.Message})`);
        }
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken !== undefined);
  }

  close(): void {
    this.client.destroy();
  }
}
