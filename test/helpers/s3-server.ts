// A local S3-protocol server for tests: s3rver (npm) in a child process on a free loopback port
// over a temp folder. s3rver is a TEST DOUBLE for the S3 protocol, not a production store:
// deployments point BLOB_STORE=s3 at AWS S3, MinIO, Ceph RGW or R2.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The env that points the worker at it: BLOB_STORE=s3 and the fixed credentials s3rver accepts. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./s3rver-child.mjs', import.meta.url));

export async function startTestS3(bucket = 'iw-test'): Promise<TestS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-s3rver-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', CHILD, directory, bucket], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`s3rver exited before listening (code ${code})`);
  });
  const firstLine = (async () => {
    for await (const line of createInterface({ input: child.stdout! })) return JSON.parse(line) as { port: number };
    throw new Error('s3rver closed its output before listening');
  })();
  const { port } = await Promise.race([firstLine, exited]);
  exited.catch(() => undefined);
  const endpoint = `http://127.0.0.1:${port}`;
  // s3rver's fixed credentials; set in process.env too, where the SDK's default chain reads them.
  const creds = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
  Object.assign(process.env, creds);
  return {
    endpoint,
    bucket,
    env: { BLOB_STORE: 's3', S3_BUCKET: bucket, S3_ENDPOINT: endpoint, S3_REGION: 'us-east-1', S3_FORCE_PATH_STYLE: 'true', ...creds },
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
