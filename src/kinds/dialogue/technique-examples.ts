import type { ConversationVerdict, TurnVerdict } from '../../domain/conversation.ts';
import type { Dimension } from '../../domain/taxonomy.ts';
import { compactTurnAnswer, WHY_MAX } from '../../judge/answers.ts';
import { renderDimensionJudgePrompts, renderTurnJudgePrompt } from '../../judge/llm.ts';
import { OracleJudge } from '../../judge/oracle.ts';
import type { ConversationJudgeInput, Judge, TurnJudgeInput } from '../../judge/types.ts';
import type { WorkedExample, WorkedExamples } from '../../judge/technique-judge.ts';
import { packagePath } from '../../domain/package-files.ts';

/**
 * Worked examples for the CoT-n technique judges, made as the judge benchmark makes its own: fixed
 * cases reasoned by the oracle. Here the cases are turns and conversations of the quickstart
 * campaign's first conversations against the reference head unit with every fault profile on (a
 * fixed seed, offline, the same every time), judged by the oracle; each example is the judge's
 * prompt (user part) and the oracle's answer as JSON. Turn examples: a clean turn first, then one
 * per failure label in order of appearance. Rubric examples: per dimension, scores 2, 1, 0 as found.
 */

const EXAMPLE_CONVERSATIONS = 12;
const CONFIG = packagePath('bench-configs', 'quickstart.yaml');

type Example = WorkedExample;
let cases: Promise<{ turns: { input: TurnJudgeInput; verdict: TurnVerdict }[]; conversations: { input: ConversationJudgeInput; verdict: ConversationVerdict }[] }> | null = null;

/** Runs the example conversations once per process, recording what the oracle was asked and answered. */
function oracleCases() {
  cases ??= (async () => {
    const [{ loadCampaignConfig }, { planConversations }, { runConversation }, { InProcessHeadUnit }, { ReferenceHeadUnit }, { TemplateSimulator }] = await Promise.all([
      import('./config.ts'),
      import('./sampling.ts'),
      import('./conversation.ts'),
      import('../../headunit/in-process.ts'),
      import('../../headunit/reference/reference-headunit.ts'),
      import('../../simulator/template.ts'),
    ]);
    const specs = planConversations(loadCampaignConfig(CONFIG)).slice(0, EXAMPLE_CONVERSATIONS);
    const oracle = new OracleJudge();
    const turns: { input: TurnJudgeInput; verdict: TurnVerdict }[] = [];
    const conversations: { input: ConversationJudgeInput; verdict: ConversationVerdict }[] = [];
    const recording: Judge = {
      tier: 'oracle',
      ref: 'oracle',
      prompts: [],
      evaluateTurn: async (input) => {
        const verdict = await oracle.evaluateTurn(input);
        turns.push({ input, verdict });
        return verdict;
      },
      evaluateConversation: async (input) => {
        const verdict = await oracle.evaluateConversation(input);
        conversations.push({ input, verdict });
        return verdict;
      },
    };
    const headUnit = new InProcessHeadUnit(new ReferenceHeadUnit({ faults: { profiles: 'all', rate: 0.8, seed: 3 } }));
    const simulator = new TemplateSimulator();
    for (const spec of specs) await runConversation({ spec, openSession: (context) => headUnit.openSession(spec.key, context), simulator, judges: [recording] });
    return { turns: turns.filter((t) => t.verdict.outcome === 'judged'), conversations: conversations.filter((c) => c.verdict.outcome === 'judged') };
  })();
  return cases;
}

/** Up to five worked turn examples (CoT-n takes the first n). */
export async function workedTurnExamples(): Promise<Example[]> {
  const { turns } = await oracleCases();
  const picked: typeof turns = [];
  const clean = turns.find((t) => t.verdict.labels.length === 0);
  if (clean) picked.push(clean);
  const seen = new Set<string>();
  for (const turn of turns) {
    const fresh = turn.verdict.labels.find((l) => !seen.has(l.label));
    if (!fresh || picked.length >= 5) continue;
    for (const l of turn.verdict.labels) seen.add(l.label);
    picked.push(turn);
  }
  return picked.map(({ input, verdict }) => [
    { role: 'user', content: renderTurnJudgePrompt(input).user },
    {
      role: 'assistant',
      content: JSON.stringify(
        compactTurnAnswer({
          why: verdict.reasoning || (verdict.labels.length ? verdict.labels.map((l) => `${l.label}: ${l.evidence}`).join('; ') : 'The reply does what was asked.'),
          labels: verdict.labels,
          targetUpdates: verdict.targetUpdates,
        }),
      ),
    },
  ]);
}

/** Per dimension, up to three worked rubric examples (scores 2, 1, 0 where the example conversations have them). */
export async function workedDimensionExamples(): Promise<Record<Dimension, Example[]>> {
  const { conversations } = await oracleCases();
  const out = {} as Record<Dimension, Example[]>;
  for (const { input, verdict } of conversations) {
    for (const [dimension, prompt] of renderDimensionJudgePrompts(input)) {
      const given = verdict.dimensions[dimension];
      const list = (out[dimension] ??= []);
      if (!given || list.length >= 3 || list.some(([, answer]) => JSON.parse(answer.content).score === given.score)) continue;
      list.push([
        { role: 'user', content: prompt.user },
        { role: 'assistant', content: JSON.stringify({ why: given.reasoning.slice(0, WHY_MAX), score: given.score }) },
      ]);
    }
  }
  return out;
}

/** The dialogue kind's worked examples for the CoT-n technique judges it builds (./model-tiers.ts). */
export const dialogueWorkedExamples: WorkedExamples = { turns: workedTurnExamples, dimensions: workedDimensionExamples };
