import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManualCorpus } from '../../src/manual/corpus.ts';
import { buildManualIndex } from '../../src/manual/manual-index.ts';
import { dataPath } from '../helpers/repoData.ts';
import { systemPromptOf, type RecordedRequest } from '../helpers/fakeLlmServer.ts';

/** The 41 vendored BMW chapters. */
export function bmwChapters(): string[] {
  const dir = dataPath('bmw-manual/xml');
  return readdirSync(dir).filter((f) => f.endsWith('.xml')).sort().map((f) => join(dir, f));
}

let corpus: Promise<ManualCorpus> | null = null;
/** The index of the 41 chapters, built once per test file. */
export function bmwCorpus(): Promise<ManualCorpus> {
  corpus ??= buildManualIndex(bmwChapters()).then((index) => new ManualCorpus(index));
  return corpus;
}

/** warnings.csv: warning_id, …, type (Warning | Notice | Danger | empty), warning_text (quoted CSV) */
export function readWarningsCsv(): Array<{ id: string; type: string }> {
  const text = readFileSync(dataPath('bmw-manual/warnings.csv'), 'utf8');
  const rows: string[][] = [];
  let field = '';
  let row: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\n') row.push(field), rows.push(row), (row = []), (field = '');
    else if (c !== '\r') field += c;
  }
  if (field || row.length) row.push(field), rows.push(row);
  const [header, ...body] = rows;
  const id = header.indexOf('warning_id');
  const type = header.indexOf('type');
  return body.filter((r) => r.length > type).map((r) => ({ id: r[id], type: r[type] }));
}


export const userPromptOf = (r: RecordedRequest): string => (r.body?.messages ?? []).find((m: { role: string }) => m.role === 'user')?.content ?? '';

/** A stand-in model for the manual prompts: it recognises the step from the system prompt and answers valid JSON. It understands nothing. */
export function manualResponder(overrides: Partial<Record<string, string>> = {}) {
  const steps = ['SplitTag extraction', 'SplitTag tagging', 'coverage evaluator', 'relevance evaluator', 'correctness evaluator', 'confidence evaluator', 'actionability evaluator', 'question step of the Test Set Generator', 'answer step of the Test Set Generator'];
  return (request: RecordedRequest): string => {
    const system = systemPromptOf(request);
    const user = userPromptOf(request);
    const step = steps.find((s) => system.includes(s)) ?? 'unknown';
    if (overrides[step] !== undefined) return overrides[step]!;
    switch (step) {
      case 'SplitTag extraction':
        // the assistant's answer (it asks to press the button) or a reference answer
        return user.includes('Press the button. The weather')
          ? JSON.stringify({ facts: [{ text: 'Press the button.' }, { text: 'The weather is nice.' }] })
          : JSON.stringify({ facts: [{ text: 'First, press the button.' }, { text: 'Watch the traffic.' }] });
      case 'SplitTag tagging': {
        const ids = [...user.matchAll(/^(f\d+): /gm)].map((m) => m[1]);
        return JSON.stringify({ facts: ids.map((factId, i) => ({ factId, essentiality: 'essential', safetyCritical: i === 1, reasoning: i === 1 ? 'a risk to others' : 'answers the question' })) });
      }
      case 'coverage evaluator':
        return JSON.stringify({ coverage: [{ factId: 'r0', covered: true, by: ['a0'] }, { factId: 'r1', covered: false, by: [] }] });
      case 'relevance evaluator':
        return JSON.stringify({ judgements: [{ factId: 'a0', value: true }, { factId: 'a1', value: false }] });
      case 'correctness evaluator':
        return system.includes('not mentioned') ? JSON.stringify({ judgements: [{ factId: 'a0', verdict: 'correct' }] }) : JSON.stringify({ judgements: [{ factId: 'a0', value: true }] });
      case 'confidence evaluator':
        return JSON.stringify({ value: 1, reasoning: 'definite' });
      case 'actionability evaluator':
        return JSON.stringify({ value: 1, reasoning: 'a step is given' });
      case 'question step of the Test Set Generator':
        return JSON.stringify({ questions: [{ kind: 'procedure', difficulty: 'beginner', question: 'How do I use what this part of the manual describes?' }] });
      case 'answer step of the Test Set Generator': {
        const mainId = /Main section \[([^\]]+)\]/.exec(user)?.[1] ?? 'x';
        return JSON.stringify({ answer: 'First press the button, and watch the traffic.', sectionIds: [mainId, 'not-a-given-section'] });
      }
      default:
        return 'unknown prompt';
    }
  };
}
