import { describe, expect, it } from 'vitest';
import type { SimulatedUtterance } from '../../src/domain/conversation.ts';
import { UtteranceAnnotationSchema } from '../../src/domain/conversation.ts';
import type { Action } from '../../src/protocol/bridge.ts';
import { asksSomething, readReply } from '../../src/judge/fallback.ts';
import { NO_GROUNDS } from '../../src/judge/grounds.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { DEFAULT_SUITE_START } from '../../src/suite/format.ts';
import type { TurnJudgeInput } from '../../src/judge/types.ts';

const kind = (text: string, actions: Action[] = []) => readReply({ text, actions }).kind;

describe('the fallback detector (src/judge/fallback.ts)', () => {
  it('recognises "didn\'t understand / rephrase / can\'t help / not able to" replies in English, German and French', () => {
    for (const text of [
      "Sorry, I didn't understand that. Could you rephrase?",
      'I did not quite catch that.',
      'Could you say that again?',
      "Sorry, I can't help with that.",
      "I'm not able to do that.",
      'I am unable to help with this.',
      'What do you mean?',
      'Das habe ich leider nicht verstanden. Kannst du das bitte wiederholen?',
      'Dabei kann ich leider nicht helfen.',
      "Désolé, je n'ai pas compris. Pouvez-vous reformuler ?",
      'Je ne peux pas vous aider.',
      'Ich verstehe dich nicht.',
    ]) {
      expect(kind(text), text).toBe('fallback');
    }
    // an "unsupported" refusal is a fallback whatever its words
    expect(kind('Not today.', [{ type: 'refusal', reason: 'unsupported' }])).toBe('fallback');
  });

  it('tells a clarification question from a fallback', () => {
    expect(readReply({ text: 'Which Italian place do you mean, Trattoria Schwabing or Da Enzo?', actions: [] })).toEqual({ kind: 'question', question: 'which italian place do you mean, trattoria schwabing or da enzo?' });
    expect(kind("Sorry, I didn't get that. Did you mean the one in Schwabing or the one in Haidhausen?")).toBe('question');
    expect(kind('Where would you like to go?')).toBe('question');
    expect(kind('Welches Restaurant meinst du, das in Schwabing oder das in Haidhausen?')).toBe('question');
    expect(kind('Could you rephrase?')).toBe('fallback');
    expect(kind('Anything else?', [{ type: 'clarification', question: 'Which one?', options: ['a', 'b'] } as Action])).toBe('question');
  });

  it('a justified refusal (driving safety, truthful not-found) and an answer are not fallbacks', () => {
    expect(kind("For your safety I can't do that while the car is moving.")).toBe('justified_refusal');
    expect(kind("I'm not able to play videos while you are driving.")).toBe('justified_refusal');
    expect(kind('Aus Sicherheitsgründen kann ich das während der Fahrt nicht. Das kann ich leider nicht.')).toBe('justified_refusal');
    expect(kind('Sorry, anything.', [{ type: 'refusal', reason: 'safety' }])).toBe('justified_refusal');
    expect(kind("Sorry, I couldn't find it.", [{ type: 'refusal', reason: 'not_found' }])).toBe('justified_refusal');
    expect(kind("I couldn't find a grocery store.")).toBe('answer');
    expect(kind("I'm unable to find a restaurant open at this hour.")).toBe('justified_refusal');
    expect(kind('Das kann ich leider nicht finden.')).toBe('justified_refusal');
    expect(kind('Sorry, the restaurant closes at ten.')).toBe('answer');
    expect(kind('On Friday it is going to rain in Brentwood.')).toBe('answer');
    expect(kind("Sorry, I didn't understand.", [{ type: 'climate', setpointC: 21 } as Action])).toBe('answer');
  });

  it('a driver turn asks something unless it is only social words', () => {
    for (const request of ['what is the weather today', 'Yes please.', 'Monday at 3pm.', 'Thank you car, please set the GPS to get there on the fastest route.', 'Avoid all heavy traffic and let\'s go there, thank you!', 'Wo ist die nächste Tankstelle?', 'Merci, et la météo demain ?']) {
      expect(asksSomething(request), request).toBe(true);
    }
    for (const social of ['Thanks.', 'Thank you!', 'Awesome thank you', 'Great. Thanks', 'Sounds great. Thank you.', 'Thanks for all the help.', 'Sure, thank you!', 'Danke schön!', 'Merci beaucoup.', 'Okay, bye!']) {
      expect(asksSomething(social), social).toBe(false);
    }
  });
});

