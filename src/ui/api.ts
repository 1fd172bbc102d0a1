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
