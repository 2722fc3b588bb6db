// Address classification for the outbound URL policy (SSRF): loopback, private, link-local,
// unique-local, carrier-grade NAT, multicast and unspecified ranges are not public.
import net from 'node:net';

const V4_BLOCKED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const V6_BLOCKED: Array<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64 (can reach IPv4 private space)
];

const v4List = new net.BlockList();
for (const [a, p] of V4_BLOCKED) v4List.addSubnet(a, p, 'ipv4');
const v6List = new net.BlockList();
for (const [a, p] of V6_BLOCKED) v6List.addSubnet(a, p, 'ipv6');

/** True when the address is not on the public internet. Unparseable input counts as not public. */
export function isNonPublicAddress(address: string): boolean {
  const kind = net.isIP(address);
  if (kind === 4) return v4List.check(address, 'ipv4');
  if (kind === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return v4List.check(mapped[1]!, 'ipv4');
    return v6List.check(address, 'ipv6');
  }
  return true;
}
