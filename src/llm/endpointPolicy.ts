import { isLoopbackHost } from '../domain/loopback.ts';
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
