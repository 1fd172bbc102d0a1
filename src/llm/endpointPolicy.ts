import { isIP } from 'node:net';
import { LlmError } from './types.ts';

/**
 * Offline by construction: a model endpoint must be loopback or one of the lab hosts
 * named in the config. Checked on the URL before any connection is opened; names are
 * not resolved, so a DNS entry cannot smuggle in another address.
 */
export interface EndpointPolicy {
  /** extra host names or IP addresses allowed besides loopback (the lab's GPU workstation, …) */
  allowedHosts?: readonly string[];
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1' || host.startsWith('::ffff:127.');
  return false;
}

export function assertAllowedEndpoint(url: string | URL, policy: EndpointPolicy = {}): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new LlmError('refused_endpoint', `"${String(url)}" is not a valid URL`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const allowed = isLoopback(host) || (policy.allowedHosts ?? []).some((h) => h.toLowerCase() === host);
  if (!allowed) {
    throw new LlmError(
      'refused_endpoint',
      `refusing to contact ${parsed.origin}: only loopback and the configured lab hosts are allowed ` +
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
