import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isLoopbackAddress, isLoopbackHost } from '../domain/loopback.ts';
import { ApiError } from './http-util.ts';

/** the one loopback rule (src/domain/loopback.ts), offered here to the app server and `icabench serve` */
export { isLoopbackHost };

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

export function tokensEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function bearerToken(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1] : null;
}

/**
 * Who may do what:
 * - on a loopback listener, the Host header must name the loopback (a DNS-rebinding page cannot read the API);
 * - reading from the loopback needs no token (other local users of the rig machine can already read the workspace);
 * - anything that changes state, and anything from another machine, needs the token.
 */
export function authorize(req: IncomingMessage, options: { token: string; loopbackOnly: boolean; mutating: boolean }): void {
  if (options.loopbackOnly) {
    const hostname = hostnameOf(req.headers.host);
    if (hostname === null || !isLoopbackHost(hostname)) {
      throw new ApiError(403, 'forbidden_host', `Host "${req.headers.host ?? ''}" is not a loopback name; use http://127.0.0.1`);
    }
  }
  const fromLoopback = isLoopbackAddress(req.socket.remoteAddress);
  if (!options.mutating && fromLoopback) return;
  const given = bearerToken(req);
  if (given === null) {
    const need = options.mutating ? 'this request changes state and needs the bench app\'s token' : 'requests from other machines need the bench app\'s token';
    throw new ApiError(401, 'token_required', `${need}: open the app with the whole address \`icabench serve\` printed (it ends in #token=…), or send "Authorization: Bearer <token>"`);
  }
  if (!tokensEqual(given, options.token)) throw new ApiError(401, 'token_invalid', 'the bearer token does not match this server (restarted with a new token? open the address it printed this time)');
}

function hostnameOf(host: string | undefined): string | null {
  if (!host) return null;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}
