import ipaddr from 'ipaddr.js';

const IPV6_SUBSCRIBER_PREFIX = 4;

/**
 * The key a per-address limit counts a client under. An IPv6 client gets a whole /64 (a home or a server
 * commonly holds one, so a limit per address would be a limit per guess); an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`, a dual-stack socket) counts as its IPv4 address. Anything unreadable counts as itself.
 */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const { parts } = parsed as ipaddr.IPv6;
  const network = parts.map((part, i) => (i < IPV6_SUBSCRIBER_PREFIX ? part : 0));
  return `${new ipaddr.IPv6(network).toRFC5952String()}/64`;
}
