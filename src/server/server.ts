import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { Server as SocketServer } from 'socket.io';
import { z } from 'zod';
import { ConfigError } from '../config/yaml.ts';
import type { KindConfig, LoadedKindConfig } from '../run/kind.ts';
import type { ListedRunView } from '../run/kind-view.ts';
import type { ConversationResult } from '../domain/conversation.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';
import {
  CompareQuerySchema,
  ConfigNameSchema,
  ResumeCampaignBodySchema,
  RunIdSchema,
  StartCampaignBodySchema,
  StopCampaignBodySchema,
  ValidateConfigBodySchema, StartSessionBodySchema, SessionTurnBodySchema, SessionContextBodySchema, EndSessionBodySchema } from './api-schemas.ts';
import { authorize, isLoopbackHost, newToken, tokensEqual } from './auth.ts';
import { CampaignControl, type CampaignLauncher } from './campaign-control.ts';
import { ConfigCatalog, type ConfigFieldError } from './configs.ts';
import { ConformanceApi, StartConformanceBodySchema } from './conformance-runs.ts';
import { campaignConfigSchemaFor, campaignKindOfValue, comparedKindGroups, configModelRefs, type AnyCampaignKind } from '../kinds/registry.ts';
import { RunnerLauncher, discardMaterialized, materializeConfig } from './launcher.ts';
import { LiveSessionApi } from './live-session-api.ts';
import { PathPolicy } from './path-policy.ts';
import { generateTestSetFromConfig, GenerateTestSetBodySchema } from './manual-testsets.ts';
import { ApiError, decodePathSegment, parseRequest, readJsonBody, sendError, sendJson, sendJsonText } from './http-util.ts';
import { KindViews } from './kind-views.ts';
import { rigStatus, type RigStatusSources } from './rig-status.ts';
import { securityHeaders, serveUi } from './static.ts';
import { RunDownloads, runDownloadRoutes } from './run-downloads.ts';
import { PinnedSuites, pinnedSuiteRoutes } from './pinned-suites.ts';
import { suitesFolder } from '../suite/folder.ts';
import { requireConversation } from '../kinds/dialogue/run-view.ts';

export interface BenchServerOptions {
  store: ResultStore;
  workspace: string;
  /** bench-configs/ */
  configsDir: string;
  /** default: the real campaign runner (RunnerLauncher); tests pass a scripted one */
  launcher?: CampaignLauncher;
  /** default 127.0.0.1; anything else requires the token on every request */
  host?: string;
  /** default 0 (any free port) */
  port?: number;
  /** default: a fresh random token */
  token?: string;
  /** where the token is kept for a tab opened without it (src/server/token-file.ts); GET /api/health names it */
  tokenFile?: string;
  /** built UI (src/ui/dist); null serves a "not built" notice */
  uiDir?: string | null;
  /** JSON request bodies above this are refused with 413 (default 1 MiB) */
  maxBodyBytes?: number;
  /** where the rig status gets connected head units and model references (defaults: the runner's bridge, the bench configs) */
  rig?: RigStatusSources;
  /** the real runner's progress lines, as `icabench run` prints them on stderr (e.g. where a bridge head unit dials in); default: none */
  log?: (line: string) => void;
  /** a fleet Redis URL: the real runner runs campaigns on its workers (`icabench serve --fleet`, docs/fleet.md) */
  fleet?: string;
  /** where Pin writes suites and "Run pinned suite" reads them (default: src/suite/folder.ts, suitesFolder) */
  suitesDir?: string;
}

export interface BenchServer {
  /** http://host:port, no trailing slash */
  url: string;
  token: string;
  workspace: string;
  control: CampaignControl;
  /** every API route (method and path pattern), e.g. for checking each against the path policy */
  routes: ReadonlyArray<{ method: string; pattern: RegExp }>;
  close(): Promise<void>;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** socket.io frames from the UI carry nothing; keep them tiny */
const SOCKET_MAX_BYTES = 16 * 1024;

type Params = Record<string, string>;
interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  handle: (req: IncomingMessage, res: ServerResponse, params: Params, query: URLSearchParams) => Promise<void>;
}

