import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../domain/api-error.ts';
import { checkStructure, MAX_MESSAGE_DEPTH } from '../protocol/structure.ts';

// the API's error and request parsing are shared with the kinds' own routes (src/run/kind-view.ts)
export { ApiError, fieldErrorsOf, parseRequest, type FieldError } from '../domain/api-error.ts';

/** Bytes of an oversized body read and thrown away after the 413, so the client (still sending) reads the answer instead of a reset. */
const MAX_DISCARDED_BYTES = 64 * 1024 * 1024;

/**
 * Reads a JSON body, refusing more than `maxBytes` before parsing anything:
 * a declared Content-Length over the limit is rejected without reading, a body
 * that grows past it (chunked) is refused as soon as it does. The rest of a refused
 * body is drained, not cut: destroying the request would reset the connection
 * before the client reads the 413.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ApiError(415, 'unsupported_media_type', `expected Content-Type application/json, got "${type || '(none)'}"`);
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    drainRefusedBody(req);
    throw new ApiError(413, 'payload_too_large', `request body is ${declared} bytes; the limit is ${maxBytes} bytes`);
  }
  const chunks = await new Promise<Buffer[]>((resolveBody, rejectBody) => {
    const received: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        received.push(chunk);
        return;
      }
      req.off('data', onData).off('end', onEnd).off('error', rejectBody);
      drainRefusedBody(req);
      rejectBody(new ApiError(413, 'payload_too_large', `request body exceeds the limit of ${maxBytes} bytes`));
    };
    const onEnd = () => resolveBody(received);
    req.on('data', onData).once('end', onEnd).once('error', rejectBody);
  });
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, 'malformed_json', `request body is not valid JSON: ${(error as Error).message}`);
  }
  // before the schema (or anything else) walks it: no request needs more than a few levels
  const violation = checkStructure(value, { maxDepth: MAX_MESSAGE_DEPTH, maxEntries: 20_000, maxStringChars: maxBytes });
  if (violation) throw new ApiError(400, 'invalid_request', `request body: ${violation.message}`);
  return value;
}

/** Reads and discards the rest of a refused body (up to MAX_DISCARDED_BYTES; beyond that the client is not listening and the connection is dropped). */
function drainRefusedBody(req: IncomingMessage): void {
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > MAX_DISCARDED_BYTES) req.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

/** A percent-encoded path segment decoded; a lone % or a broken UTF-8 sequence is the client's error (400). */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ApiError(400, 'malformed_url', `"${segment.slice(0, 100)}" is not valid percent-encoding (e.g. a lone % or a broken UTF-8 sequence)`);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** Sends JSON already serialised (e.g. summary.json byte for byte as `icabench report` writes it). */
export function sendJsonText(res: ServerResponse, status: number, payload: string): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, error: unknown): void {
  if (error instanceof ApiError) {
    sendJson(res, error.status, { error: { code: error.code, message: error.message, fields: error.fields } });
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  sendJson(res, 500, { error: { code: 'internal', message, fields: [] } });
}
