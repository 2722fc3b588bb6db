// The outbound URL policy's address classifier on a table of spellings (classification only: nothing
// here connects or resolves), and the create-time check with a stand-in resolver.
import type dns from 'node:dns';
import { describe, expect, it } from 'vitest';
import { classifyAddress, isNonPublicAddress } from '../../src/domain/addresses.ts';
import type { Logger } from '../../src/domain/logger.ts';
import { AppError } from '../../src/errors/codes.ts';
import { OutboundHttp, type LookupAll } from '../../src/queue/outbound-http.ts';

/** The host of a URL as the policy sees it: WHATWG-parsed, brackets stripped. */
const hostOf = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, '');

describe('address classifier', () => {
  // [spelling, the host the URL parser makes of it, range, public]
  const urls: Array<[string, string, string, boolean]> = [
    // IPv4-mapped IPv6, in both the dotted and the hex spelling (the parser writes the hex one)
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1', 'loopback', false],
    ['http://[::ffff:7f00:1]/', '::ffff:7f00:1', 'loopback', false],
    ['http://[0:0:0:0:0:ffff:127.0.0.1]/', '::ffff:7f00:1', 'loopback', false],
    ['http://[::ffff:a9fe:a9fe]/', '::ffff:a9fe:a9fe', 'linkLocal', false], // the metadata address
    ['http://[::ffff:10.0.0.1]/', '::ffff:a00:1', 'private', false],
    // IPv4-compatible (deprecated), IPv4-translated (SIIT)
    ['http://[::7f00:1]/', '::7f00:1', 'loopback', false],
    ['http://[::127.0.0.1]/', '::7f00:1', 'loopback', false],
    ['http://[::ffff:0:7f00:1]/', '::ffff:0:7f00:1', 'loopback', false],
    // 6to4 wrapping loopback and the metadata address
    ['http://[2002:7f00:1::]/', '2002:7f00:1::', 'loopback', false],
    ['http://[2002:a9fe:a9fe::1]/', '2002:a9fe:a9fe::1', 'linkLocal', false],
    // Teredo: client 127.0.0.1 is stored as ~0x7f000001 = 80ff:fffe
    ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', '2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback', false],
    // NAT64, well-known and local-use prefixes
    ['http://[64:ff9b::7f00:1]/', '64:ff9b::7f00:1', 'loopback', false],
    ['http://[64:ff9b::169.254.169.254]/', '64:ff9b::a9fe:a9fe', 'linkLocal', false],
    ['http://[64:ff9b:1::a00:1]/', '64:ff9b:1::a00:1', 'private', false],
    ['http://[64:ff9b:1:7f00:1::]/', '64:ff9b:1:7f00:1::', 'loopback', false], // /48 form of 127.0.1.0
    // IPv4 spellings the URL parser normalises (decimal, hex, octal, short forms)
    ['http://2130706433/', '127.0.0.1', 'loopback', false],
    ['http://0x7f.1/', '127.0.0.1', 'loopback', false],
    ['http://0177.0.0.1/', '127.0.0.1', 'loopback', false],
    ['http://127.1/', '127.0.0.1', 'loopback', false],
    ['http://0/', '0.0.0.0', 'unspecified', false],
    ['http://0xa9fea9fe/', '169.254.169.254', 'linkLocal', false],
    // plain special ranges
    ['http://[::]/', '::', 'unspecified', false],
    ['http://[::1]/', '::1', 'loopback', false],
    ['http://0.0.0.0/', '0.0.0.0', 'unspecified', false],
    ['http://127.0.0.1/', '127.0.0.1', 'loopback', false],
    ['http://169.254.169.254/', '169.254.169.254', 'linkLocal', false],
    ['http://10.1.2.3/', '10.1.2.3', 'private', false],
    ['http://172.16.0.1/', '172.16.0.1', 'private', false],
    ['http://192.168.1.1/', '192.168.1.1', 'private', false],
    ['http://100.64.0.1/', '100.64.0.1', 'carrierGradeNat', false],
    ['http://198.18.0.1/', '198.18.0.1', 'reserved', false], // benchmarking
    ['http://192.0.2.1/', '192.0.2.1', 'reserved', false], // documentation (TEST-NET-1)
    ['http://203.0.113.9/', '203.0.113.9', 'reserved', false], // documentation (TEST-NET-3)
    ['http://240.0.0.1/', '240.0.0.1', 'reserved', false],
    ['http://255.255.255.255/', '255.255.255.255', 'broadcast', false],
    ['http://224.0.0.1/', '224.0.0.1', 'multicast', false],
    ['http://[fd00::1]/', 'fd00::1', 'uniqueLocal', false],
    ['http://[fe80::1]/', 'fe80::1', 'linkLocal', false],
    ['http://[fec0::1]/', 'fec0::1', 'deprecatedSiteLocal', false],
    ['http://[ff02::1]/', 'ff02::1', 'multicast', false],
    ['http://[2001:db8::1]/', '2001:db8::1', 'reserved', false], // documentation
    ['http://[2001:2::1]/', '2001:2::1', 'benchmarking', false],
    ['http://[100::1]/', '100::1', 'discard', false],
    ['http://[4000::1]/', '4000::1', 'reserved', false], // outside global unicast 2000::/3
    // public unicast, also when carried in a mapped, 6to4, Teredo or NAT64 form
    ['http://8.8.8.8/', '8.8.8.8', 'unicast', true],
    ['http://1.1.1.1/', '1.1.1.1', 'unicast', true],
    ['http://[2606:4700::1111]/', '2606:4700::1111', 'unicast', true],
    ['http://[2606:4700:4700::1111]/', '2606:4700:4700::1111', 'unicast', true],
    ['http://[::ffff:8.8.8.8]/', '::ffff:808:808', 'unicast', true],
    ['http://[2002:808:808::1]/', '2002:808:808::1', 'unicast', true],
    ['http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'unicast', true], // client 8.8.8.8
    ['http://[64:ff9b::808:808]/', '64:ff9b::808:808', 'unicast', true],
    ['http://[64:ff9b:1::808:808]/', '64:ff9b:1::808:808', 'unicast', true],
  ];

  it.each(urls)('%s -> host %s: %s (public %s)', (url, host, range, isPublic) => {
    expect(hostOf(url)).toBe(host);
    expect(classifyAddress(host)).toMatchObject({ range, isPublic });
    expect(isNonPublicAddress(host)).toBe(!isPublic);
  });

  it.each([
    // What a resolver may hand back, or inet_aton spellings that never went through the URL parser.
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['fe80::1%eth0', 'linkLocal'],
    ['not-an-ip', 'invalid'],
    ['', 'invalid'],
    ['127.0.0.1.example', 'invalid'],
  ])('%s outside a URL: %s, not public', (text, range) => {
    expect(classifyAddress(text)).toMatchObject({ range, isPublic: false });
  });

  it('names the IPv4 an IPv6 form carries, and judges Teredo by client and server', () => {
    expect(classifyAddress('::ffff:a9fe:a9fe').embedded).toEqual(['169.254.169.254']);
    expect(classifyAddress('2002:7f00:1::').embedded).toEqual(['127.0.0.1']);
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:80ff:fffe').embedded).toEqual(['127.0.0.1', '65.54.227.120']);
    // A public client behind a private "server" field is refused too.
    expect(classifyAddress('2001:0:a00:1:8000:63bf:f7f7:f7f7')).toMatchObject({ range: 'private', isPublic: false });
    expect(classifyAddress('8.8.8.8').embedded).toEqual([]);
  });
});

describe('create-time check (stand-in resolver, nothing connects)', () => {
  const answers: Record<string, string[]> = {
    'localhost.test': ['127.0.0.1'],
    'mapped.test': ['::ffff:7f00:1'],
    'metadata.test': ['::ffff:a9fe:a9fe'],
    'sixtofour.test': ['2002:7f00:1::'],
    'mixed.test': ['8.8.8.8', '10.0.0.1'],
    'public.test': ['8.8.8.8', '2606:4700::1111'],
  };
  function setup(allowPrivate = false) {
    const asked: string[] = [];
    const logged: Array<{ obj: object; msg?: string }> = [];
    const rec = (obj: object | string, msg?: string) => void logged.push(typeof obj === 'string' ? { obj: {}, msg: obj } : { obj, msg });
    const log: Logger = { debug: rec, info: rec, warn: rec, error: rec };
    const lookup: LookupAll = (host, _options, cb) => {
      asked.push(host);
      const list = answers[host];
      if (!list) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
      cb(null, list.map((address): dns.LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })));
    };
    return { http: new OutboundHttp({ allowPrivate }, { log, lookup }), asked, logged };
  }

  const refused = async (http: OutboundHttp, url: string) => {
    const e = await http.check(url, 'input.image').then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe('URL_NOT_ALLOWED');
    return (e as AppError).message;
  };

  it.each([
    'http://[::ffff:127.0.0.1]/a.png',
    'http://[::ffff:a9fe:a9fe]/latest',
    'http://[::7f00:1]/',
    'http://[2002:7f00:1::]/',
    'http://2130706433/',
    'http://localhost.test/a.png',
    'http://mapped.test/a.png',
    'http://metadata.test/a.png',
    'http://sixtofour.test/a.png',
    'http://mixed.test/a.png',
    'http://no-such-host.test/a.png',
  ])('refuses %s in the same words, whatever the resolver said', async (url) => {
    const { http, logged } = setup();
    const message = await refused(http, url);
    expect(message).toBe("input.image: the URL's host is not a public address");
    // What the resolver answered is for the server log only.
    expect(logged).toHaveLength(1);
    expect(logged[0]!.obj).toMatchObject({ what: 'input.image', host: hostOf(url) });
    await http.close();
  });

  it('checks a literal without asking the resolver, and a name with it', async () => {
    const { http, asked } = setup();
    await refused(http, 'http://[::ffff:7f00:1]/');
    expect(asked).toEqual([]);
    await refused(http, 'http://mapped.test/');
    expect(asked).toEqual(['mapped.test']);
    await http.close();
  });

  it('accepts public targets, and anything under ALLOW_PRIVATE_URLS', async () => {
    const strict = setup();
    await expect(strict.http.check('https://public.test/a.png', 'input.image')).resolves.toBeUndefined();
    await expect(strict.http.check('http://[2606:4700::1111]/', 'webhook_url')).resolves.toBeUndefined();
    await expect(strict.http.check('http://[::ffff:8.8.8.8]/', 'webhook_url')).resolves.toBeUndefined();
    const open = setup(true);
    await expect(open.http.check('http://[::ffff:127.0.0.1]/', 'input.image')).resolves.toBeUndefined();
    await expect(open.http.check('http://mapped.test/', 'input.image')).resolves.toBeUndefined();
    expect(await refused(open.http, 'ftp://public.test/a.png')).toBe('input.image: only http(s) URLs are allowed');
    await Promise.all([strict.http.close(), open.http.close()]);
  });
});
