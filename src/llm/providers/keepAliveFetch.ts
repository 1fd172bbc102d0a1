import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/**
 * The fetch the model clients (openai, ollama) use for non-streaming calls: one `http.request` on a
 * keep-alive socket, the whole answer read into one buffer. Node's own fetch (undici) costs about
 * three times the CPU per call (web streams, WebIDL conversions, its fetch algorithm); a campaign
 * makes thousands of small JSON calls to a loopback or lab host, where that overhead is most of the
 * bench's own time per call (docs/benchmarks.md, issue #26). Streaming calls keep the platform fetch:
 * their body must arrive piece by piece.
 *
 * It follows no redirects (the endpoint policy forbids them: `redirect: 'error'` fails like fetch does)
 * and fails like fetch on a network error (TypeError "fetch failed" with the cause) or an abort (the
 * signal's reason), so the clients' own error handling is unchanged.
 */
export const keepAliveFetch: typeof fetch = (input, init) => {
  const body = init?.body;
  // a Request object or a streamed/binary body: none of the model clients' JSON calls, leave them to the platform
  if ((typeof input !== 'string' && !(input instanceof URL)) || (body != null && typeof body !== 'string')) return globalThis.fetch(input, init);
  const url = new URL(input);
  const method = (init?.method ?? 'GET').toUpperCase();
  const headers = plainHeaders(init?.headers);
  if (body != null) headers['content-length'] = String(Buffer.byteLength(body));
  return send(url, method, headers, body ?? undefined, init?.redirect ?? 'follow', init?.signal ?? undefined, true);
};

// keep-alive sockets per protocol, shared by every provider: the limiter bounds how many are busy at once
const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };

const REDIRECT = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);

function send(url: URL, method: string, headers: Record<string, string>, body: string | undefined, redirect: RequestRedirect, signal: AbortSignal | undefined, mayRetry: boolean): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const https = url.protocol === 'https:';
    if (!https && url.protocol !== 'http:') return reject(new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) }));
    const request: ClientRequest = (https ? httpsRequest : httpRequest)(url, { method, headers, agent: agents[url.protocol as 'http:' | 'https:'] });
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const onAbort = () => {
      request.destroy();
      finish(() => reject(abortReason(signal!)));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error: NodeJS.ErrnoException) => {
      // the server closed an idle keep-alive socket just as it was reused: the request never reached it, send it once more
      if (mayRetry && request.reusedSocket && error.code === 'ECONNRESET' && !settled) {
        finish(() => send(url, method, headers, body, redirect, signal, false).then(resolve, reject));
        return;
      }
      finish(() => reject(new TypeError('fetch failed', { cause: error })));
    });
    request.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      if (REDIRECT.has(status) && redirect !== 'manual') {
        response.resume();
        finish(() => reject(new TypeError('fetch failed', { cause: new Error(redirect === 'error' ? 'unexpected redirect' : 'keepAliveFetch does not follow redirects') })));
        return;
      }
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => finish(() => reject(new TypeError('fetch failed', { cause: error }))));
      response.on('end', () =>
        finish(() => {
          try {
            const bytes = NULL_BODY.has(status) || method === 'HEAD' ? null : decoded(Buffer.concat(chunks), response.headers['content-encoding']);
            resolve(new BufferedResponse(bytes, { status, statusText: response.statusMessage ?? '', headers: responseHeaders(response.rawHeaders) }));
          } catch (error) {
            reject(new TypeError('fetch failed', { cause: error }));
          }
        }),
      );
    });
    request.end(body);
  });
}

/**
 * A Response whose body is already in memory: json() and text() read the buffer directly. A plain
 * `new Response(bytes)` wraps it in a web stream that every read goes through (about 20 µs and several
 * objects per call); `body` still gives that stream, built on first use, for a reader that wants one.
 */
export class BufferedResponse extends Response {
  #bytes: Buffer | null;
  #used = false;
  #stream: ReadableStream<Uint8Array<ArrayBuffer>> | null | undefined;

  constructor(bytes: Buffer | null, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (this.#stream === undefined) this.#stream = this.#bytes && new Response(new Uint8Array(this.#bytes)).body;
    return this.#stream;
  }

  override get bodyUsed(): boolean {
    return this.#used || (this.#stream?.locked ?? false);
  }

  override async text(): Promise<string> {
    return this.#consume().toString('utf8');
  }

  override async json(): Promise<any> {
    return JSON.parse(await this.text());
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#consume();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  #consume(): Buffer {
    if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    return this.#bytes ?? Buffer.alloc(0);
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The request headers as http.request takes them (the clients pass a Headers object, pairs or a record). */
function plainHeaders(headers: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  if (headers instanceof Headers) headers.forEach((value, name) => (out[name] = value));
  else if (Array.isArray(headers)) for (const [name, value] of headers) out[name.toLowerCase()] = value;
  else for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

function responseHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  return headers;
}

/** Bodies are small JSON answers; a server only compresses when asked, but one that does anyway is still read. */
function decoded(bytes: Buffer, encoding: string | undefined): Buffer {
  switch (encoding?.trim().toLowerCase()) {
    case undefined:
    case '':
    case 'identity':
      return bytes;
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(bytes);
    case 'deflate':
      return inflateSync(bytes);
    case 'br':
      return brotliDecompressSync(bytes);
    default:
      throw new Error(`unsupported content-encoding "${encoding}"`);
  }
}
