import { BlockList, isIP } from 'node:net';
import { LlmError } from './types.ts';

/**
 * Offline by construction: a model endpoint must be loopback or one of the lab hosts
 * named in the config. Checked on the URL before any connection is opened; names are
 * not resolved, so a DNS entry cannot smuggle in another address and a refused name
 * never causes a DNS query.
 */
export interface EndpointPolicy {
  /** extra host names or IP addresses allowed besides loopback (the lab's GPU workstation, …) */
  allowedHosts?: readonly string[];
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * True for literal loopback addresses (127.0.0.0/8, ::1, and IPv4-mapped 127.x) and the name `localhost` itself,
 * decided from the text alone: nothing is resolved. Other names, `*.localhost` and `localhost.` included, are not
 * loopback: resolving them may send a query to the network, and a DNS answer cannot make a host loopback here.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

export function assertAllowedEndpoint(url: string | URL, policy: EndpointPolicy = {}): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new LlmError('refused_endpoint', `"${String(url)}" is not a valid URL`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const allowed = isLoopbackHost(host) || (policy.allowedHosts ?? []).some((h) => h.toLowerCase() === host);
  if (!allowed) {
    throw new LlmError(
      'refused_endpoint',
      `refusing to contact ${parsed.origin}: only loopback (127.0.0.0/8, ::1, localhost) and the configured lab hosts are allowed ` +
        `(add "${host}" to llm.allowedHosts in the bench config if this machine is in the lab)`,
    );
  }
  return parsed;
}

/**
 * A fetch that enforces the policy on every request (including ones a client library builds itself)
 * and refuses redirects, so a server cannot bounce the bench to another address.
 */
export function guardedFetch(policy: EndpointPolicy, baseFetch?: typeof fetch): typeof fetch {
  return (input, init) => {
    const url = typeof input === 'string' || input instanceof URL ? input : input.url;
    try {
      assertAllowedEndpoint(url, policy);
    } catch (error) {
      return Promise.reject(error);
    }
    return (baseFetch ?? globalThis.fetch)(input, { ...init, redirect: 'error' });
  };
}
