/**
 * The Content Security Policy of the bench UI, used by the server for every UI response and by
 * the Electron shell for every response its window receives. Everything comes from the bench
 * server's own origin: no inline script, no eval, no CDN, no framing.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
