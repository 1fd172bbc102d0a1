import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/**
 * A small `fetch` over node:http with keep-alive agents, for the model clients (ollama, openai).
 *
 * Why not the global fetch: Node's built-in fetch (undici behind WHATWG streams, Request objects and
 * a per-request fetch controller) costs about 0.5 ms of CPU per call on the bench
 * machine, against about 0.1 ms for node:http on a kept-alive socket. A campaign makes thousands of
 * model calls through a fixed number of server slots, so that overhead is slot time lost on every call
 * (docs/benchmarks.md, "Local models").
 *
 * What it supports is what the model clients use: http/https URLs, string or byte bodies, header
 * objects in any of the usual forms, AbortSignal, and a streamed response body (NDJSON, SSE). Anything
 * else (a Request object, a stream or form body, another scheme) goes to the global fetch unchanged.
 *
 * Differences from the global fetch, on purpose:
 * - redirects are never followed: with `redirect: 'manual'` the 3xx response is returned, otherwise the
 *   call fails as `redirect: 'error'` does (the endpoint policy asks for exactly that);
 * - no `accept-encoding` is sent (a local model server has no reason to compress); a compressed
 *   answer is still decoded.
 * Errors look like the global fetch's: a network failure rejects with TypeError("fetch failed") whose
 * `cause` carries the system error (code ECONNREFUSED, …); an abort rejects with the signal's reason;
 * a body cut short errors the body stream with TypeError("terminated").
 */
export type FetchLike = typeof fetch;

// One pool per process, like the global fetch's dispatcher. Idle sockets are unref'd (they never keep the
// process alive) and closed before the server's announced Keep-Alive timeout; LIFO reuse leaves the
// rest idle, so a pool sized for a burst shrinks back on its own.
const agents = {
  http: new http.Agent({ keepAlive: true, scheduling: 'lifo' }),
  https: new https.Agent({ keepAlive: true, scheduling: 'lifo' }),
};

const REDIRECT = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

type Body = string | Uint8Array | undefined;

function plainBody(body: RequestInit['body']): Body | null {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return null;
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  if (headers instanceof Headers) {
    headers.forEach((value, name) => {
      out[name] = value;
    });
  } else if (Array.isArray(headers)) {
    for (const [name, value] of headers) out[name.toLowerCase()] = value;
  } else {
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name.toLowerCase()] = String(value);
  }
  return out;
}

function responseHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  return headers;
}

function decoded(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  if (!decoder) return res;
  res.on('error', (error) => decoder.destroy(error));
  return res.pipe(decoder);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * The response body as a web stream fed from the node stream, with backpressure (pause/resume).
 * `fail` errors the stream with the given reason (a late abort: a pending read rejects with it, as with fetch).
 */
function bodyStream(source: Readable, res: http.IncomingMessage, onDone: () => void): { stream: ReadableStream<Uint8Array>; fail: (reason: unknown) => void } {
  let finished = false;
  let control: ReadableStreamDefaultController<Uint8Array> | undefined;
  const fail = (reason: unknown) => {
    if (finished) return;
    finished = true;
    onDone();
    control?.error(reason);
    source.destroy();
    res.destroy();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        control = controller;
        source.on('data', (chunk: Buffer) => {
          if (finished) return;
          controller.enqueue(chunk);
          if ((controller.desiredSize ?? 1) <= 0) source.pause();
        });
        source.once('end', () => {
          if (finished) return;
          finished = true;
          onDone();
          controller.close();
        });
        source.on('error', (error) => fail(new TypeError('terminated', { cause: error })));
        // the connection closed before the whole body arrived (server died, stream cut)
        res.once('close', () => {
          if (!res.complete) fail(new TypeError('terminated', { cause: new Error('other side closed') }));
        });
      },
      pull() {
        if (source.isPaused()) source.resume();
      },
      cancel() {
        finished = true;
        onDone();
        res.destroy();
      },
    },
    { highWaterMark: 16 },
  );
  return { stream, fail };
}

function send(url: URL, method: string, headers: Record<string, string>, body: Body, init: RequestInit): Promise<Response> {
  const signal = init.signal ?? undefined;
  return new Promise<Response>((resolvePromise, rejectPromise) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    let res: http.IncomingMessage | undefined;
    let failBody: ((reason: unknown) => void) | undefined;
    const onAbort = () => {
      const reason = abortReason(signal!);
      if (!settled) {
        req?.destroy();
        settled = true;
        rejectPromise(reason);
      } else if (failBody) failBody(reason);
      else res?.destroy();
    };
    const detach = () => signal?.removeEventListener('abort', onAbort);
    if (signal?.aborted) {
      rejectPromise(abortReason(signal));
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });

    const transport = url.protocol === 'https:' ? https : http;
    req = transport.request(url, { method, headers, agent: url.protocol === 'https:' ? agents.https : agents.http });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // no retry here, not even on a kept-alive socket that turns out closed: a server that cut the
      // connection may have received the request (the structured-output layer retries server errors)
      if (settled) return;
      settled = true;
      detach();
      rejectPromise(new TypeError('fetch failed', { cause: error }));
    });
    req.once('response', (incoming) => {
      res = incoming;
      if (settled) {
        incoming.destroy();
        return;
      }
      const status = incoming.statusCode ?? 0;
      if (REDIRECT.has(status) && init.redirect !== 'manual') {
        settled = true;
        detach();
        incoming.destroy();
        rejectPromise(new TypeError('fetch failed', { cause: new Error('unexpected redirect') }));
        return;
      }
      settled = true;
      const headersOut = responseHeaders(incoming.rawHeaders);
      let stream: ReadableStream<Uint8Array> | null = null;
      if (NULL_BODY.has(status) || method === 'HEAD') {
        incoming.resume();
        incoming.once('end', detach);
        incoming.once('close', detach);
      } else {
        const body = bodyStream(decoded(incoming), incoming, detach);
        stream = body.stream;
        failBody = body.fail;
      }
      let response: Response;
      try {
        response = new Response(stream, { status, statusText: incoming.statusMessage ?? '', headers: headersOut });
      } catch (error) {
        // a status outside 200–599 (fetch refuses those too)
        detach();
        incoming.destroy();
        rejectPromise(new TypeError('fetch failed', { cause: error }));
        return;
      }
      Object.defineProperty(response, 'url', { value: url.href });
      resolvePromise(response);
    });
    req.end(body);
  });
}

/** The keep-alive node:http fetch (see the module comment). */
export const httpFetch: FetchLike = (input, init = {}) => {
  const body = plainBody(init.body);
  const href = typeof input === 'string' ? input : input instanceof URL ? input.href : null;
  if (href === null || body === null) return globalThis.fetch(input, init);
  let url: URL;
  try {
    url = new URL(href);
  } catch (error) {
    return Promise.reject(new TypeError(`Failed to parse URL from ${href}`, { cause: error }));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return globalThis.fetch(input, init);
  const method = (init.method ?? 'GET').toUpperCase();
  const headers = headerRecord(init.headers);
  if (body !== undefined) {
    headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    if (headers['content-type'] === undefined && typeof body === 'string') headers['content-type'] = 'text/plain;charset=UTF-8';
  }
  headers.accept ??= '*/*';
  return send(url, method, headers, body, init);
};