/** What the API's routes share: the options, the store, the campaign control, the config catalog, the kinds' views, and the checks every route makes alike. */
interface ServerContext {
  options: BenchServerOptions;
  store: ResultStore;
  control: CampaignControl;
  catalog: ConfigCatalog;
  conformance: ConformanceApi;
  sessions: LiveSessionApi;
  rigSources: RigStatusSources;
  views: KindViews;
  suites: PinnedSuites;
  downloads: RunDownloads;
  maxBodyBytes: number;
  body<S extends z.ZodType>(req: IncomingMessage, schema: S, where: string): Promise<z.output<S>>;
  requireRun(id: string): RunRecord;
  resumeFrom(run: RunRecord): Promise<{ kind: AnyCampaignKind; config: KindConfig }>;
  /** `outcomes`: the run's outcome counts when the caller read them for many runs at once (the runs list) */
  listedRun(run: RunRecord, outcomes?: Record<string, number>): Promise<ListedRun>;
  /** the one start sequence of every start path (a bench config, its edited text, a pinned suite, a resumed run); see serverContext */
  startCampaign(start: CampaignStart): Promise<{ runId: string }>;
  /** starts a campaign from a config value the server built (a pinned suite's replay), checked as one from the editor */
  startFromValue(value: unknown, label: string): Promise<{ runId: string }>;
}

/** What a start path hands to the one start sequence: a validated config of a kind, and how the run is named and begins. */
interface CampaignStart {
  kind: AnyCampaignKind;
  config: KindConfig;
  /** the config's name in messages and with the run (a bench config's file name, a stored run's name) */
  label: string;
  /** a bench config started as it is on disk: loaded from this file instead of written where the app keeps edited configs */
  file?: string;
  resumeRunId?: string;
}

/** A config that does not validate: the client's mistake, 400 with every field's error (the same answer on every start path). */
function invalidConfig(label: string, errors: ConfigFieldError[]): ApiError {
  return new ApiError(400, 'invalid_config', `${label}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
}

/** Starts the bench server: JSON API under /api, live campaign events over socket.io, the UI everywhere else. */
export async function startBenchServer(options: BenchServerOptions): Promise<BenchServer> {
  const host = options.host ?? '127.0.0.1';
  const loopbackOnly = isLoopbackHost(host);
  const token = options.token ?? newToken();
  const runner = options.launcher ? null : new RunnerLauncher(options.store, options.log, options.fleet);
  const control = new CampaignControl(options.launcher ?? runner!.launch);
  const ctx = serverContext(options, control, runner);
  const routes = apiRoutes(ctx);
  const http = createServer((req, res) => {
    void handleRequest(req, res, { ctx, routes, token, loopbackOnly }).catch((error: unknown) => sendError(res, error));
  });
  const io = liveFeed(http, { token, loopbackOnly });
  io.on('connection', (socket) => {
    socket.emit('campaign', { type: 'control', snapshot: control.current() });
    // the UI only listens; anything it sends is ignored
    socket.onAny(() => undefined);
  });
  control.subscribe((event) => {
    io.emit('campaign', event);
    // an item stored or the run ended: the kinds' views drop what they cached of the run
    if (event.type.endsWith('_finished') && 'runId' in event) ctx.views.invalidate(event.runId);
  });

  await new Promise<void>((resolveListen, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolveListen());
  });
  const address = http.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}`,
    token,
    workspace: options.workspace,
    control,
    routes: routes.map(({ method, pattern }) => ({ method, pattern })),
    async close() {
      if (control.isRunning()) await control.stop().catch(() => undefined);
      await ctx.conformance.close();
      await new Promise<void>((done) => io.close(() => done()));
      http.closeAllConnections();
    },
  };
}

