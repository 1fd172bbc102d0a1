/**
 * Tolerant reading of "almost JSON" as small local models write it: code fences, prose around
 * the object, trailing commas, single-quoted strings, unquoted keys, Python's True/False/None.
 * Anything beyond that is an invalid output and goes back to the model with the error.
 */
export type NearJsonResult = { ok: true; value: unknown } | { ok: false; error: string };

export function parseNearJson(text: string): NearJsonResult {
  // the usual answer (a server that enforces the schema): the whole text is one JSON object, no scan needed
  const whole = text.trim();
  if (whole.startsWith('{') || whole.startsWith('[')) {
    try {
      return { ok: true, value: JSON.parse(whole) };
    } catch {
      // prose after it, a repairable object, a cut-off answer: the scan below decides
    }
  }
  const candidate = extractJsonCandidate(text);
  if (candidate === null) return { ok: false, error: 'no JSON object or array found in the output' };
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch {
    // fall through to the repair pass
  }
  try {
    return { ok: true, value: JSON.parse(repairJson(candidate)) };
  } catch (error) {
    const truncated = !isBalanced(candidate);
    return {
      ok: false,
      error: truncated ? 'the JSON is cut off (unbalanced brackets or an unterminated string)' : `not valid JSON: ${(error as Error).message}`,
    };
  }
}

/** The first balanced {...} or [...] (inside a code fence if there is one); unbalanced text is returned whole so the error says "cut off". */
function extractJsonCandidate(text: string): string | null {
  const fence = /```(?:json|JSON)?\s*\n?([\s\S]*?)(?:```|$)/.exec(text);
  const body = fence && /[{[]/.test(fence[1]) ? fence[1] : text;
  const start = body.search(/[{[]/);
  if (start < 0) return null;
  const stack: string[] = [];
  let quote: string | null = null;
  for (let i = start; i < body.length; i++) {
    const ch = body[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{' || ch === '[') stack.push(ch === '{' ? '}' : ']');
    else if (ch === '}' || ch === ']') {
      if (stack.pop() !== ch) return body.slice(start, i + 1);
      if (stack.length === 0) return body.slice(start, i + 1);
    }
  }
  return body.slice(start);
}

function isBalanced(candidate: string): boolean {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < candidate.length; i++) {
    const ch = candidate[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
  }
  return depth === 0 && quote === null;
}

const BARE_WORDS: Record<string, string> = { true: 'true', false: 'false', null: 'null', True: 'true', False: 'false', None: 'null' };

/** Rewrites the candidate token by token into strict JSON. */
function repairJson(candidate: string): string {
  let out = '';
  let i = 0;
  while (i < candidate.length) {
    const ch = candidate[i];
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      let value = '';
      while (j < candidate.length && candidate[j] !== ch) {
        if (candidate[j] === '\\' && j + 1 < candidate.length) {
          const next = candidate[j + 1];
          value += next === "'" ? "'" : candidate.slice(j, j + 2);
          j += 2;
          continue;
        }
        value += candidate[j] === '"' ? '\\"' : candidate[j] === '\n' ? '\\n' : candidate[j];
        j++;
      }
      out += `"${value}"`;
      i = j + 1;
      continue;
    }
    if (ch === ',') {
      const rest = candidate.slice(i + 1).trimStart();
      if (rest.startsWith('}') || rest.startsWith(']')) {
        i++;
        continue;
      }
    }
    if (/[A-Za-z_$]/.test(ch)) {
      const word = /^[A-Za-z_$][\w$-]*/.exec(candidate.slice(i))![0];
      const after = candidate.slice(i + word.length).trimStart();
      if (after.startsWith(':')) out += JSON.stringify(word);
      else out += BARE_WORDS[word] ?? word;
      i += word.length;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}