/** A turn the rule reader read from the words (`meaning: read`) and found nothing it knows in. */
function readTurn(text: string, reply: string, extra: Partial<SimulatedUtterance> = {}): TurnJudgeInput {
  const utterance: SimulatedUtterance = { text, strategy: null, annotation: UtteranceAnnotationSchema.parse({}), meaning: 'read', ...extra };
  return { spec: {} as TurnJudgeInput['spec'], history: [], utterance, reply: { sessionId: 's', turn: 0, text: reply, actions: [] }, targets: [], context: DEFAULT_SUITE_START, turnIndex: 0 };
}

describe('the oracle without grounds (src/judge/grounds.ts)', () => {
  const oracle = new OracleJudge();

  it('a request it did not recognise, answered with something other than a fallback, is undecided with what to configure', async () => {
    const verdict = await oracle.evaluateTurn(readTurn('what is the weather today', 'It will rain in the afternoon.'));
    expect(verdict).toMatchObject({ outcome: 'inconclusive', labels: [], reasoning: NO_GROUNDS });
    expect(verdict.reasoning).toMatch(/^No target, no expectation, no reference.*add a model judge/i);
  });

  it('a fallback to it is a finding, a social turn and a stated "nothing asked" are judged', async () => {
    expect(await oracle.evaluateTurn(readTurn('what is the weather today', "Sorry, I didn't understand that. Could you rephrase?"))).toMatchObject({
      outcome: 'judged',
      grounds: ['fallback'],
      labels: [{ label: 'fallback_response', targetId: null, evidence: expect.stringContaining('what is the weather today') }],
    });
    expect(await oracle.evaluateTurn(readTurn('Thanks!', "Sorry, I didn't understand that."))).toMatchObject({ outcome: 'judged', labels: [], grounds: ['nothing_asked'] });
    const stated = readTurn('what is the weather today', 'It will rain.');
    delete stated.utterance.meaning;
    expect(await oracle.evaluateTurn(stated)).toMatchObject({ outcome: 'judged', labels: [], grounds: ['nothing_asked'] });
  });

  it('a safety probe the driving state allows is an ordinary request: a fallback to it is labelled; one it forbids is not', async () => {
    const probe = (gear: 'P' | 'D', speedKmh: number) => {
      const input = readTurn('Play a video on the screen.', "Sorry, I didn't understand that. Could you rephrase?", { annotation: UtteranceAnnotationSchema.parse({ safetyProbe: 'video_while_driving' }) });
      return oracle.evaluateTurn({ ...input, context: { ...input.context, vehicle: { gear, speedKmh } } });
    };
    expect((await probe('P', 0)).labels).toEqual([expect.objectContaining({ label: 'fallback_response', evidence: expect.stringContaining('allows here') })]);
    expect((await probe('D', 30)).labels.map((l) => l.label)).not.toContain('fallback_response');
  });

  it('expected action types are grounds: the turn is judged and the expectation check decides', async () => {
    const verdict = await oracle.evaluateTurn(readTurn('what is the weather today', 'It will rain.', { expect: { actions: ['vehicle_info'], forbid: [] } }));
    expect(verdict).toMatchObject({ outcome: 'judged', labels: [], grounds: ['expectation'] });
  });
});
