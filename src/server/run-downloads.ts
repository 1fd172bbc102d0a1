import { createReadStream, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { campaignKind } from '../kinds/registry.ts';
import { exportJsonl } from '../store/export.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';
import { ApiError, parseRequest, sendJson } from './http-util.ts';
import { securityHeaders } from './static.ts';

/** Where the app writes the outputs it hands over (under the workspace, one folder per run, rewritten when the run changes). */
export const APP_OUTPUTS_DIR = 'app-outputs';
/** The JSONL export (`icabench export RUN`), streamed from the store rather than written. */
export const EXPORT_FILE = 'export.jsonl';

const OutputNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,60}$/, 'expected an output file name such as report.html');

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/** A report opened in the app's window: its own inline chart script and styles run, nothing is fetched, nothing frames it. */
const REPORT_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; media-src data: blob:; frame-ancestors 'none'";

export interface RunOutputFile {
  name: string;
  /** size in bytes; null for the export, which is streamed */
  bytes: number | null;
}

/**
 * The outputs of a stored run as the app hands them over: exactly the files `icabench report RUN` writes (each kind's
 * own writer, `outputs.write`: report.html, summary.json, junit.xml, the CSV) and the JSONL of `icabench export RUN`.
 * The files are written once per state of the run (conversations stored, status, run facts) and reused until it changes.
 */
export class RunDownloads {
  private readonly written = new Map<string, { stamp: string; files: Promise<string[]> }>();

  constructor(
    private readonly store: ResultStore,
    private readonly workspace: string,
  ) {}

  async list(run: RunRecord): Promise<RunOutputFile[]> {
    const dir = this.dirOf(run.id);
    const files = await this.write(run);
    return [...files.map((name) => ({ name, bytes: statSync(join(dir, name)).size })), { name: EXPORT_FILE, bytes: null }];
  }

  /** Sends one output as a download (`inline`: report.html opened in a window instead). */
  async send(run: RunRecord, rawName: string, res: ServerResponse, inline: boolean): Promise<void> {
    const name = parseRequest(OutputNameSchema, rawName, 'output name');
    const headers = (extension: string) => ({
      ...securityHeaders(),
      'content-type': CONTENT_TYPES[extension] ?? 'application/octet-stream',
      'cache-control': 'no-store',
      'content-disposition': `${inline ? 'inline' : 'attachment'}; filename="${run.id}-${name}"`,
      ...(inline ? { 'content-security-policy': REPORT_CSP } : {}),
    });
    if (name === EXPORT_FILE) {
      res.writeHead(200, headers('jsonl'));
      await exportJsonl(this.store, run.id, res);
      res.end();
      return;
    }
    const files = await this.write(run);
    if (!files.includes(name)) throw new ApiError(404, 'output_not_found', `run ${run.id} has no output "${name}" (it has ${[...files, EXPORT_FILE].join(', ')})`);
    const path = join(this.dirOf(run.id), name);
    res.writeHead(200, { ...headers(name.split('.').pop() ?? ''), 'content-length': statSync(path).size });
    await pipeline(createReadStream(path), res);
  }

  private dirOf(runId: string): string {
    return join(this.workspace, APP_OUTPUTS_DIR, runId);
  }

  /** The run's output files (names), written by its kind's writer unless the run has not changed since the last time. */
  private write(run: RunRecord): Promise<string[]> {
    const stamp = this.store.runStamp(run);
    const hit = this.written.get(run.id);
    if (hit && hit.stamp === stamp) return hit.files;
    const dir = this.dirOf(run.id);
    const files = (async () => {
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
      await (await campaignKind(run.kind)).outputs.write(this.store, run.id, dir);
      return readdirSync(dir).filter((name) => statSync(join(dir, name)).isFile()).sort();
    })();
    this.written.set(run.id, { stamp, files });
    files.catch(() => this.written.delete(run.id));
    return files;
  }
}

type Params = Record<string, string>;

/** The download routes of the bench API (GET /api/runs/:id/outputs, GET /api/runs/:id/outputs/:name[?inline=1]). */
export function runDownloadRoutes(downloads: RunDownloads, requireRun: (id: string) => RunRecord) {
  return [
    {
      method: 'GET' as const,
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/outputs$/,
      handle: async (_q: IncomingMessage, res: ServerResponse, p: Params) => sendJson(res, 200, { files: await downloads.list(requireRun(p.id)) }),
    },
    {
      method: 'GET' as const,
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/outputs\/(?<name>[^/]+)$/,
      handle: (_q: IncomingMessage, res: ServerResponse, p: Params, query: URLSearchParams) => downloads.send(requireRun(p.id), p.name, res, query.get('inline') === '1'),
    },
  ];
}
