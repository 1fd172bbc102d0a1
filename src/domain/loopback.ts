import { BlockList, isIP } from 'node:net';

/**
 * What counts as loopback, in one place (model endpoints, the bench app's bind address and clients): literal
 * addresses in 127.0.0.0/8 or ::1 (IPv4-mapped ::ffff:127.x too) and the name `localhost` itself, decided from
 * the text alone: nothing is resolved. Other names, `*.localhost` and `localhost.` included, are not loopback:
 * resolving them may send a query to the network, and a DNS answer cannot make a host loopback.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** A literal IP address (as a socket reports it) in the loopback ranges. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** A host name or address (brackets allowed, any case) that is loopback: `localhost` or a loopback address. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || isLoopbackAddress(host);
}
