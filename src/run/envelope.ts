import { TIERS_FACT } from '../domain/tiers.ts';
import type { ConnectedHeadUnit } from './connect.ts';
import { ItemAborted, type CampaignKindDefinition, type FinishedItem, type ItemRunner, type KindRig, type LoadedKindConfig, type OpenOptions } from './kind.ts';
import { invocationFact, LlmCallRecorder, recordRunFact, RUN_FACTS, type RunFactSink, type UnitBuildFact } from './run-facts.ts';
import { watchHeadUnit, type HeadUnitWatch } from './run-monitor.ts';

/**
 * The run envelope: what every run records the same way, whatever its kind (docs/architecture.md, "One rig, one
 * record"). A kind's `open` gives its rig (how to run one item, and what it runs with); this makes it the run's
 * ItemRunner, which records, once per invocation, `run.invocation`, `tiers.resolved` and `unit.build` (the build
 * the unit announced in hello, or `--unit-build`), watches the head unit's bridge link (its facts, and the pause
 * while it is away), and hands each item's model calls (`llm.calls`) back with the item, stored in its transaction.
 */
export async function openItemRunner<L extends LoadedKindConfig, Item, Finished extends FinishedItem, AfterIn, AfterOut>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the file's config form does not matter to the run
  kind: CampaignKindDefinition<L, Item, Finished, any, AfterIn, AfterOut>,
  loaded: L,
  options: OpenOptions = {},
): Promise<ItemRunner<Item, Finished, AfterIn, AfterOut>> {
  return rigItemRunner(await kind.open(loaded, options), options);
}

/** The head unit and build of this invocation: what the unit announced in hello, with `--unit-build` winning; all null without a unit and option. */
export function unitBuildFact(headUnit: ConnectedHeadUnit | null, option: string | undefined): UnitBuildFact {
  const name = headUnit && 'name' in headUnit.connection ? String(headUnit.connection.name) : null;
  const units = headUnit?.bridge?.connectedUnits() ?? [];
  const unit = units.find((u) => u.name === name) ?? units[0] ?? null;
  const build = option ?? unit?.build ?? null;
  return { unit: unit?.name ?? null, version: unit?.version ?? null, build, source: option ? 'option' : unit?.build ? 'hello' : null };
}

/** A kind's opened rig as the run's ItemRunner, recording the envelope (see openItemRunner); `unitBuild`: `--unit-build`. */
export function rigItemRunner<Item, Finished extends FinishedItem, AfterIn, AfterOut>(rig: KindRig<Item, Finished, AfterIn, AfterOut>, options: Pick<OpenOptions, 'unitBuild' | 'log'> = {}): ItemRunner<Item, Finished, AfterIn, AfterOut> {
  const { envelope } = rig;
  const log = options.log ?? (() => undefined);
  const calls = envelope.tracker ? new LlmCallRecorder(envelope.tracker) : null;
  let watch: HeadUnitWatch | null = null;
  let sink: RunFactSink | null = null;
  let closing: Promise<void> | null = null;
  // a failed device of the rig (the bench's or the reference unit's audio devices) stops the run before the unit's absence is asked
  const fault = () => rig.fault?.() ?? envelope.headUnit?.deviceFault?.()?.message ?? null;
  const ready = async () => fault() ?? (await watch?.ready()) ?? null;
  return {
    concurrency: rig.concurrency,
    meta: rig.meta,
    record(facts, runId, emit) {
      sink = facts;
      recordRunFact(facts, runId, RUN_FACTS.invocation, invocationFact(envelope.config, envelope.modelHosts, envelope.prices));
      if (envelope.tiers) facts.addRunFact(runId, TIERS_FACT, envelope.tiers);
      recordRunFact(facts, runId, RUN_FACTS.unitBuild, unitBuildFact(envelope.headUnit, options.unitBuild));
      rig.record?.(facts, runId, emit);
      // the unit's connects, drops, pauses and counts, recorded alike for every kind
      if (envelope.headUnit) watch = watchHeadUnit(envelope.headUnit, { store: facts, runId, log, notify: (notice) => emit({ type: 'headunit', runId, ...notice }) });
      return { invocationEnded: () => calls?.flush(facts, runId, null, true) };
    },
    // no item starts while the unit is away; one that does not come back within the grace stops the run (resumable)
    ready,
    connectedUnits: () => envelope.headUnit?.bridge?.connectedUnits() ?? [],
    async run(runId, planned, signal, emit) {
      let finished: Finished;
      try {
        finished = await rig.run(runId, planned, signal, emit, ready);
      } catch (error) {
        // an abandoned item's model calls happened too: recorded with the run at once, under its key
        if (sink) calls?.flush(sink, runId, planned.key);
        throw fault() ? new ItemAborted(planned.key) : error;
      }
      if (fault()) {
        // the item ran into a failed device: its errors are the rig's, not the unit's. Abandoned (run again on resume), what it produced is recorded with the run
        if (sink) {
          for (const fact of finished.facts ?? []) sink.addRunFact(runId, fact.kind, fact.data);
          calls?.flush(sink, runId, planned.key);
        }
        throw new ItemAborted(planned.key);
      }
      return { ...finished, facts: [...(finished.facts ?? []), ...(calls?.take(runId, planned.key) ?? [])] };
    },
    ...(rig.afterItems ? { afterItems: rig.afterItems.bind(rig) } : {}),
    close: () =>
      (closing ??= (async () => {
        watch?.close();
        await rig.close();
      })()),
  };
}
