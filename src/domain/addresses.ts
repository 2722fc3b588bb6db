// Address classification for the outbound URL policy (SSRF). The ONLY importer of ipaddr.js, which
// knows the IANA special-purpose ranges of both families; only what it calls plain "unicast" (and,
// for IPv6, only inside global unicast 2000::/3) is public. IPv6 forms that carry an IPv4 address
// (mapped, compatible, translated, NAT64, 6to4, Teredo) are judged by the IPv4 they carry: a
// hand-written prefix list let `[::ffff:7f00:1]` (127.0.0.1, as the URL parser spells it) through.
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

export interface AddressClass {
  /** ipaddr.js' range name of the deciding address ('unicast' when public), or 'invalid'. */
  range: string;
  /** The IPv4 addresses an IPv6 address carries, as judged (empty when it carries none). */
  embedded: string[];
  isPublic: boolean;
}

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_LOCAL = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');

const v4At = (parts: number[], i: number, xor = 0): IPv4 => {
  const n = ((((parts[i]! << 16) | parts[i + 1]!) >>> 0) ^ xor) >>> 0;
  return new ipaddr.IPv4([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
};

/**
 * The IPv4 addresses an RFC 6052 address reads as, one per prefix length it is well formed for:
 * the 32 bits follow the prefix, skipping bits 64-71 (the "u" octet, zero), and every bit after
 * them is zero.
 */
function rfc6052Readings(a: IPv6): IPv4[] {
  const bytes = a.toByteArray();
  const readings: IPv4[] = [];
  for (const prefixLength of [48, 56, 64, 96]) {
    const v4: number[] = [];
    let i = prefixLength / 8;
    for (; v4.length < 4; i++) if (i !== 8) v4.push(bytes[i]!);
    if (bytes[8] === 0 && bytes.slice(i).every((b) => b === 0)) readings.push(new ipaddr.IPv4(v4));
  }
  return readings.length > 0 ? readings : [new ipaddr.IPv4([0, 0, 0, 0])];
}

/** The IPv4 addresses an IPv6 address carries, by its range; [] for a plain IPv6 address. */
function embeddedV4(a: IPv6): IPv4[] {
  const p = a.parts;
  const range = a.range();
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d (SIIT, IPv4-translated)
      return [v4At(p, 6)];
    case '6to4': // 2002:AABB:CCDD::/48
      return [v4At(p, 1)];
    case 'teredo': // 2001:0:SERVER:flags:port:~CLIENT; packets end at the client, the server relays
      return [v4At(p, 6, 0xffffffff), v4At(p, 2)];
    case 'rfc6052':
      // The well-known prefix is /96 only (RFC 6052 2.1). The local-use prefix (RFC 8215) may be
      // cut at any RFC 6052 length inside the /48, so every well-formed reading must be public;
      // with none, 0.0.0.0 stands in (refused).
      if (!a.match(NAT64_LOCAL)) return [v4At(p, 6)];
      return rfc6052Readings(a);
  }
  // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291 2.5.5.1); :: and ::1 are ranges of their own.
  if (range !== 'unspecified' && range !== 'loopback' && p.slice(0, 6).every((x) => x === 0)) return [v4At(p, 6)];
  return [];
}

function parse(address: string): IPv4 | IPv6 | null {
  // Literal brackets as in a URL's host; ipaddr.js also reads the inet_aton spellings of IPv4
  // (0x7f.1, 2130706433, 0177.0.0.1), so a spelling the resolver would accept is judged the same.
  const text = address.replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(text)) return null;
  return ipaddr.parse(text);
}

/** The range of an address and whether it is public. Unparseable input is not public. */
export function classifyAddress(address: string): AddressClass {
  const a = parse(address);
  if (!a) return { range: 'invalid', embedded: [], isPublic: false };
  if (a.kind() === 'ipv4') {
    const range = a.range();
    return { range, embedded: [], isPublic: range === 'unicast' };
  }
  const v6 = a as IPv6;
  const carried = embeddedV4(v6);
  if (carried.length > 0) {
    const bad = carried.find((v4) => v4.range() !== 'unicast');
    return { range: bad ? bad.range() : 'unicast', embedded: carried.map(String), isPublic: !bad };
  }
  const range = v6.range();
  // ipaddr.js names whatever no special range claims "unicast", unallocated space (4000::/2 ...)
  // included; only 2000::/3 is routed on the internet.
  if (range === 'unicast' && !v6.match(GLOBAL_UNICAST_V6)) return { range: 'reserved', embedded: [], isPublic: false };
  return { range, embedded: [], isPublic: range === 'unicast' };
}

/** True when the address is not on the public internet. Unparseable input counts as not public. */
export function isNonPublicAddress(address: string): boolean {
  return !classifyAddress(address).isPublic;
}
