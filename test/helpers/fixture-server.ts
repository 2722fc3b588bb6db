// A real local HTTP server that the worker downloads task inputs from. Serves test/fixtures, images
// a test made in memory (nothing is written into test/fixtures), and a few misbehaving routes (slow,
// held, truncated, not an image, oversized, redirect loops).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

const FIXTURES = path.resolve('test/fixtures');

export interface FixtureServer {
  url(p: string): string;
  /** Serves `data` at /mem/<name> until the server closes; returns that path. */
  serve(name: string, data: Uint8Array): string;
  /** Requests seen, by path (without query). */
  hits: Map<string, number>;
  /** Resolves when the next request for /hold/* arrives; release() answers the held requests. */
  nextHold(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const hits = new Map<string, number>();
  const inMemory = new Map<string, Uint8Array>();
  let holdWaiters: Array<() => void> = [];
  let held: Array<() => void> = [];
  const sendFile = (res: http.ServerResponse, name: string) => {
    const file = path.join(FIXTURES, path.basename(name));
    if (!fs.existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    const data = fs.readFileSync(file);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length }).end(data);
  };
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    hits.set(u.pathname, (hits.get(u.pathname) ?? 0) + 1);
    const [, route, arg = ''] = u.pathname.split('/');
    switch (route) {
      case 'files':
        return sendFile(res, arg);
      case 'mem': {
        const data = inMemory.get(arg);
        if (!data) return res.writeHead(404).end('not found');
        return res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length }).end(data);
      }
      case 'truncated': {
        const data = fs.readFileSync(path.join(FIXTURES, path.basename(arg)));
        return res.writeHead(200).end(data.subarray(0, Math.floor(data.length / 2)));
      }
      case 'text':
        return res.writeHead(200, { 'content-type': 'image/jpeg' }).end('<!DOCTYPE html><html>not an image</html>');
      case 'big': {
        // Declares nothing, streams more than any test limit.
        res.writeHead(200, { 'content-type': 'image/png' });
        const chunk = Buffer.alloc(64 * 1024, 1);
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
          if (sent >= 8 * 1024 * 1024) res.end();
          else res.once('drain', pump);
        };
        return pump();
      }
      case 'redirect': {
        const n = Number(arg);
        return res.writeHead(302, { location: n > 0 ? `/redirect/${n - 1}` : '/files/astronaut.png' }).end();
      }
      case 'slow':
        return void setTimeout(() => sendFile(res, arg), Number(u.searchParams.get('ms') ?? 1000));
      case 'hold':
        held.push(() => sendFile(res, arg));
        for (const w of holdWaiters) w();
        holdWaiters = [];
        return;
      case 'status':
        return res.writeHead(Number(arg)).end();
      default:
        return res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p) => `http://127.0.0.1:${port}${p}`,
    serve(name, data) {
      inMemory.set(name, data);
      return `/mem/${name}`;
    },
    hits,
    nextHold: () => new Promise((r) => holdWaiters.push(r)),
    release() {
      for (const h of held) h();
      held = [];
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
