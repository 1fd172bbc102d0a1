import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { startBridgeServer, type BridgeServer } from '../bridge/server.ts';
import { BRIDGE_TOKEN_ENV } from '../protocol/bridge.ts';
import { ConformanceReportSchema, type CheckResult, type ConformanceReport } from '../conformance/checks.ts';
import { runConformance } from '../conformance/run.ts';
import { writeConformanceReport } from '../conformance/report.ts';
import { ApiError } from './http-util.ts';

/** POST /api/conformance/start: where the bridge listens and how long it waits; the token defaults to $ICABENCH_BRIDGE_TOKEN. */
export const StartConformanceBodySchema = z
  .object({
    host: z.string().min(1).max(100).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(7311),
    token: z.string().min(1).max(500).optional(),
    waitSeconds: z.number().int().min(1).max(3600).default(120),
    turnTimeoutMs: z.number().int().min(100).max(600_000).default(15_000),
    reconnectWaitMs: z.number().int().min(100).max(600_000).default(15_000),
  })
  .strict();

/** A report id: the folder name under workspace/conformance/ */
const ReportIdSchema = z.string().regex(/^[0-9A-Za-z_-]{1,100}$/, 'expected a report id (letters, digits, - and _)');

/** A stored report as GET /api/conformance lists it. */
export interface ListedConformanceReport {
  id: string;
  unit: ConformanceReport['unit'];
  startedAt: string;
  passed: boolean;
  failed: string[];
}

/** A stored report that cannot be read, and why. */
export interface DamagedConformanceReport {
  id: string;
  problem: string;
}

export interface ConformanceStatus {
  state: 'idle' | 'waiting' | 'running' | 'done' | 'failed';
  /** the URL the unit dials while a run waits for it */
  bridgeUrl: string | null;
  checks: CheckResult[];
  /** the finished report's id, or why the run could not start */
  reportId: string | null;
  error: string | null;
}

/**
 * The bench app's conformance screen: one conformance run at a time (icabench conformance behind a button), its
 * checks as they complete, and the reports kept in workspace/conformance/<id>/ (the same three files the CLI writes).
 */
export class ConformanceApi {
  private status: ConformanceStatus = { state: 'idle', bridgeUrl: null, checks: [], reportId: null, error: null };
  /** the bridge of the run in progress, closed with the app */
  private bridge: BridgeServer | null = null;

  constructor(private readonly workspace: string) {}

  private get dir(): string {
    return join(this.workspace, 'conformance');
  }

  current(): ConformanceStatus {
    return this.status;
  }

  async start(request: z.output<typeof StartConformanceBodySchema>): Promise<ConformanceStatus> {
    if (this.status.state === 'waiting' || this.status.state === 'running') throw new ApiError(409, 'conformance_running', 'a conformance run is already waiting or running');
    const token = request.token ?? process.env[BRIDGE_TOKEN_ENV];
    if (!token) throw new ApiError(400, 'token_required', `a bridge token is required: give one, or start the app with $${BRIDGE_TOKEN_ENV} set`);
    const bridge = await startBridgeServer({ host: request.host, port: request.port, token, turnTimeoutMs: request.turnTimeoutMs }).catch((error: Error) => {
      throw new ApiError(409, 'bridge_unavailable', `the bridge cannot listen on ${request.host}:${request.port}: ${error.message}`);
    });
    const status: ConformanceStatus = { state: 'waiting', bridgeUrl: bridge.url, checks: [], reportId: null, error: null };
    this.status = status;
    this.bridge = bridge;
    const id = new Date().toISOString().replace(/[:.]/g, '-');
    void runConformance({
      bridge,
      turnTimeoutMs: request.turnTimeoutMs,
      waitMs: request.waitSeconds * 1000,
      reconnectWaitMs: request.reconnectWaitMs,
      onCheck: (check) => {
        status.state = 'running';
        status.checks = [...status.checks, check];
      },
    })
      .then((report) => {
        writeConformanceReport(report, join(this.dir, id));
        status.state = 'done';
        status.reportId = id;
      })
      .catch((error: Error) => {
        status.state = 'failed';
        status.error = error.message;
      })
      .finally(() => {
        if (this.bridge === bridge) this.bridge = null;
        void bridge.close();
      });
    return status;
  }

  /** Stops a run in progress (the app is closing): its bridge hangs up and the run fails what is left. */
  async close(): Promise<void> {
    await this.bridge?.close();
  }

  /**
   * The stored reports, newest first. A report that cannot be read (truncated, hand-edited) is listed under
   * `damaged` with what is wrong with it, and the rest are listed as usual: one bad file never fails the list.
   */
  list(): { reports: ListedConformanceReport[]; damaged: DamagedConformanceReport[] } {
    const listing: { reports: ListedConformanceReport[]; damaged: DamagedConformanceReport[] } = { reports: [], damaged: [] };
    if (!existsSync(this.dir)) return listing;
    const ids = readdirSync(this.dir)
      .filter((id) => ReportIdSchema.safeParse(id).success && existsSync(join(this.dir, id, 'conformance.json')))
      .sort()
      .reverse();
    for (const id of ids) {
      const read = this.read(id);
      if ('problem' in read) listing.damaged.push({ id, problem: read.problem });
      else listing.reports.push({ id, unit: read.report.unit, startedAt: read.report.startedAt, passed: read.report.passed, failed: read.report.checks.filter((c) => c.status === 'fail').map((c) => c.id) });
    }
    return listing;
  }

  private read(id: string): { report: ConformanceReport } | { problem: string } {
    const path = join(this.dir, id, 'conformance.json');
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      return { problem: `${path}: not readable as JSON (${(error as Error).message})` };
    }
    const parsed = ConformanceReportSchema.safeParse(value);
    if (!parsed.success) return { problem: `${path}: not a conformance report (${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')})` };
    return { report: parsed.data };
  }

  report(rawId: string): ConformanceReport {
    const id = ReportIdSchema.safeParse(rawId);
    if (!id.success) throw new ApiError(400, 'invalid_request', `report id: ${id.error.issues[0].message}`);
    if (!existsSync(join(this.dir, id.data, 'conformance.json'))) throw new ApiError(404, 'report_not_found', `no conformance report "${id.data}" in this workspace`);
    const read = this.read(id.data);
    if ('problem' in read) throw new ApiError(422, 'report_invalid', read.problem);
    return read.report;
  }
}
