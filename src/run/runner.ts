import { ConfigError } from '../config/yaml.ts';
import type { ResultStore } from '../store/store.ts';
import { runPool } from '../domain/pool.ts';
import type { CampaignEvent, CampaignEventListener } from './events.ts';
import type { RunRecord } from '../store/types.ts';
import { ItemAborted, type AfterItemsStep, type CampaignKindDefinition, type FinishedItem, type InvocationRecord, type ItemRunner, type LoadedKindConfig, type PlannedItem } from './kind.ts';
import { openItemRunner } from './envelope.ts';
import { resumedRun, runEndStatus, type RunEndStatus } from './resume.ts';
import { trackUnitReach } from './unit-reach.ts';

export interface RunKindOptions<Item, Finished, AfterIn = never, AfterOut = never> {
  store: ResultStore;
  /** where the items run, already opened (a rig, or the fleet); default: the kind opens its rig. The run closes it when it ends. */
  runner?: ItemRunner<Item, Finished, AfterIn, AfterOut>;
  /** continue this run instead of starting a new one (it must be of this kind and config) */
  resumeRunId?: string;
  /** abort = graceful stop: no new item starts; running ones are abandoned and run again on resume */
  signal?: AbortSignal;
  onEvent?: CampaignEventListener;
  log?: (line: string) => void;
}

export interface RunKindResult {
  runId: string;
  status: RunEndStatus;
  /** why the run stopped by itself before its end (the head unit left and did not come back, or stopped reaching it); null otherwise */
  stopReason: string | null;
  /** status unit_unreachable: how many items ran without reaching the unit, and the last cause */
  unreachable: string | null;
  done: number;
  planned: number;
}

/**
 * The pause hook's answer, or null as soon as `signal` aborts. Each wait adds its own abort listener and removes it when
 * it settles: racing every wait against one shared never-settling promise would add a reaction to it per item, which
 * the run would hold until its end (memory growing with the run's size, not its concurrency).
 */
