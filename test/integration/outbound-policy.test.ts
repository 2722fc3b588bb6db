// The outbound URL policy where it matters most: on each connection's DNS answer and on each
// redirect hop, with ALLOW_PRIVATE_URLS off. Nothing here may ever connect anywhere but loopback:
// names are answered by a stand-in resolver, and a safety net under undici (around net.connect)
// refuses any non-loopback address the policy lets through, recording it, so a policy bug fails
// the test instead of reaching out. The public address 8.8.8.8 stands for the test network's
// public host: the policy lets it through, and the safety net routes it to 127.0.0.1.
import type dns from 'node:dns';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError, causeText } from '../../src/errors/codes.ts';
import { fetchImageInput } from '../../src/queue/fetch-input.ts';
import { isPolicyRefusal, OutboundHttp, type LookupAll } from '../../src/queue/outbound-http.ts';

const ROUTED = '8.8.8.8';
const isLoopback = (a: string) => a === '127.0.0.1' || a === '::1';

/** Addresses the safety net saw the policy let through, in order (after the guard, before connect). */
const passed: string[] = [];
/** Sockets undici asked for. */
let socketsOpened = 0;

type Lookup = (host: string, o: dns.LookupOptions, cb: (err: Error | null, a: string | dns.LookupAddress[], f?: number) => void) => void;

beforeAll(() => {
  const realConnect = net.connect.bind(net) as (options: net.NetConnectOpts) => net.Socket;
  vi.spyOn(net, 'connect').mockImplementation(((options: net.NetConnectOpts & { lookup?: LookupAll }) => {
    socketsOpened++;
    const literal = 'host' in options && options.host && net.isIP(options.host.replace(/^\[|\]$/g, '')) ? options.host : undefined;
    if (literal) {
      // net connects to a literal without any lookup: stop it here, through a lookup that fails.
      passed.push(literal);
      if (!isLoopback(literal)) {
        const blocked: LookupAll = (_h, _o, cb) => cb(new Error('test safety net: refused a non-loopback connection'), []);
        return realConnect({ ...options, host: 'blocked.invalid', lookup: blocked } as net.NetConnectOpts);
      }
    }
    const guard = options.lookup;
    if (!guard) throw new Error('test safety net: a connection without the guarded lookup');
    const lookup: Lookup = (host, o, cb) =>
      (guard as unknown as Lookup)(host, o, (err, a, f) => {
        if (err) return cb(err, a, f);
        const list = Array.isArray(a) ? a : [{ address: a, family: f ?? 4 }];
        passed.push(...list.map((x) => x.address));
        const routed = list.map((x) => (x.address === ROUTED ? { address: '127.0.0.1', family: 4 } : x));
        if (routed.some((x) => !isLoopback(x.address))) return cb(new Error('test safety net: refused a non-loopback connection'), []);
        if (o.all) return cb(null, routed);
        cb(null, routed[0]!.address, routed[0]!.family);
      });
    return realConnect({ ...options, lookup } as net.NetConnectOpts);
  }) as typeof net.connect);
});
afterAll(() => vi.restoreAllMocks());

// A loopback server: /image answers a PNG, /to?url=... redirects there. Counts connections.
let server: http.Server;
let port: number;
let connections = 0;
const hits: string[] = [];
const png = fs.readFileSync('test/fixtures/astronaut.png');
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    hits.push(u.pathname);
    if (u.pathname === '/to') return res.writeHead(302, { location: u.searchParams.get('url')! }).end();
    if (u.pathname === '/image') return res.writeHead(200, { 'content-length': png.length }).end(png);
    res.writeHead(404).end();
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);

/** Names the stand-in resolver knows; anything else is ENOTFOUND. */
function resolver(answers: Record<string, string[]>) {
  const asked: string[] = [];
  const lookup: LookupAll = (host, _o, cb) => {
    asked.push(host);
    const list = answers[host];
    if (!list) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
    cb(null, list.map((address) => ({ address, family: net.isIP(address) })));
  };
  return { lookup, asked };
}

