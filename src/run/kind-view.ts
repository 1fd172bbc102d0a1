import type { DiversityConfig } from '../analysis/diversity.ts';
import type { Embedder } from '../embedding/types.ts';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';

/**
 * How a campaign kind's runs are shown (docs/architecture.md, "Adding a campaign kind"): the kind declares its method
 * line, the app page its runs open on, its API routes and its comparison; the bench server, the runs list, the run
 * page and the compare page read this from the registry (src/kinds/registry.ts) and never branch on a kind's name.
 * A kind's report sections are its `outputs` (src/run/kind.ts).
 */
export interface KindView {
  /** the published method the kind follows (authors, title): the method line of its summary.json and run page */
  readonly paper: string;
  /**
   * the app page a run of this kind opens on (src/ui/routes.ts): `report` (a run of conversations), `manual`, `tool-agents`;
   * a page the app does not have opens the generic item page, which shows the run's summary.json and its items
   */
  readonly page: string;
  /** the links a row of the runs list shows besides the run's page: a label and the page under the run (`#/runs/<id>/<path>`) */
  readonly links: readonly ViewLink[];
  /** whether two runs of this kind are compared (the compare page, `icabench compare`); then `compare` of the opened view answers */
  readonly compared: boolean;
  /** Opens the kind's view for one bench app (loads its modules; it may cache per run). */
  open(context: ViewContext): Promise<KindRunView>;
}

/** How `icabench compare` asks for a comparison (its flags); the app asks with none, and a view uses its own defaults. */
export interface CompareOptions {
  /** the embedder a comparison of failure diversity uses (`--embedding-model`) */
  embedder?: Embedder;
  /** the diversity settings (`--diversity-threshold`) */
  diversity?: DiversityConfig;
}

/** Two stored runs compared by their kind's view: what the compare page is served, and what `icabench compare` prints and writes. */
export interface RunsCompared {
  /** GET /api/compare's answer (the compare page reads it by the view's page), with why the figures may not be read as like for like */
  served: { warnings: readonly string[] };
  /** `icabench compare --json`: the comparison itself */
  json: unknown;
  /** `icabench compare`: the comparison as lines of text (the warnings are printed before them) */
  lines(): string[];
  /** `icabench compare --out DIR`: writes comparison.json (and what else the kind writes) into DIR; the files written */
  write(dir: string): string[];
}

export interface ViewLink {
  label: string;
  path: string;
}

/** What a kind's view reads and writes: the workspace's store, and the workspace folder (the only one the app writes to). */
export interface ViewContext {
  store: ResultStore;
  workspace: string;
}

/** The kind's view as one bench app runs it. */
export interface KindRunView {
  /** the kind's API routes under `/api/runs/<id>/` (a run of this kind only) */
  readonly routes: readonly KindRoute[];
  /** summary.json of a stored run, byte for byte what `icabench run` writes, when the view caches it; absent: the kind's outputs.summaryJson */
  summaryJson?(run: RunRecord): Promise<string>;
  /** two stored runs of this kind side by side, for the compare page and `icabench compare` alike; present exactly when the kind's `compared` says so */
  compare?(a: RunRecord, b: RunRecord, options?: CompareOptions): Promise<RunsCompared>;
  /** the run changed (an item stored, the run ended): drop what was cached of it */
  invalidate?(runId: string): void;
}

/** One request to a kind's route: the run it is about, the path's named groups, the query, and the JSON body (read on demand, size-limited). */
export interface KindRouteRequest {
  run: RunRecord;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  body(): Promise<unknown>;
}

/** What a kind's route answers: JSON (status 200 unless told), JSON text as it is (summary.json), or bytes (an artifact). Refusals are thrown as ApiError (src/domain/api-error.ts). */
export type KindRouteAnswer = { json: unknown; status?: number } | { jsonText: string } | { bytes: Uint8Array; mime: string };

export interface KindRoute {
  method: 'GET' | 'POST';
  /** the path under `/api/runs/<id>/`, its parameters as named groups (decoded before `handle` sees them), e.g. /^manual\/questions\/(?<key>[^/]+)$/ */
  path: RegExp;
  handle(request: KindRouteRequest): Promise<KindRouteAnswer>;
}

/** A run's view as the runs list carries it (GET /api/runs): the app opens, links and compares runs from this alone. */
export interface ListedRunView {
  page: string;
  links: readonly ViewLink[];
  compared: boolean;
  paper: string;
}

/** The part of a kind's view the app's pages read. */
export function listedRunView(view: KindView): ListedRunView {
  return { page: view.page, links: view.links, compared: view.compared, paper: view.paper };
}
