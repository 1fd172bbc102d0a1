import { parseOrThrow } from '../../domain/validation.ts';
import { z } from 'zod';
import { RecordedFactSchema } from '../../run/run-facts.ts';
import { modelRefPathFields } from '../../run/path-fields.ts';
import { jsonCodec, llmPathFields, type CampaignKindDefinition, type PathField, type RigNeeds } from '../../run/kind.ts';
import { TrialResultSchema, type TrialResult } from './loop.ts';
import { forgetUnreachedItems, type UnitReachSample } from '../../run/unit-reach.ts';
import type { FinishedTrial } from './campaign.ts';
import { toolAgentsModelRefs } from './config.ts';
import { loadToolAgentsConfig, ToolAgentsConfigSchema, type LoadedToolAgents, type ToolAgentsConfig } from './config.ts';
import type { InvalidTask } from '../../toolenv/tasks.ts';
import { TOOL_AGENTS_FACTS, TOOL_AGENTS_KIND, ToolTrialItemSchema, trialKey, trialOutcomeWord, type ToolTrialItem } from './results.ts';
import { toolAgentsView } from './view.ts';

/** The tasks a plan could not load, kept from planning to the run's creation (recorded with it). */
const notLoaded = new WeakMap<LoadedToolAgents, InvalidTask[]>();

/** A loaded tool-agents config as a fleet worker receives it (each trial's task travels with its job). */
const WireToolAgentsSchema = z.strictObject({ config: ToolAgentsConfigSchema, path: z.string().min(1), taskFiles: z.array(z.string().min(1)) });

/** Where a worker's agent is: the replay agent runs in the worker, an endpoint model over HTTP, a head unit dialling in to the worker's bridge. */
const AGENT_TRANSPORT: Record<ToolAgentsConfig['agent']['type'], RigNeeds['transport']> = { replay: 'reference', endpoint: 'http', bridge: 'bridge' };

/**
 * Whether a trial reached its agent (the head unit on the bridge, the endpoint model): it did once the agent
 * answered a message, or the trial ended otherwise than by the agent failing; a trial that never got to the agent
 * (not runnable, the task user failed first) says nothing.
 */
function trialReach(result: TrialResult): UnitReachSample | null {
  if (result.agentMessages > 0 || result.outcome === 'scored' || result.outcome === 'max_messages') return { reached: true, cause: null };
  if (result.outcome === 'agent_error') return { reached: false, cause: result.reason };
  return null;
}

/** What a trial's stored outcome word means to the live view. */
const LIVE_OUTCOME: Record<string, 'pass' | 'fail' | 'inconclusive' | 'error'> = { pass: 'pass', fail: 'fail', not_runnable: 'inconclusive' };

/**
 * The tool-agents kind: CAR-bench-format tool-using tasks (docs/tool-agents.md). One item per task trial (key
 * `<task id>#<trial>`), run by an agent in the simulated car against a task user, scored by CAR-bench's reward
 * components and policy judges; stored as item results.
 */
