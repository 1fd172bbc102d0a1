import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { Server as SocketServer } from 'socket.io';
import { z } from 'zod';
import type { RunSummary } from '../analysis/profile.ts';
import { summarizeRun } from '../report/summary.ts';
import { summaryJson } from '../report/write.ts';
import { compareRunsWithDiversity } from '../analysis/compare.ts';
import { storedRunChanges } from '../report/changes-section.ts';
import { TfidfEmbedder } from '../embedding/tfidf.ts';
import { ConfigError } from '../config/yaml.ts';
import type { KindConfig, LoadedKindConfig } from '../run/kind.ts';
import type { ConversationResult } from '../domain/conversation.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';
import { computeAgreement } from './agreement.ts';
import { judgeAgreementView } from '../judge/agreement.ts';
import { RatingFormSchema, decodeRatings, encodeRating } from './annotations.ts';
import {
  CompareQuerySchema,
  ConfigNameSchema,
  PageQuerySchema,
  ResumeCampaignBodySchema,
  RunIdSchema,
  StartCampaignBodySchema,
  StopCampaignBodySchema,
  ValidateConfigBodySchema, StartSessionBodySchema, SessionTurnBodySchema, SessionContextBodySchema, EndSessionBodySchema } from './api-schemas.ts';
import { authorize, isLoopbackHost, newToken, tokensEqual } from './auth.ts';
import { CampaignControl, type CampaignLauncher } from './campaign-control.ts';
import { ConfigCatalog } from './configs.ts';
import { ToolRunApi } from './tool-runs.ts';
import { comparePairRefusal, comparisonWarnings } from '../domain/comparable.ts';
import { compareToolRuns } from '../kinds/tool-agents/compare.ts';
import { loadToolAgentsRun, TOOL_AGENTS_KIND } from '../kinds/tool-agents/results.ts';
import { ManualRunApi } from './manual-runs.ts';
import { ConformanceApi, StartConformanceBodySchema } from './conformance-runs.ts';
import { campaignConfigSchemaFor, campaignKind, campaignKindOfValue, configModelRefs, type AnyCampaignKind } from '../kinds/registry.ts';
import { RunnerLauncher, discardMaterialized, materializeConfig } from './launcher.ts';
import { LiveSessionApi } from './live-session-api.ts';
import { PathPolicy } from './path-policy.ts';
import { ApiError, decodePathSegment, parseRequest, readJsonBody, sendError, sendJson, sendJsonText } from './http-util.ts';
import { rigStatus, type RigStatusSources } from './rig-status.ts';
import { securityHeaders, serveUi } from './static.ts';
import { RunDownloads, runDownloadRoutes } from './run-downloads.ts';
import { PinnedSuites, pinnedSuiteRoutes } from './pinned-suites.ts';
import { suitesFolder } from '../suite/folder.ts';

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