const clients: OutboundHttp[] = [];
function client(allowPrivate: boolean, answers: Record<string, string[]>) {
  const r = resolver(answers);
  const warnings: object[] = [];
  const log = { debug: () => {}, info: (o: object) => void warnings.push(o), warn: (o: object) => void warnings.push(o), error: () => {} };
  const c = new OutboundHttp({ allowPrivate }, { lookup: r.lookup, log: log as never });
  clients.push(c);
  return { http: c, asked: r.asked, warnings };
}
afterAll(() => Promise.all(clients.splice(0).map((c) => c.close())));
/** Closes a client now (its pooled sockets too), before the next test counts connections. */
const closeNow = (c: OutboundHttp) => clients.splice(clients.indexOf(c), 1)[0]!.close();

function reset() {
  passed.length = 0;
  hits.length = 0;
  socketsOpened = 0;
  connections = 0;
}
let allowPrivateTest = false;
afterEach(() => {
  // Whatever a test did, the policy let no non-public address through to a connection (loopback
  // only in the ALLOW_PRIVATE_URLS test).
  expect(passed.filter((a) => a !== ROUTED && !(isLoopback(a) && allowPrivateTest))).toEqual([]);
  allowPrivateTest = false;
});

const limits = { maxBytes: 4 * 1024 * 1024, timeoutMs: 5_000, maxRedirects: 3 };