export const toolAgentsKind: CampaignKindDefinition<LoadedToolAgents, ToolTrialItem, FinishedTrial> = {
  name: TOOL_AGENTS_KIND,
  nouns: { item: 'task trial', items: 'task trials' },
  configSchema: ToolAgentsConfigSchema,
  load: loadToolAgentsConfig,
  modelRefs: (config) => toolAgentsModelRefs(config),
  pathFields: (config) => [
    ...config.tasks.map((path, i): PathField<ToolAgentsConfig> => ({ field: `tasks.${i}`, path, kind: 'read', rewrite: (c, p) => (c.tasks[i] = p) })),
    ...modelRefPathFields<ToolAgentsConfig>('simulator', config.simulator, (c, ref) => (c.simulator = ref)),
    ...config.judges.flatMap((ref, i) => modelRefPathFields<ToolAgentsConfig>(`judges.${i}`, ref, (c, r) => (c.judges[i] = r))),
    ...(config.agent.type === 'endpoint' ? modelRefPathFields<ToolAgentsConfig>('agent.model', config.agent.model, (c, ref) => ((c.agent as { model: string }).model = ref)) : []),
    ...llmPathFields(config),
  ],
  async plan(loaded, log) {
    const { planToolTrials } = await import('./campaign.ts');
    const { plan, invalidTasks } = planToolTrials(loaded);
    for (const bad of invalidTasks) log(`task not loaded: ${bad.where} ${bad.taskId}: ${bad.reason}`);
    notLoaded.set(loaded, invalidTasks);
    return plan.map((item) => ({ key: trialKey(item.taskId, item.trial), item }));
  },
  open: async (loaded, options) => (await import('./campaign.ts')).openToolAgentsRig(loaded, options),
  storage: {
    create(store, loaded, plan, meta) {
      const runId = store.createItemRun({ name: loaded.config.name, kind: TOOL_AGENTS_KIND, config: loaded.config, plan, meta });
      store.addRunFact(runId, TOOL_AGENTS_FACTS.invalidTasks, notLoaded.get(loaded) ?? []);
      return runId;
    },
    remaining: (store, run) => store.remainingItems(run.id).map((row) => ({ key: row.key, item: parseOrThrow(ToolTrialItemSchema, row.item, `${store.path}: run ${run.id} trial "${row.key}"`) })),
    save: (store, runId, key, { result, facts }) => store.saveItemResult(runId, key, trialOutcomeWord(result), result, facts),
    forgetUnreached: (store, runId) => forgetUnreachedItems(store, runId, (result, where) => trialReach(parseOrThrow(TrialResultSchema, result, where))),
  },
  unitReach: ({ result }) => trialReach(result),
  startedEvent: (runId, { key, item }) => ({ type: 'item_started', runId, key, label: `${item.taskId} (trial ${item.trial + 1})` }),
  finishedEvent: (runId, key, { result }) => ({ type: 'item_finished', runId, key, outcome: LIVE_OUTCOME[trialOutcomeWord(result)] ?? 'error', word: trialOutcomeWord(result) }),
  wire: {
    loaded: jsonCodec(WireToolAgentsSchema),
    item: jsonCodec(ToolTrialItemSchema),
    finished: jsonCodec(z.strictObject({ result: TrialResultSchema, facts: z.array(RecordedFactSchema) })),
    needs: ({ config }) => ({ transport: AGENT_TRANSPORT[config.agent.type], capabilities: ['text', 'tools'] }),
  },
  view: toolAgentsView,
  outputs: {
    async write(store, runId, outDir) {
      const [{ writeToolAgentsOutputs }, { firstScreenLine }] = await Promise.all([import('./outputs.ts'), import('../../report/first-screen.ts')]);
      const { summary, firstScreen } = writeToolAgentsOutputs(store, runId, outDir);
      const status = store.getRun(runId)?.status;
      return [
        `run ${runId} ${status}: ${summary.trials}/${summary.planned} task trials, R = 1 in ${Object.values(summary.families).reduce((n, f) => n + f.successes, 0)}; ${summary.notRunnable.length} tasks not runnable, ${summary.invalidTasks.length} not loaded`,
        ...Object.entries(summary.families).map(([family, f]) => {
          const last = f.reliability.byK.at(-1);
          const atK = last && last.k > 1 ? `, pass^${last.k} ${last.passHatK.unbiased.toFixed(3)} (first-k ${last.passHatK.firstK.toFixed(3)}), pass@${last.k} ${last.passAtK.unbiased.toFixed(3)}` : '';
          return `  ${family}: ${f.runnableTasks}/${f.tasks} tasks runnable; pass^1 ${f.reliability.byK[0]?.passHatK.unbiased.toFixed(3) ?? 'n/a'}${atK}`;
        }),
        `  Avg Pass^3 (CAR-bench leaderboard): ${summary.competition.macroPassHat3 === null ? 'n/a (needs base, hallucination and disambiguation tasks with 3 trials)' : summary.competition.macroPassHat3.toFixed(3)}`,
        `  ${summary.reward.statement}`,
        ...(summary.misfires.trials.length
          ? [`  user-simulator errors: in ${summary.misfires.trials.length} of ${summary.misfires.failedTrials} failed trials, the sole source in ${summary.misfires.soleSource}; pass rate ${summary.misfires.passRate.included?.toFixed(3)} as scored, ${summary.misfires.passRate.excluded?.toFixed(3)} without the sole-source ones`]
          : []),
        ...(summary.hallucinationFailures.trials.length ? [`  failed hallucination trials: ${summary.hallucinationFailures.fabrication} fabrication, ${summary.hallucinationFailures.concealment} concealment`] : []),
        // last: the report's first screen in one line
        firstScreenLine(firstScreen),
      ];
    },
    async summaryJson(store, run) {
      const [{ toolAgentsSummaryJson }, { computeToolAgentsSummary }] = await Promise.all([import('./outputs.ts'), import('./results.ts')]);
      return toolAgentsSummaryJson(computeToolAgentsSummary(store, run.id).summary);
    },
  },
};
