import { readFile, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { CONTENT_SECURITY_POLICY } from './csp.ts';
import { decodePathSegment } from './http-util.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export function securityHeaders(): Record<string, string> {
  return {
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  };
}

/** Serves the built UI; unknown paths get index.html (the UI routes by URL fragment). */
export async function serveUi(uiDir: string | null, pathname: string, res: ServerResponse): Promise<void> {
  if (uiDir === null) {
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...securityHeaders() });
    res.end('The bench UI is not built. Run `npm run build:ui`, then reload.\n');
    return;
  }
  const relative = normalize(decodePathSegment(pathname)).replace(/^([/\\])+/, '');
  const candidate = join(uiDir, relative);
  const inside = candidate === uiDir || candidate.startsWith(uiDir.endsWith(sep) ? uiDir : uiDir + sep);
  let file = join(uiDir, 'index.html');
  if (inside && relative !== '') {
    try {
      if ((await stat(candidate)).isFile()) file = candidate;
    } catch {
      // not a file of the build: fall back to the app shell
    }
  }
  let body: Buffer;
  try {
    body = await readFile(file);
  } catch {
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...securityHeaders() });
    res.end(`The bench UI is not built (${file} is missing). Run \`npm run build:ui\`, then reload.\n`);
    return;
  }
  const hashed = file.includes(`${sep}assets${sep}`);
  res.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': body.length,
    'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
    ...securityHeaders(),
  });
  res.end(body);
}
