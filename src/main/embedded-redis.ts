// The embedded default: when REDIS_URL is unset, `npm start` (and the test suite) run a private
// redis-server child with its data in a project-local folder, and stop it on exit.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { connectRedis } from '../store/redis.ts';

export class RedisBinaryMissing extends Error {
  constructor() {
    super(
      'redis-server was not found on PATH. Install it (Debian/Ubuntu: sudo apt-get install redis-server; ' +
        'macOS: brew install redis) or point the service at a running Redis with REDIS_URL=redis://HOST:6379',
    );
  }
}

export interface EmbeddedRedis {
  url: string;
  stop(): Promise<void>;
}

/** A TCP port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPing(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited early with code ${child.exitCode}`);
    const c = connectRedis(url, { name: 'embedded-probe' });
    c.on('error', () => {});
    try {
      if ((await c.ping()) === 'PONG') return;
    } catch {
      // not up yet
    } finally {
      c.disconnect();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not answer within ${timeoutMs} ms`);
}

/**
 * Starts redis-server on a free loopback port (or `port`: a restart on the same address, as the
 * outage tests do), persisting (AOF) under dataDir.
 */
export async function startEmbeddedRedis(dataDir: string, opts: { persist?: boolean; port?: number } = {}): Promise<EmbeddedRedis> {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error) throw new RedisBinaryMissing();
  fs.mkdirSync(dataDir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const persist = opts.persist ?? true;
  const child = spawn(
    'redis-server',
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--dir', path.resolve(dataDir),
      '--save', '',
      '--appendonly', persist ? 'yes' : 'no',
      '--protected-mode', 'yes',
      '--loglevel', 'warning',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const url = `redis://127.0.0.1:${port}`;
  try {
    await waitForPing(url, child, 10_000);
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  // Lets CLI tools (npm run keys) find this Redis while the service runs.
  const urlFile = path.join(dataDir, URL_FILE);
  fs.writeFileSync(urlFile, url);
  let stopped: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        fs.rmSync(urlFile, { force: true });
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      return stopped;
    },
  };
}

const URL_FILE = 'url';

/** The URL of an embedded Redis already running on dataDir, if one answers. */
export async function findRunningEmbeddedRedis(dataDir: string): Promise<string | null> {
  let url: string;
  try {
    url = fs.readFileSync(path.join(dataDir, URL_FILE), 'utf8').trim();
  } catch {
    return null;
  }
  const c = connectRedis(url, { name: 'embedded-probe' });
  c.on('error', () => {});
  try {
    return (await Promise.race([c.ping(), new Promise((r) => setTimeout(r, 1000, null))])) === 'PONG' ? url : null;
  } catch {
    return null;
  } finally {
    c.disconnect();
  }
}
