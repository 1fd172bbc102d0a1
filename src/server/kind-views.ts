import { ConfigError } from '../config/yaml.ts';
import { comparePairRefusal } from '../domain/comparable.ts';
import { campaignKind, comparedKindGroups, type AnyCampaignKind } from '../kinds/registry.ts';
import { listedRunView, type KindRouteAnswer, type KindRunView, type KindView, type ListedRunView, type ViewContext } from '../run/kind-view.ts';
import type { RunRecord } from '../store/types.ts';
import { ApiError } from './http-util.ts';

/** A kind's route matched to a request under /api/runs/<id>/: what to call, or why none answers. */
export interface KindRouteCall {
  method: string;
  /** the path after `/api/runs/<id>/` */
  rest: string;
  query: URLSearchParams;
  body(): Promise<unknown>;
  decode(segment: string): string;
}

/**
 * The kinds' views as one bench app shows them (src/run/kind-view.ts): each kind's view opened once, on first use; a
 * run is shown, answered, summarised and compared by the view of the kind it is stored as. Nothing here names a kind.
 */
export class KindViews {
  /** by view: kinds that show their runs alike (dialogue, suite, live) share one opened view and its caches */
  private readonly opened = new Map<KindView, Promise<KindRunView>>();

  constructor(private readonly context: ViewContext) {}

  /** The kind of a config or a stored run: an unknown one is a 400 naming the accepted kinds. */
  async kind(name: string | null | undefined, where: string): Promise<AnyCampaignKind> {
    try {
      return await campaignKind(name ?? String(name));
    } catch (error) {
      if (error instanceof ConfigError) throw new ApiError(400, 'unsupported_kind', `${where}: ${error.message}`);
      throw error;
    }
  }

  /** The opened view of the kind a run is stored as. */
  async ofRun(run: RunRecord): Promise<{ kind: AnyCampaignKind; view: KindRunView }> {
    const kind = await this.kind(run.kind, `run ${run.id}`);
    let view = this.opened.get(kind.view);
    if (!view) {
      view = kind.view.open(this.context);
      this.opened.set(kind.view, view);
      view.catch(() => this.opened.delete(kind.view));
    }
    return { kind, view: await view };
  }

  /** How the app's pages show a run (its page, links, comparability, method line); null for a kind this version does not know. */
  async listed(run: RunRecord): Promise<ListedRunView | null> {
    return campaignKind(run.kind).then(
      (kind) => listedRunView(kind.view),
      () => null,
    );
  }

  /** summary.json of a stored run, byte for byte what `icabench run` writes. */
  async summaryJson(run: RunRecord): Promise<string> {
    const { kind, view } = await this.ofRun(run);
    return view.summaryJson ? view.summaryJson(run) : kind.outputs.summaryJson(this.context.store, run);
  }

  /** The answer of the route the run's kind declares for this request; a path it does not declare is a 404 (405 for another method). */
  async route(run: RunRecord, call: KindRouteCall): Promise<KindRouteAnswer> {
    const { kind, view } = await this.ofRun(run);
    let pathMatched = false;
    for (const route of view.routes) {
      const match = route.path.exec(call.rest);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== call.method) continue;
      const params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([k, v]) => [k, call.decode(v)]));
      return route.handle({ run, params, query: call.query, body: call.body });
    }
    if (pathMatched) throw new ApiError(405, 'method_not_allowed', `${call.method} is not allowed on /api/runs/${run.id}/${call.rest}`);
    throw new ApiError(404, 'not_found', `run ${run.id} is a ${kind.name} run: it has no /${call.rest}`);
  }

  /** Two stored runs side by side, by the view of their kind; a pair of kinds not compared is a 400 naming why. */
  async compare(a: RunRecord, b: RunRecord): Promise<Record<string, unknown>> {
    const refused = comparePairRefusal(a.kind, b.kind, await comparedKindGroups());
    if (refused) throw new ApiError(400, 'unsupported_kind', `compare: ${refused}`);
    const { kind, view } = await this.ofRun(a);
    if (!view.compare) throw new ApiError(400, 'unsupported_kind', `compare: the ${kind.name} view has no comparison`);
    return { kind: a.kind, page: kind.view.page, ...(await view.compare(a, b)).served };
  }

  /** A run changed (an item stored, the run ended): every opened view drops what it cached of it. */
  invalidate(runId: string): void {
    for (const view of this.opened.values()) void view.then((v) => v.invalidate?.(runId), () => undefined);
  }
}
