import type { FieldError } from '../server/http-util.ts';

const TOKEN_KEY = 'icabench.token';

/** The server hands the token over in the URL fragment (never sent over the wire); keep it for this tab and drop it from the address bar. */
export function adoptTokenFromLocation(): void {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    const rest = window.location.hash.replace(/(?:^#|&)token=[^&]+/, '').replace(/^&/, '');
    history.replaceState(null, '', `${window.location.pathname}#${rest.startsWith('/') ? rest : '/' + rest}`);
  }
}

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** The token in what a user pasted: the address `icabench serve` printed (…/#token=…) or the token alone; null when neither. */
export function tokenFromPasted(text: string): string | null {
  const trimmed = text.trim();
  const inUrl = /[#&]token=([^&\s]+)/.exec(trimmed);
  if (inUrl) return decodeURIComponent(inUrl[1]);
  return /^[A-Za-z0-9_-]{16,}$/.test(trimmed) ? trimmed : null;
}

/** Keeps a pasted token for this tab (as adoptTokenFromLocation does for one in the address). */
export function adoptToken(value: string): void {
  sessionStorage.setItem(TOKEN_KEY, value);
}

/** Why the server refuses this tab: no token, or one that is not this server's (it restarted with a new one). */
export type TokenRefusal = 'token_required' | 'token_invalid';
const refusalListeners = new Set<(refusal: TokenRefusal) => void>();

/** Calls `listener` whenever the server refuses a request or the live feed for want of the right token; returns the unsubscribe. */
export function onTokenRefused(listener: (refusal: TokenRefusal) => void): () => void {
  refusalListeners.add(listener);
  return () => {
    refusalListeners.delete(listener);
  };
}

/** Tells the app the server refused this tab's token (an API answer or the live feed's connect error). */
export function tokenRefused(code: string): void {
  if (code === 'token_required' || code === 'token_invalid') for (const listener of refusalListeners) listener(code);
}

/** A refused request, with the server's field errors for the form that sent it. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: FieldError[],
  ) {
    super(message);
  }
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const t = token();
  if (t) headers.authorization = `Bearer ${t}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = (await res.json().catch(() => null)) as { error?: { code: string; message: string; fields: FieldError[] } } | null;
  if (!res.ok) {
    const error = data?.error;
    if (res.status === 401 && error) tokenRefused(error.code);
    throw new ApiFailure(res.status, error?.code ?? 'http_error', error?.message ?? `${method} ${path}: HTTP ${res.status}`, error?.fields ?? []);
  }
  return data as T;
}

export const api = {
  get: <T>(path: string) => call<T>('GET', path),
  post: <T>(path: string, body: unknown = {}) => call<T>('POST', path, body),
};

/** Fetches a binary resource with the token (media elements cannot send headers) and returns an object URL. */
export async function blobUrl(path: string): Promise<string> {
  const t = token();
  const res = await fetch(path, { headers: t ? { authorization: `Bearer ${t}` } : {} });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return URL.createObjectURL(await res.blob());
}