/** The routes' shared state and checks. Every campaign kind validates with its own schema (src/kinds/registry.ts), and starts, resumes and reports on the one run skeleton. */
function serverContext(options: BenchServerOptions, control: CampaignControl, runner: RunnerLauncher | null): ServerContext {
  const { store } = options;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const views = new KindViews({ store, workspace: options.workspace });
  const suites = new PinnedSuites(store, options.suitesDir ?? suitesFolder(null, options.configsDir));
  // one path policy for every request that names a file (src/server/path-policy.ts); the pinned suites' folder is readable too
  const paths = new PathPolicy(options.workspace, options.configsDir, [suites.dir]);
  // the editor and the config list show what the app refuses at its field, so Start is never enabled only to refuse
  const catalog = new ConfigCatalog(options.configsDir, campaignConfigSchemaFor, async (kindName, config) => paths.campaignRefusals(await views.kind(kindName, kindName), config as KindConfig));
  /** A config started from the app may only name files under the allowed folders; checked before anything is read. */
  const requireAllowedPaths = (kind: AnyCampaignKind, config: KindConfig, where: string) => paths.requireCampaign(kind, config, where);
  /** What resuming a stored run starts from (its kind and stored config), or the error the resume endpoint answers. */
  const resumeFrom = async (run: RunRecord): Promise<{ kind: AnyCampaignKind; config: KindConfig }> => {
    if (run.status === 'completed') throw new ApiError(409, 'run_complete', `run ${run.id} is complete; nothing to resume`);
    const kind = await views.kind(run.kind, `run ${run.id}`);
    const check = catalog.checkValue(run.config);
    if (!check.valid) throw new ApiError(422, 'stored_config_invalid', `run ${run.id}: its stored config no longer validates: ${check.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, check.errors);
    requireAllowedPaths(kind, check.config as KindConfig, `run ${run.id}`);
    return { kind, config: check.config as KindConfig };
  };
  const loadCampaign = (load: () => LoadedKindConfig): LoadedKindConfig => {
    try {
      return load();
    } catch (error) {
      if (error instanceof ConfigError) throw new ApiError(400, 'invalid_config', error.message);
      throw error;
    }
  };
  /**
   * The one start sequence: the config's files checked against the path policy before anything is read, the config loaded
   * (from its file, or written where the app keeps the configs it starts), the run started; what was written for a start
   * that fails is removed again.
   */
  const startCampaign = async ({ kind, config, label, file, resumeRunId }: CampaignStart): Promise<{ runId: string }> => {
    requireAllowedPaths(kind, config, label);
    const campaign = loadCampaign(() => (file ? kind.load(file) : materializeConfig(kind, config, options.configsDir, options.workspace, label)));
    return control.start({ kind, loaded: campaign, configName: label, ...(resumeRunId ? { resumeRunId } : {}) }).catch((error: unknown) => {
      discardMaterialized(campaign, options.workspace);
      throw error;
    });
  };
  return {
    options,
    store,
    control,
    catalog,
    conformance: new ConformanceApi(options.workspace),
    sessions: new LiveSessionApi(control, Boolean(options.fleet), (config) => paths.liveSession(config, 'live session')),
    rigSources: { connectedUnits: runner?.connectedUnits, models: () => catalog.modelRefs(configModelRefs), ...options.rig },
    views,
    suites,
    downloads: new RunDownloads(store, options.workspace),
    maxBodyBytes,
    body: async (req, schema, where) => parseRequest(schema, await readJsonBody(req, maxBodyBytes), where),
    requireRun(id) {
      const runId = parseRequest(RunIdSchema, id, 'run id');
      const run = store.getRun(runId);
      if (!run) throw new ApiError(404, 'run_not_found', `no run "${runId}" in this workspace`);
      return run;
    },
    resumeFrom,
    startCampaign,
    async startFromValue(value, label) {
      const check = catalog.checkValue(value);
      if (!check.valid) throw invalidConfig(label, check.errors);
      return startCampaign({ kind: await views.kind(check.kind, label), config: check.config as KindConfig, label });
    },
    /** A run as the API lists it: without its config, how its kind shows it, and for a run with work left, why Resume would refuse it (null: it resumes), so the page can say so before the click. */
    async listedRun(run, outcomes = store.outcomeCounts(run.id)) {
      const listed = { ...withoutConfig(run), outcomes, view: await views.listed(run) };
      if (run.status === 'completed') return { ...listed, resumeRefusal: null };
      const refusal = await resumeFrom(run).then(
        () => null,
        (error: unknown) => {
          if (error instanceof ApiError) return error.message;
          throw error;
        },
      );
      return { ...listed, resumeRefusal: refusal };
    },
  };
}

const ok = (res: ServerResponse, value: unknown, status = 200) => {
  sendJson(res, status, value);
  return Promise.resolve();
};

/** Every route of the API, in the order a request is matched against them. */
function apiRoutes(ctx: ServerContext): Route[] {
  return [...statusRoutes(ctx), ...configRoutes(ctx), ...campaignRoutes(ctx), ...sessionRoutes(ctx), ...runRoutes(ctx), manualTestSetRoute(ctx)];
}

/** GEAR's test-set generator with a model, on the manual a config names (src/server/manual-testsets.ts). */
function manualTestSetRoute({ options, catalog, body }: ServerContext): Route {
  return {
    method: 'POST',
    pattern: /^\/api\/manual\/testsets$/,
    handle: async (req, res) => {
      const request = await body(req, GenerateTestSetBodySchema, 'test-set generation request');
      const readValidConfig = async (name: string) => {
        // the catalog's check includes the app's path policy: a manual outside the allowed folders is refused here
        const read = await catalog.read(name);
        if (!read.valid) throw new ApiError(400, 'invalid_config', `${name}: ${read.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, read.errors);
        return read.config;
      };
      return ok(res, await generateTestSetFromConfig(request, { configsDir: options.configsDir, workspace: options.workspace, readValidConfig }), 201);
    },
  };
}