function readyOrAborted(ready: Promise<string | null>, signal: AbortSignal | undefined): Promise<string | null> {
  if (!signal) return ready;
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    ready.then(
      (answer) => {
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The one run skeleton every campaign kind runs on (src/run/kind.ts): the `--resume` lookup (a run of
 * another kind or another config is refused), the plan (made and stored before the first item, or reloaded
 * on resume), the rig (opened before the run is recorded: a missing model, file or head unit leaves nothing
 * behind), the worker pool within the time budget, Ctrl+C (no new item starts; abandoned ones run again on
 * resume), each finished item stored once in one transaction, the run facts of each invocation, and the
 * status the run ends in.
 */
export async function runKindCampaign<L extends LoadedKindConfig, Item, Finished extends FinishedItem, AfterIn = never, AfterOut = never>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the file's config form does not matter to the run
  kind: CampaignKindDefinition<L, Item, Finished, any, AfterIn, AfterOut>,
  loaded: L,
  options: RunKindOptions<Item, Finished, AfterIn, AfterOut>,
): Promise<RunKindResult> {
  const { store } = options;
  const emit = (event: CampaignEvent) => options.onEvent?.(event);
  const log = options.log ?? (() => undefined);
  const { config } = loaded;

  // `let`: once stored, the plan is let go (the run takes its items from the store a page at a time)
  let { resumed, plan } = await resumedOrPlanned(kind, loaded, options, log);
  const runner = options.runner ?? (await openItemRunner(kind, loaded, { log }));
  let runId: string;
  let invocation: InvocationRecord;
  try {
    if (resumed) {
      runId = resumed.id;
      store.setRunStatus(runId, 'running');
      const again = kind.storage.forgetUnreached?.(store, runId) ?? [];
      if (again.length) log(`--resume: ${again.length} ${again.length === 1 ? kind.nouns.item : kind.nouns.items} that never reached the head unit run again (${again.slice(0, 5).join(', ')}${again.length > 5 ? `, … ${again.length - 5} more` : ''})`);
    } else {
      runId = kind.storage.create(store, loaded, plan!, { ...runner.meta });
      plan = null;
    }
    invocation = runner.record(store, runId, emit);
  } catch (error) {
    await runner.close();
    throw error;
  }
  const run = store.getRun(runId)!;
  const planned = run.planned;
  const remaining = kind.storage.remaining(store, run);
  const budgetMs = config.budgetMinutes ? config.budgetMinutes * 60_000 : null;
  emit({ type: 'run_started', runId, name: config.name, kind: kind.name, page: kind.view.page, nouns: kind.nouns, planned, remaining: planned - run.stored, budgetMs });

  const started = Date.now();
  let done = run.stored;
  let budgetHit = false;
  const inflight = new Set<AbortController>();
  const onAbort = () => inflight.forEach((c) => c.abort());
  options.signal?.addEventListener('abort', onAbort);
  let stopReason: string | null = null;
  // whether the items reach the head unit (the kinds that talk to one): none reached = unit_unreachable; too few = stop
  const reach = trackUnitReach(config.maxErrorShare, kind.nouns);

  const beforeTake = async (): Promise<boolean> => {
    // a kind whose items never wait on I/O (the replay agent) would starve the event loop: Ctrl+C and timers get their turn here
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (options.signal?.aborted || stopReason) return false;
    if (budgetMs !== null && Date.now() - started >= budgetMs) {
      budgetHit = true;
      return false;
    }
    // the pause hook: no new item starts while the head unit is away; Ctrl+C ends the wait at once
    const stop = await readyOrAborted(runner.ready(), options.signal);
    if (stop) stopReason ??= stop;
    return !stopReason && !options.signal?.aborted;
  };

  const work = async (item: PlannedItem<Item>): Promise<void> => {
    const controller = new AbortController();
    inflight.add(controller);
    emit(kind.startedEvent(runId, item));
    let finished: Finished;
    try {
      finished = await runner.run(runId, item, controller.signal, emit);
    } catch (error) {
      if (error instanceof ItemAborted) return;
      throw error;
    } finally {
      inflight.delete(controller);
    }
    kind.storage.save(store, runId, item.key, finished);
    done++;
    const reached = kind.unitReach?.(finished);
    if (reached) {
      reach.record(reached);
      stopReason ??= reach.stopReason();
    }
    emit(kind.finishedEvent(runId, item.key, finished));
    emit({ type: 'progress', runId, done, planned, elapsedMs: Date.now() - started, budgetMs });
  };

  try {
    await runPool(remaining, work, { concurrency: runner.concurrency, beforeTake });
    const complete = !options.signal?.aborted && !stopReason && done === planned;
    if (complete && kind.afterItems) await afterItems(kind.afterItems, loaded, store, runId, runner, log);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    invocation.invocationEnded();
    await runner.close();
  }
  const status = runEndStatus({ aborted: options.signal?.aborted === true, stopReason, budgetHit, done, planned, neverReachedUnit: reach.neverReached() });
  store.setRunStatus(runId, status);
  if (stopReason) log(`run ${runId} stopped: ${stopReason}`);
  emit({ type: 'run_finished', runId, status, done, planned, ...(stopReason ? { reason: stopReason } : {}) });
  return { runId, status, stopReason, unreachable: status === 'unit_unreachable' ? reach.summary() : null, done, planned };
}

/** The run to continue (`--resume`), or the plan of a new one; a runner given to the run is closed when neither can be had. */
async function resumedOrPlanned<L extends LoadedKindConfig, Item, Finished extends FinishedItem, AfterIn, AfterOut>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the file's config form does not matter to the run
  kind: CampaignKindDefinition<L, Item, Finished, any, AfterIn, AfterOut>,
  loaded: L,
  options: RunKindOptions<Item, Finished, AfterIn, AfterOut>,
  log: (line: string) => void,
): Promise<{ resumed: RunRecord; plan: null } | { resumed: null; plan: PlannedItem<Item>[] }> {
  try {
    const resumed = resumedRun(options.store, options.resumeRunId, kind.name, loaded.config, kind.configSchema);
    if (resumed) return { resumed, plan: null };
    // a new run's plan is made first: a config that plans nothing stops here, before the rig or the store
    const plan = await kind.plan(loaded, log);
    if (plan.length === 0) throw new ConfigError(`${loaded.path}: nothing to run: the config plans no ${kind.nouns.items}`);
    return { resumed: null, plan };
  } catch (error) {
    await options.runner?.close();
    throw error;
  }
}

/** The kind's after-items step: its input from the store, run by the runner (in this process or on a fleet worker), its output stored. */
async function afterItems<L, AfterIn, AfterOut>(
  step: AfterItemsStep<L, AfterIn, AfterOut>,
  loaded: L,
  store: ResultStore,
  runId: string,
  runner: ItemRunner<unknown, unknown, AfterIn, AfterOut>,
  log: (line: string) => void,
): Promise<void> {
  const input = step.input(loaded, store, runId);
  if (input === null) return;
  if (!runner.afterItems) throw new Error(`run ${runId}: the runner cannot run the step after the items (it has no afterItems)`);
  step.save(store, runId, await runner.afterItems(runId, input, log));
}