describe('connection time: every DNS answer is checked before a socket connects', () => {
  it('the harness works: ALLOW_PRIVATE_URLS lets a name on loopback through to the server', async () => {
    reset();
    allowPrivateTest = true;
    const { http: c, asked } = client(true, { 'files.test': ['127.0.0.1'] });
    const res = await c.fetch(`http://files.test:${port}/image`);
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(png.length);
    await closeNow(c);
    expect(asked).toEqual(['files.test']);
    expect(hits).toEqual(['/image']);
    expect(connections).toBe(1);
  });

  it('and a public answer reaches it through the routed address, with the policy on', async () => {
    reset();
    const { http: c } = client(false, { 'public.test': [ROUTED] });
    const res = await c.fetch(`http://public.test:${port}/image`);
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(png.length);
    await closeNow(c);
    expect(passed).toEqual([ROUTED]);
    expect(connections).toBe(1);
  });

  it.each([
    ['127.0.0.1'],
    ['::1'],
    ['::ffff:7f00:1'],
    ['::ffff:a9fe:a9fe'],
    ['169.254.169.254'],
    ['::7f00:1'],
    ['2002:7f00:1::'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['64:ff9b::a9fe:a9fe'],
    ['10.0.0.1'],
    ['100.64.0.1'],
    ['fd00::1'],
    ['fe80::1'],
    ['0.0.0.0'],
  ])('a name answering %s is refused in the lookup hook, before any connection', async (address) => {
    reset();
    const { http: c, asked, warnings } = client(false, { 'target.test': [address] });
    const e = await c.fetch(`http://target.test:${port}/image`).catch((err: unknown) => err);
    expect(isPolicyRefusal(e)).toBe(true); // the refusal's code, set by the lookup hook
    expect((e as Error & { cause: Error }).cause.message).toBe("the URL's host is not a public address");
    expect(asked).toEqual(['target.test']);
    expect(passed).toEqual([]); // the hook answered with an error: net had no address to connect to
    expect(connections).toBe(0);
    expect(hits).toEqual([]);
    expect(warnings).toEqual([expect.objectContaining({ host: 'target.test', address })]);
    // A webhook delivery (POST through the same client) is refused the same way.
    const post = await c.fetch(`http://target.test:${port}/hook`, { method: 'POST', body: '{}' }).catch((err: unknown) => err);
    expect(isPolicyRefusal(post)).toBe(true);
    expect(connections).toBe(0);
  });

  it('one non-public address among public ones refuses the name (DNS rebinding, round robin)', async () => {
    reset();
    const { http: c } = client(false, { 'mixed.test': [ROUTED, '::ffff:7f00:1'] });
    expect(isPolicyRefusal(await c.fetch(`http://mixed.test:${port}/image`).catch((e: unknown) => e))).toBe(true);
    expect(connections).toBe(0);
  });

  it('a literal non-public address is refused before undici is asked', async () => {
    reset();
    const { http: c, asked } = client(false, {});
    for (const host of ['[::ffff:127.0.0.1]', '[::ffff:a9fe:a9fe]', '[::7f00:1]', '[2002:7f00:1::]', '127.0.0.1', '0x7f.1']) {
      expect(isPolicyRefusal(await c.fetch(`http://${host}:${port}/image`).catch((e: unknown) => e)), host).toBe(true);
    }
    expect(asked).toEqual([]);
    expect(socketsOpened).toBe(0);
    expect(connections).toBe(0);
  });

  it('a name that does not resolve reads as a refusal too (no ENOTFOUND to probe with)', async () => {
    reset();
    const { http: c, warnings } = client(false, {});
    const e = await fetchImageInput(c, 'image', `http://internal-only.test:${port}/image`, limits).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe('URL_NOT_ALLOWED');
    expect((e as AppError).message).toBe("input.image: the URL's host is not a public address");
    expect(warnings).toEqual([expect.objectContaining({ host: 'internal-only.test', err: 'ENOTFOUND' })]);
    expect(connections).toBe(0);
  });
});

describe('redirect hops: each one is checked again', () => {
  const via = (target: string) => `http://public.test:${port}/to?url=${encodeURIComponent(target)}`;

  it('a redirect to another public host is followed (control)', async () => {
    reset();
    const { http: c } = client(false, { 'public.test': [ROUTED], 'cdn.test': [ROUTED] });
    const got = await fetchImageInput(c, 'image', via(`http://cdn.test:${port}/image`), limits);
    expect(got.type).toBe('png');
    expect(hits).toEqual(['/to', '/image']);
  });

  it.each([
    ['an IPv4-mapped loopback literal', () => `http://[::ffff:7f00:1]:${port}/image`],
    ['an IPv4-mapped loopback literal, dotted', () => `http://[::ffff:127.0.0.1]:${port}/image`],
    ['the metadata address, IPv4-mapped', () => `http://[::ffff:a9fe:a9fe]:${port}/image`],
    ['loopback in 6to4', () => `http://[2002:7f00:1::]:${port}/image`],
    ['a decimal loopback', () => `http://2130706433:${port}/image`],
    ['a name answering an IPv4-mapped address', () => `http://mapped.test:${port}/image`],
    ['a name answering the mapped metadata address', () => `http://metadata.test:${port}/image`],
  ])('a redirect to %s is refused, and never requested', async (_name, target) => {
    reset();
    const { http: c } = client(false, { 'public.test': [ROUTED], 'mapped.test': ['::ffff:7f00:1'], 'metadata.test': ['::ffff:a9fe:a9fe'] });
    const to = target();
    const e = await fetchImageInput(c, 'image', via(to), limits).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe('URL_NOT_ALLOWED');
    expect((e as AppError).message).toBe(`input.image: redirected to ${new URL(to).toString()}: the URL's host is not a public address`);
    expect(hits).toEqual(['/to']); // the first hop only: the refused hop reached nothing
    expect(passed).toEqual([ROUTED]);
  });
});

describe('download errors say what failed in our words (the raw text is the cause, for the log)', () => {
  it('a TLS failure reads "TLS handshake failed", not the TLS library text', async () => {
    reset();
    allowPrivateTest = true;
    const { http: c } = client(true, { 'files.test': ['127.0.0.1'] });
    // https to the plain-HTTP server: the handshake fails on the server's HTTP answer.
    const e = await fetchImageInput(c, 'image', `https://files.test:${port}/image`, limits).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).message).toBe(`input.image: could not download https://files.test:${port}/image: TLS handshake failed`);
    expect(causeText(e as AppError)).toMatch(/SSL|TLS|wrong version/i);
  });

  it('a refused connection reads "connection refused"', async () => {
    reset();
    allowPrivateTest = true;
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const { http: c } = client(true, { 'files.test': ['127.0.0.1'] });
    const e = await fetchImageInput(c, 'image', `http://files.test:${closedPort}/x.png`, limits).catch((err: unknown) => err);
    expect((e as AppError).message).toBe(`input.image: could not download http://files.test:${closedPort}/x.png: connection refused`);
    expect(causeText(e as AppError)).toMatch(/ECONNREFUSED 127\.0\.0\.1/);
  });
});