/** Starts the bench server: JSON API under /api, live campaign events over socket.io, the UI everywhere else. */
export async function startBenchServer(options: BenchServerOptions): Promise<BenchServer> {
  const host = options.host ?? '127.0.0.1';
  const loopbackOnly = isLoopbackHost(host);
  const token = options.token ?? newToken();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const { store } = options;
  // every campaign kind validates with its own schema (src/kinds/registry.ts), and starts, resumes and reports on the one run skeleton

  const manualRuns = new ManualRunApi(store);
  const toolRuns = new ToolRunApi(store);
  const conformance = new ConformanceApi(options.workspace);
  /** The kind of a config or a stored run: an unknown one is a 400 naming the accepted kinds. */
  const kindOf = async (name: string | null | undefined, where: string): Promise<AnyCampaignKind> => {
    try {
      return await campaignKind(name ?? String(name));
    } catch (error) {
      if (error instanceof ConfigError) throw new ApiError(400, 'unsupported_kind', `${where}: ${error.message}`);
      throw error;
    }
  };
  const runner = options.launcher ? null : new RunnerLauncher(store, options.log, options.fleet);
  const control = new CampaignControl(options.launcher ?? runner!.launch);
  const suites = new PinnedSuites(store, options.suitesDir ?? suitesFolder(null, options.configsDir));
  // one path policy for every request that names a file (src/server/path-policy.ts); the pinned suites' folder is readable too
  const paths = new PathPolicy(options.workspace, options.configsDir, [suites.dir]);
  const sessions = new LiveSessionApi(control, Boolean(options.fleet), (config) => paths.liveSession(config, 'live session'));
  const rigSources: RigStatusSources = { connectedUnits: runner?.connectedUnits, models: () => catalog.modelRefs(configModelRefs), ...options.rig };
  const loadCampaign = (load: () => LoadedKindConfig): LoadedKindConfig => {
    try {
      return load();
    } catch (error) {
      if (error instanceof ConfigError) throw new ApiError(400, 'invalid_config', error.message);
      throw error;
    }
  };
  const summaries = new SummaryCache(store);
  const downloads = new RunDownloads(store, options.workspace);
  // the editor and the config list show what the app refuses at its field, so Start is never enabled only to refuse
  const catalog = new ConfigCatalog(options.configsDir, campaignConfigSchemaFor, async (kindName, config) => paths.campaignRefusals(await campaignKind(kindName), config as KindConfig));
  /** A config started from the app may only name files under the allowed folders; checked before anything is read. */
  const requireAllowedPaths = (kind: AnyCampaignKind, config: KindConfig, where: string) => paths.requireCampaign(kind, config, where);

  /** What resuming a stored run starts from (its kind and stored config), or the error the resume endpoint answers. */
  const resumeFrom = async (run: RunRecord): Promise<{ kind: AnyCampaignKind; config: KindConfig }> => {
    if (run.status === 'completed') throw new ApiError(409, 'run_complete', `run ${run.id} is complete; nothing to resume`);
    const kind = await kindOf(run.kind, `run ${run.id}`);
    const check = catalog.checkValue(run.config);
    if (!check.valid) throw new ApiError(422, 'stored_config_invalid', `run ${run.id}: its stored config no longer validates: ${check.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, check.errors);
    requireAllowedPaths(kind, check.config as KindConfig, `run ${run.id}`);
    return { kind, config: check.config as KindConfig };
  };
  /** Starts a campaign from a config value the server built (a pinned suite's replay), checked as one from the editor. */
  const startFromValue = async (value: unknown, label: string) => {
    const check = catalog.checkValue(value);
    if (!check.valid) throw new ApiError(422, 'invalid_config', `${label}: ${check.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, check.errors);
    const kind = await kindOf(check.kind, label);
    requireAllowedPaths(kind, check.config as KindConfig, label);
    const campaign = loadCampaign(() => materializeConfig(kind, check.config as KindConfig, options.configsDir, options.workspace, label));
    return control.start({ kind, loaded: campaign, configName: label }).catch((error: unknown) => {
      discardMaterialized(campaign, options.workspace);
      throw error;
    });
  };
  /** A run as the API lists it: without its config, and for a run with work left, why Resume would refuse it (null: it resumes), so the page can say so before the click. */
  const listedRun = async (run: RunRecord): Promise<ListedRun> => {
    const outcomes = store.outcomeCounts(run.id);
    if (run.status === 'completed') return { ...withoutConfig(run), outcomes, resumeRefusal: null };
    const refusal = await resumeFrom(run).then(
      () => null,
      (error: unknown) => {
        if (error instanceof ApiError) return error.message;
        throw error;
      },
    );
    return { ...withoutConfig(run), outcomes, resumeRefusal: refusal };
  };

  const requireRun = (id: string): RunRecord => {
    const runId = parseRequest(RunIdSchema, id, 'run id');
    const run = store.getRun(runId);
    if (!run) throw new ApiError(404, 'run_not_found', `no run "${runId}" in this workspace`);
    return run;
  };
  const requireConversation = (runId: string, key: string): ConversationResult => {
    const result = store.getConversation(runId, key);
    if (!result) throw new ApiError(404, 'conversation_not_found', `run ${runId} has no stored conversation "${key}"`);
    return result;
  };
  const body = async <S extends z.ZodType>(req: IncomingMessage, schema: S, where: string): Promise<z.output<S>> =>
    parseRequest(schema, await readJsonBody(req, maxBodyBytes), where);
  const ok = (res: ServerResponse, value: unknown, status = 200) => {
    sendJson(res, status, value);
    return Promise.resolve();
  };

  const routes: Route[] = [
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
    { method: 'GET', pattern: /^\/api\/campaign$/, handle: (_q, res) => ok(res, control.current()) },
    {
      method: 'POST',
      pattern: /^\/api\/campaign\/start$/,
      handle: async (req, res) => {
        const request = await body(req, StartCampaignBodySchema, 'start request');
        const config = await catalog.read(request.configName);
        // the schema's verdict here; a path the app refuses is answered below as path_not_allowed (unreadable file: the read's error)
        const check = request.text === undefined && config.config === null ? config : catalog.check(request.text ?? config.text);
        if (!check.valid) {
          throw new ApiError(400, 'invalid_config', `${request.configName}: ${check.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, check.errors);
        }
        const kind = await kindOf(campaignKindOfValue(check.config), request.configName);
        requireAllowedPaths(kind, check.config as KindConfig, request.configName);
        const campaign = loadCampaign(() =>
          request.text === undefined
            ? kind.load(join(options.configsDir, request.configName))
            : materializeConfig(kind, check.config as KindConfig, options.configsDir, options.workspace, request.configName),
        );
        const started = await control.start({ kind, loaded: campaign, configName: request.configName }).catch((error: unknown) => {
          discardMaterialized(campaign, options.workspace);
          throw error;
        });
        return ok(res, started, 202);
      },
    },
    {
      method: 'POST',
      pattern: /^\/api\/campaign\/resume$/,
      handle: async (req, res) => {
        const { runId } = await body(req, ResumeCampaignBodySchema, 'resume request');
        const run = requireRun(runId);
        const { kind, config } = await resumeFrom(run);
        const campaign = loadCampaign(() => materializeConfig(kind, config, options.configsDir, options.workspace, run.name));
        const started = await control.start({ kind, loaded: campaign, configName: run.name, resumeRunId: runId }).catch((error: unknown) => {
          discardMaterialized(campaign, options.workspace);
          throw error;
        });
        return ok(res, started, 202);
      },
    },
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
    {
      method: 'POST',
      pattern: /^\/api\/campaign\/stop$/,
      handle: async (req, res) => {
        await body(req, StopCampaignBodySchema, 'stop request');
        return ok(res, await control.stop());
      },
    },
    { method: 'GET', pattern: /^\/api\/runs$/, handle: async (_q, res) => ok(res, { runs: await Promise.all(store.listRuns().map(listedRun)) }) },
    { method: 'GET', pattern: /^\/api\/runs\/(?<id>[^/]+)$/, handle: async (_q, res, p) => ok(res, { run: await listedRun(requireRun(p.id)) }) },
    {
      method: 'GET',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/summary$/,
      handle: async (_q, res, p) => {
        const { perConversation: _omitted, diversity, ...summary } = await summaries.get(requireRun(p.id));
        // the renderings of the failing conversations stay in summary.json; the page needs the figures
        return ok(res, { summary: { ...summary, ...(diversity ? { diversity: { ...diversity, conversations: [] } } : {}) } });
      },
    },
    ...runDownloadRoutes(downloads, requireRun),
    { method: 'GET', pattern: /^\/api\/runs\/(?<id>[^/]+)\/tool-agents$/, handle: (_q, res, p) => ok(res, toolRuns.overview(requireRun(p.id))) },
    { method: 'GET', pattern: /^\/api\/runs\/(?<id>[^/]+)\/tool-agents\/trials\/(?<key>[^/]+)$/, handle: (_q, res, p) => ok(res, toolRuns.trial(requireRun(p.id), p.key)) },
    { method: 'GET', pattern: /^\/api\/runs\/(?<id>[^/]+)\/manual$/, handle: (_q, res, p) => ok(res, manualRuns.overview(requireRun(p.id))) },
    { method: 'GET', pattern: /^\/api\/runs\/(?<id>[^/]+)\/manual\/questions\/(?<key>[^/]+)$/, handle: (_q, res, p) => ok(res, manualRuns.question(requireRun(p.id), p.key)) },
    {
      method: 'POST',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/manual\/questions\/(?<key>[^/]+)\/annotations$/,
      handle: async (req, res, p) => {
        const run = requireRun(p.id);
        const annotation = manualRuns.annotate(run, p.key, await readJsonBody(req, maxBodyBytes));
        return ok(res, { annotation }, 201);
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/summary\.json$/,
      // the run's summary.json, byte for byte what `icabench run` and `icabench report RUN` write
      handle: async (_q, res, p) => {
        const run = requireRun(p.id);
        // every kind's summary.json is its own, as icabench run writes it (a dialogue run's is cached while the app runs)
        if (run.kind === 'dialogue') return sendJsonText(res, 200, summaryJson(await summaries.get(run)));
        return sendJsonText(res, 200, await (await kindOf(run.kind, `run ${run.id}`)).outputs.summaryJson(store, run));
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/conversations$/,
      handle: (_q, res, p, query) => {
        const run = requireRun(p.id);
        const q = parseRequest(PageQuerySchema, Object.fromEntries(query), 'conversation page query');
        const page = store.pageConversations(run.id, {
          offset: q.offset,
          limit: q.limit,
          filter: { status: q.status, outcome: q.outcome, label: q.label, keyContains: q.key },
        });
        return ok(res, { ...page, offset: q.offset, limit: q.limit });
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/conversations\/(?<key>[^/]+)$/,
      handle: (_q, res, p) => {
        const run = requireRun(p.id);
        const result = requireConversation(run.id, p.key);
        const artifacts = store.artifacts(run.id, p.key).map((a) => ({ name: a.name, mime: a.mime, size: a.bytes?.length ?? null }));
        const ratings = decodeRatings(store.annotations(run.id).filter((a) => a.key === p.key));
        return ok(res, { result, artifacts, ratings });
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/conversations\/(?<key>[^/]+)\/artifacts\/(?<name>[^/]+)$/,
      handle: async (_q, res, p) => {
        const run = requireRun(p.id);
        requireConversation(run.id, p.key);
        const artifact = store.artifacts(run.id, p.key).find((a) => a.name === p.name);
        if (!artifact) throw new ApiError(404, 'artifact_not_found', `conversation "${p.key}" has no artifact "${p.name}"`);
        const bytes = artifact.bytes ?? (await readFile(isAbsolute(artifact.path ?? '') ? artifact.path! : resolve(options.workspace, artifact.path ?? '')));
        res.writeHead(200, { 'content-type': artifact.mime, 'content-length': bytes.length, 'cache-control': 'no-store', ...securityHeaders() });
        res.end(bytes);
      },
    },
    ...pinnedSuiteRoutes({ suites, requireRun, requireConversation, body, startCampaign: startFromValue }),
    {
      method: 'POST',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/conversations\/(?<key>[^/]+)\/ratings$/,
      handle: async (req, res, p) => {
        const run = requireRun(p.id);
        const form = await body(req, RatingFormSchema, 'rating');
        const result = requireConversation(run.id, p.key);
        const known = new Set(result.targets.map((t) => t.id));
        const unknown = Object.keys(form.targets).filter((id) => !known.has(id));
        if (unknown.length) throw new ApiError(400, 'invalid_request', `rating: targets.${unknown[0]}: not a target of this conversation`, unknown.map((id) => ({ path: `targets.${id}`, message: 'not a target of this conversation' })));
        const badTurn = form.turnLabels.find((l) => l.turn >= result.turns.length);
        if (badTurn) throw new ApiError(400, 'invalid_request', `rating: turnLabels: turn ${badTurn.turn} does not exist (the conversation has ${result.turns.length} turns)`, [{ path: 'turnLabels', message: `turn ${badTurn.turn} does not exist` }]);
        const previous = decodeRatings(store.annotations(run.id).filter((a) => a.key === p.key && a.rater === form.rater))[0] ?? null;
        // everything is checked above, so each row below is valid and the conversation exists
        for (const row of encodeRating(p.key, form, previous)) store.saveAnnotation(run.id, row);
        const saved = decodeRatings(store.annotations(run.id).filter((a) => a.key === p.key && a.rater === form.rater))[0];
        return ok(res, { rating: saved }, 201);
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/agreement$/,
      handle: (_q, res, p) => {
        const run = requireRun(p.id);
        const ratings = decodeRatings(store.annotations(run.id));
        const judged = new Map<string, ConversationResult>();
        for (const key of new Set(ratings.map((r) => r.key))) {
          const result = store.getConversation(run.id, key);
          if (result) judged.set(key, result);
        }
        return ok(res, { agreement: computeAgreement(ratings, judged), ratings });
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/runs\/(?<id>[^/]+)\/judge-agreement$/,
      handle: (_q, res, p) => {
        const run = requireRun(p.id);
        return ok(res, judgeAgreementView(store.conversations(run.id)));
      },
    },
    {
      method: 'GET',
      pattern: /^\/api\/compare$/,
      handle: async (_q, res, _p, query) => {
        const q = parseRequest(CompareQuerySchema, Object.fromEntries(query), 'compare query');
        const runs = [requireRun(q.a), requireRun(q.b)];
        const refused = comparePairRefusal(runs[0].kind, runs[1].kind);
        if (refused) throw new ApiError(400, 'unsupported_kind', `compare: ${refused}`);
        // two tool-agents runs: pass^k per family and the tasks that moved, as `icabench compare` prints them
        if (runs[0].kind === TOOL_AGENTS_KIND) {
          const [a, b] = runs.map((run) => loadToolAgentsRun(store, run.id).results);
          return ok(res, { kind: TOOL_AGENTS_KIND, a: { id: runs[0].id, name: runs[0].name }, b: { id: runs[1].id, name: runs[1].name }, toolComparison: compareToolRuns(a, b) });
        }
        const [a, b] = await Promise.all(runs.map((run) => summaries.get(run)));
        // failure diversity of the union with the lexical embedder (labelled in the result), as `icabench compare` does by default
        const comparison = await compareRunsWithDiversity(a, b, new TfidfEmbedder());
        // the same conversation-by-conversation changes as `icabench compare`: fixed, regressed, per-turn reply diffs
        Object.assign(comparison, storedRunChanges(store, runs[0].id, runs[1].id));
        return ok(res, { kind: 'dialogue', comparison, warnings: comparisonWarnings(runs[0].config, runs[1].config, comparison.unpaired) });
      },
    },
  ];

  const http = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => sendError(res, error));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req.url);
    const method = req.method ?? 'GET';
    const isApi = url.pathname === '/api' || url.pathname.startsWith('/api/');
    const mutating = !['GET', 'HEAD', 'OPTIONS'].includes(method);
    authorize(req, { token, loopbackOnly, mutating: mutating || (isApi && !loopbackOnly) });
    if (!isApi) {
      if (method !== 'GET' && method !== 'HEAD') throw new ApiError(405, 'method_not_allowed', `${method} ${url.pathname}: the UI is read-only`);
      await serveUi(options.uiDir ?? null, url.pathname, res);
      return;
    }
    let pathMatched = false;
    for (const route of routes) {
      const match = route.pattern.exec(url.pathname);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      const params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([k, v]) => [k, decodePathSegment(v)]));
      await route.handle(req, res, params, url.searchParams);
      return;
    }
    if (pathMatched) throw new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${url.pathname}`);
    throw new ApiError(404, 'not_found', `no API endpoint ${method} ${url.pathname}`);
  }

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
  io.on('connection', (socket) => {
    socket.emit('campaign', { type: 'control', snapshot: control.current() });
    // the UI only listens; anything it sends is ignored
    socket.onAny(() => undefined);
  });
  control.subscribe((event) => {
    io.emit('campaign', event);
    if (event.type === 'conversation_finished' || event.type === 'run_finished') summaries.invalidate(event.runId);
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
      await conformance.close();
      await new Promise<void>((done) => io.close(() => done()));
      http.closeAllConnections();
    },
  };
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
  /** why POST /api/campaign/resume would refuse this run (the same message); null when it resumes, or it is complete */
  resumeRefusal: string | null;
  /** its stored items by outcome (pass, fail, inconclusive, error, or a kind's own word) */
  outcomes: Record<string, number>;
};

function withoutConfig(run: RunRecord): Omit<RunRecord, 'config'> {
  const { config: _config, ...rest } = run;
  return rest;
}

/** conversations read between two yields to the event loop while summarising a run */
const SUMMARY_SLICE = 50;

/**
 * The summary of a run (summarizeRun) reads every conversation (seconds for 10,000), so it is cached
 * until the run changes (conversations, status or run facts), computed once however many pages ask,
 * and read in slices that yield to the event loop: pages and the live feed stay responsive meanwhile.
 */
class SummaryCache {
  private readonly cache = new Map<string, { stamp: string; summary: Promise<RunSummary> }>();
  constructor(private readonly store: ResultStore) {}

  get(run: RunRecord): Promise<RunSummary> {
    const stamp = `${run.stored}:${run.status}:${this.store.countRunFacts(run.id)}`;
    const hit = this.cache.get(run.id);
    if (hit && hit.stamp === stamp) return hit.summary;
    const summary = summarizeRun(this.store, run.id, { yieldEvery: SUMMARY_SLICE });
    this.cache.set(run.id, { stamp, summary });
    summary.catch(() => this.cache.delete(run.id));
    return summary;
  }

  invalidate(runId: string): void {
    this.cache.delete(runId);
  }
}
