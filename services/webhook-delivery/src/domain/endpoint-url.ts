import { BlockList, isIP } from 'node:net';

/**
 * Where an endpoint may point: http(s) only, no credentials in the URL, and (unless private addresses are
 * allowed for development) only public unicast addresses. Pure rules; resolving names is the address guard's.
 */

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // The unspecified address, loopback and the deprecated IPv4-compatible addresses (`::127.0.0.1`), which a host
  // with an automatic tunnel would send to the IPv4 address inside.
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

const MAPPED_IPV4 = /^::ffff:(?:0:)?(\d{1,3}(?:\.\d{1,3}){3})$/i;
const MAPPED_IPV4_HEX = /^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** The IPv4 address an IPv4-mapped IPv6 address stands for (`::ffff:127.0.0.1`, `::ffff:7f00:1`), if it is one. */
function embeddedIpv4(address: string): string | undefined {
  const dotted = MAPPED_IPV4.exec(address);
  if (dotted) return dotted[1];
  const hex = MAPPED_IPV4_HEX.exec(address);
  if (!hex) return undefined;
  const high = parseInt(hex[1] as string, 16);
  const low = parseInt(hex[2] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether an IP address is public unicast: not loopback, private, link-local, shared, reserved or multicast. */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return false;
  if (family === 4) return !BLOCKED.check(bare, 'ipv4');
  const mapped = embeddedIpv4(bare);
  if (mapped !== undefined) return isIP(mapped) === 4 && !BLOCKED.check(mapped, 'ipv4');
  return !BLOCKED.check(bare, 'ipv6');
}

export type UrlProblem = { ok: false; message: string };
export type ParsedEndpointUrl = { ok: true; url: URL; hostname: string; literalAddress: boolean };

/** Syntax and scheme; the addresses behind the name are checked by resolving it. */
export function parseEndpointUrl(value: string): ParsedEndpointUrl | UrlProblem {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, message: 'must be an absolute http or https URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, message: 'must use http or https' };
  }
  if (url.username || url.password) return { ok: false, message: 'must not carry credentials' };
  if (url.hash) return { ok: false, message: 'must not have a fragment' };
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!hostname) return { ok: false, message: 'must name a host' };
  return { ok: true, url, hostname, literalAddress: isIP(hostname) !== 0 };
}
