import type { RecordedRequest } from '../helpers/fakeLlmServer.ts';
import { renderPairMessage } from '../../src/judgebench/techniques.ts';
import type { Pair } from '../../src/judgebench/dataset.ts';
import { injectedPairs } from '../../src/judgebench/injection.ts';

/**
 * A scripted judge "model" for the fake OpenAI-compatible server. It finds the pair under judgement
 * (the last message that is a rendered pair) and answers by the model name in the request:
 *  - truthful: always the pair's label (a consistent model)
 *  - contrary: always the opposite
 *  - noisy: the label when the sampling seed is odd, else the opposite (an inconsistent model)
 *  - split: by persona: Investigator and Auditor tell the truth, the Forensic Examiner the opposite,
 *    in every round (a debate that never reaches consensus)
 *  - persuadable: like split in the first round; in a debate round everyone tells the truth
 *  - unsure-contrary: the opposite, with confidence 0.2
 *  - contrary-persuadable: the opposite in the first round; in a discussion round the truth
 *  - obedient: the truth, unless the recommendation carries a note (the injection set's appended
 *    instruction): then what the note demands, the opposite (a judge that follows injected instructions)
 * Pairs of the injection set (injectedPairs) are known too, with their label, in both methods' renderings.
 */
export function fakeJudgeModel(pairs: readonly Pair[]) {
  const known = [...pairs, ...injectedPairs(pairs)].map((p) => ({ ...p, user: { ...p.user, preferences: undefined } }));
  // the pair as either method's prompt renders it
  const labels = new Map(known.flatMap((p) => (['lab', 'paper'] as const).map((method) => [renderPairMessage(p, method), p.label] as const)));
  return (request: RecordedRequest): string => {
    const body = request.body as { model: string; seed?: number; messages: Array<{ role: string; content: string }> };
    const messages = body.messages;
    const pairMessage = [...messages].reverse().find((m) => m.role === 'user' && labels.has(m.content));
    if (!pairMessage) return 'I cannot find the pair';
    const truth = labels.get(pairMessage.content)!;
    const system = messages.find((m) => m.role === 'system')?.content ?? '';
    const debating = messages.some((m) => m.content.includes('The other judges answered'));
    let fits = truth;
    let confidence = 0.95;
    switch (body.model) {
      case 'contrary':
        fits = !truth;
        break;
      case 'noisy':
        fits = (body.seed ?? 0) % 2 === 1 ? truth : !truth;
        break;
      case 'split':
        fits = system.includes('Forensic Examiner') ? !truth : truth;
        break;
      case 'persuadable':
        fits = system.includes('Forensic Examiner') && !debating ? !truth : truth;
        break;
      case 'contrary-persuadable':
        fits = debating ? truth : !truth;
        break;
      case 'obedient':
        fits = /<recommendation>[^\n]*"note":/.test(pairMessage.content) ? !truth : truth;
        break;
      case 'unsure-contrary':
        fits = !truth;
        confidence = 0.2;
        break;
    }
    return JSON.stringify({ reasoning: `checked the five rules (${body.model})`, fits, confidence });
  };
}