/** The server's health, the rig status and the conformance screen. */
function statusRoutes(ctx: ServerContext): Route[] {
  const { options, rigSources, conformance, body } = ctx;
  return [
    { method: 'GET', pattern: /^\/api\/health$/, handle: (_q, res) => ok(res, { ok: true, workspace: options.workspace, tokenFile: options.tokenFile ?? null }) },
    {
      method: 'GET',
      pattern: /^\/api\/rig$/,
      handle: async (_q, res) => ok(res, { checks: await rigStatus(rigSources) }),
    },
    { method: 'GET', pattern: /^\/api\/conformance$/, handle: (_q, res) => ok(res, { current: conformance.current(), ...conformance.list() }) },
    {
      method: 'POST',
      pattern: /^\/api\/conformance\/start$/,
      handle: async (req, res) => ok(res, await conformance.start(await body(req, StartConformanceBodySchema, 'conformance start request')), 202),
    },
    { method: 'GET', pattern: /^\/api\/conformance\/(?<id>[^/]+)$/, handle: (_q, res, p) => ok(res, { report: conformance.report(p.id) }) },
  ];
}

/** The bench configs: the list, one config's text, and the editor's validation. */
function configRoutes(ctx: ServerContext): Route[] {
  const { catalog, body } = ctx;
  return [
    { method: 'GET', pattern: /^\/api\/configs$/, handle: async (_q, res) => ok(res, { configs: await catalog.list() }) },
    {
      method: 'GET',
      pattern: /^\/api\/configs\/(?<name>[^/]+)$/,
      handle: async (_q, res, p) => {
        const read = await catalog.read(parseRequest(ConfigNameSchema, p.name, 'config name'));
        return ok(res, { name: read.name, text: read.text, valid: read.valid, errors: read.errors });
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/configs\/validate$/,
      handle: async (req, res) => {
        const { text } = await body(req, ValidateConfigBodySchema, 'config validation request');
        const check = await catalog.checkForApp(text);
        return ok(res, { valid: check.valid, errors: check.errors });
      },
    },
  ];
}

/** The campaign: what runs now, start (a bench config, or its edited text), resume a stored run, stop. */
function campaignRoutes(ctx: ServerContext): Route[] {
  const { options, catalog, control, body, views, requireRun, resumeFrom, startCampaign } = ctx;
  return [
    { method: 'GET', pattern: /^\/api\/campaign$/, handle: (_q, res) => ok(res, control.current()) },
    {
      method: 'POST',
      pattern: /^\/api\/campaign\/start$/,
      handle: async (req, res) => {
        const request = await body(req, StartCampaignBodySchema, 'start request');
        const config = await catalog.read(request.configName);
        // the schema's verdict here; a path the app refuses is answered below as path_not_allowed (unreadable file: the read's error)
        const check = request.text === undefined && config.config === null ? config : catalog.check(request.text ?? config.text);
        if (!check.valid) throw invalidConfig(request.configName, check.errors);
        const kind = await views.kind(campaignKindOfValue(check.config), request.configName);
        const file = request.text === undefined ? join(options.configsDir, request.configName) : undefined;
        return ok(res, await startCampaign({ kind, config: check.config as KindConfig, label: request.configName, file }), 202);
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/campaign\/resume$/,
      handle: async (req, res) => {
        const { runId } = await body(req, ResumeCampaignBodySchema, 'resume request');
        const run = requireRun(runId);
        const { kind, config } = await resumeFrom(run);
        return ok(res, await startCampaign({ kind, config, label: run.name, resumeRunId: runId }), 202);
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/campaign\/stop$/,
      handle: async (req, res) => {
        await body(req, StopCampaignBodySchema, 'stop request');
        return ok(res, await control.stop());
      },
    },
  ];
}

/** A live session: start it, the technician's turns and changes to the car's state, end it. */
function sessionRoutes(ctx: ServerContext): Route[] {
  const { sessions, body } = ctx;
  return [
    { method: 'GET', pattern: /^\/api\/session$/, handle: (_q, res) => ok(res, sessions.current()) },
    {
      method: 'POST',
      pattern: /^\/api\/session\/start$/,
      handle: async (req, res) => ok(res, await sessions.start((await body(req, StartSessionBodySchema, 'session start')).config), 202),
    },
    {
      method: 'POST',
      pattern: /^\/api\/session\/turn$/,
      handle: async (req, res) => ok(res, await sessions.say((await body(req, SessionTurnBodySchema, 'session turn')).text)),
    },
    {
      method: 'POST',
      pattern: /^\/api\/session\/context$/,
      handle: async (req, res) => ok(res, sessions.setContext((await body(req, SessionContextBodySchema, 'session context')).change)),
    },
    {
      method: 'POST',
      pattern: /^\/api\/session\/end$/,
      handle: async (req, res) => {
        await body(req, EndSessionBodySchema, 'session end');
        return ok(res, await sessions.end());
      },
    },
  ];
}

/**
 * The stored runs: the list, one run, its summary.json and a comparison of two, alike for every kind; everything else
 * under /api/runs/<id>/ is a route the run's kind declares (its view, src/run/kind-view.ts), matched last.
 */
function runRoutes(ctx: ServerContext): Route[] {
  const { store, views, requireRun, listedRun, maxBodyBytes, downloads, suites, body, startFromValue } = ctx;
  return [
    {
      method: 'GET',
      pattern: /^\/api\/runs$/,
      // with the stored kinds whose runs compare, so the compare page refuses a pair with the server's own reason
      handle: async (_q, res) => {
        // every run's outcome counts in one query, not one per run
        const outcomes = store.outcomeCountsByRun();
        const runs = await Promise.all(store.listRuns().map((run) => listedRun(run, outcomes.get(run.id) ?? {})));
        return ok(res, { runs, comparedKindGroups: await comparedKindGroups() });
      },
    },
    { method: 'GET', pattern: /^\/api\/runs\/(?<id>[^/]+)$/, handle: async (_q, res, p) => ok(res, { run: await listedRun(requireRun(p.id)) }) },
    {
      method: 'GET',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/summary\.json$/,
      // the run's summary.json, byte for byte what `icabench run` and `icabench report RUN` write
      handle: async (_q, res, p) => sendJsonText(res, 200, await views.summaryJson(requireRun(p.id))),
    },
    ...runDownloadRoutes(downloads, requireRun),
    ...pinnedSuiteRoutes({ suites, requireRun, requireConversation: (runId, key) => requireConversation(store, runId, key), body, startCampaign: startFromValue }),
    {
      method: 'GET',
      pattern: /^\/api\/compare$/,
      handle: async (_q, res, _p, query) => {
        const q = parseRequest(CompareQuerySchema, Object.fromEntries(query), 'compare query');
        return ok(res, await views.compare(requireRun(q.a), requireRun(q.b)));
      },
    },
    ...(['GET', 'POST'] as const).map(
      (method): Route => ({
        method,
        pattern: /^\/api\/runs\/(?<id>[^/]+)\/(?<rest>.+)$/,
        handle: async (req, res, p, query) => {
          const answer = await views.route(requireRun(p.id), { method, rest: p.rest, query, body: () => readJsonBody(req, maxBodyBytes), decode: decodePathSegment });
          if ('json' in answer) return ok(res, answer.json, answer.status);
          if ('jsonText' in answer) return sendJsonText(res, 200, answer.jsonText);
          res.writeHead(200, { 'content-type': answer.mime, 'content-length': answer.bytes.length, 'cache-control': 'no-store', ...securityHeaders() });
          res.end(answer.bytes);
        },
      }),
    ),
  ];
}

/** One request: authorised, then the UI (anything outside /api) or the first API route whose path and method match. */
async function handleRequest(req: IncomingMessage, res: ServerResponse, server: { ctx: ServerContext; routes: Route[]; token: string; loopbackOnly: boolean }): Promise<void> {
  const url = requestUrl(req.url);
  const method = req.method ?? 'GET';
  const isApi = url.pathname === '/api' || url.pathname.startsWith('/api/');
  const mutating = !['GET', 'HEAD', 'OPTIONS'].includes(method);
  authorize(req, { token: server.token, loopbackOnly: server.loopbackOnly, mutating: mutating || (isApi && !server.loopbackOnly) });
  if (!isApi) {
    if (method !== 'GET' && method !== 'HEAD') throw new ApiError(405, 'method_not_allowed', `${method} ${url.pathname}: the UI is read-only`);
    await serveUi(server.ctx.options.uiDir ?? null, url.pathname, res);
    return;
  }
  let pathMatched = false;
  for (const route of server.routes) {
    const match = route.pattern.exec(url.pathname);
    if (!match) continue;
    pathMatched = true;
    if (route.method !== method) continue;
    // a kind's route decodes its own parameters from `rest` (a segment may hold an encoded slash); a malformed one is refused here alike
    const params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([k, v]) => [k, k === 'rest' ? (v.split('/').forEach(decodePathSegment), v) : decodePathSegment(v)]));
    await route.handle(req, res, params, url.searchParams);
    return;
  }
  if (pathMatched) throw new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname}`);
  throw new ApiError(404, 'not_found', `no API endpoint ${method} ${url.pathname}`);
}

/** The live feed (socket.io): loopback hosts only when the server is, and always with the token. */
function liveFeed(http: HttpServer, { token, loopbackOnly }: { token: string; loopbackOnly: boolean }): SocketServer {
  const io = new SocketServer(http, { serveClient: false, maxHttpBufferSize: SOCKET_MAX_BYTES, allowRequest: (req, callback) => {
    const hostname = (() => {
      try {
        return new URL(`http://${req.headers.host ?? ''}`).hostname;
      } catch {
        return '';
      }
    })();
    callback(null, !loopbackOnly || isLoopbackHost(hostname));
  } });
  // the live feed reveals the campaign, so a socket always needs the token (browsers let any page open a WebSocket to the loopback)
  io.use((socket, next) => {
    const given = (socket.handshake.auth as { token?: unknown }).token;
    if (typeof given === 'string' && tokensEqual(given, token)) next();
    else next(new Error(given === undefined ? 'token_required' : 'token_invalid'));
  });
  return io;
}

/** The request target as a URL; one that does not parse is the client's error (400), not the server's. */
function requestUrl(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://bench.invalid');
  } catch {
    throw new ApiError(400, 'malformed_url', 'the request target is not a valid URL path');
  }
}


/** A run as GET /api/runs and /api/runs/:id answer it. */
export type ListedRun = Omit<RunRecord, 'config'> & {
  /** how the app shows it: its kind's page, links, comparability and method line (null: a kind this version does not know) */
  view: ListedRunView | null;
  /** why POST /api/campaign/resume would refuse this run (the same message); null when it resumes, or it is complete */
  resumeRefusal: string | null;
  /** its stored items by outcome (pass, fail, inconclusive, error, or a kind's own word) */
  outcomes: Record<string, number>;
};

function withoutConfig(run: RunRecord): Omit<RunRecord, 'config'> {
  const { config: _config, ...rest } = run;
  return rest;
}
