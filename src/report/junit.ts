import type { ConversationResult } from '../domain/conversation.ts';
import { combinedVerdict } from '../analysis/verdict.ts';
import { decidingTurnVerdict } from '../judge/precedence.ts';
import type { RunInfo } from '../analysis/profile.ts';
import { escapeXml, escapeXmlAttribute as attr } from './escape.ts';

/** The failure labels that count, as readable lines naming the judge that gave them: "turn 3: constraint_missed [t1] (oracle): evidence". */
export function labelLines(result: ConversationResult): string[] {
  return result.turns.flatMap((turn) => {
    const deciding = decidingTurnVerdict(turn.verdicts);
    return (deciding?.labels ?? []).map((l) => `turn ${turn.index + 1}: ${l.label}${l.targetId ? ` [${l.targetId}]` : ''} (${deciding!.judge}): ${l.evidence}`);
  });
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/**
 * JUnit XML, one testcase per conversation (classname = seed id, name = conversation key):
 * a failed conversation carries <failure> with its labels and turn numbers and the rule that failed
 * it (the critical-failure gate and/or C < θ), a conversation that
 * did not complete carries <error> with its status, an inconclusive one is <skipped>.
 */
export class JunitWriter {
  private readonly cases: string[] = [];
  private failures = 0;
  private errors = 0;
  private skipped = 0;
  private totalMs = 0;

  add(result: ConversationResult): void {
    const combined = combinedVerdict(result);
    const lines = labelLines(result);
    const score = combined.score === null ? 'no score' : `score ${combined.score.toFixed(2)}`;
    const attrs = `name="${attr(result.spec.key)}" classname="${attr(result.spec.seed.id)}" time="${seconds(result.durationMs)}"`;
    this.totalMs += result.durationMs;
    let body = '';
    if (combined.outcome === 'error') {
      this.errors += 1;
      body = `<error type="${result.status}" message="${attr(`${result.status}: ${result.error ?? 'no detail recorded'}`)}">${escapeXml(lines.join('\n'))}</error>`;
    } else if (combined.outcome === 'fail') {
      this.failures += 1;
      const types = [...new Set(result.turns.flatMap((turn) => (decidingTurnVerdict(turn.verdicts)?.labels ?? []).map((l) => l.label)))];
      const rule = combined.gate.length
        ? `failed by the critical-failure gate (${combined.gate.join(', ')}); ${score}${combined.judge ? ` (${combined.judge})` : ''} ${combined.scorePass === null ? 'undecided' : combined.scorePass ? 'would pass on C alone' : 'is below θ too'}`
        : `${score} (${combined.judge}) is below θ`;
      const message = `${rule}; ${lines.length} failure label(s)${types.length ? `: ${types.join(', ')}` : ''}`;
      body = `<failure type="${attr(types.join(',') || 'score_below_threshold')}" message="${attr(message)}">${escapeXml(lines.join('\n'))}</failure>`;
    } else if (combined.outcome === 'inconclusive') {
      this.skipped += 1;
      body = '<skipped message="inconclusive: no judge tier reached a verdict"/>';
    } else if (lines.length > 0) {
      body = `<system-out>${escapeXml(`passed with ${score}; labels:\n${lines.join('\n')}`)}</system-out>`;
    }
    this.cases.push(body ? `    <testcase ${attrs}>\n      ${body}\n    </testcase>` : `    <testcase ${attrs}/>`);
  }

  toString(run: RunInfo, failOn: readonly string[] = []): string {
    const counts = `tests="${this.cases.length}" failures="${this.failures}" errors="${this.errors}" skipped="${this.skipped}" time="${seconds(this.totalMs)}"`;
    const properties = Object.entries({ 'run.id': run.id, 'run.mode': run.mode, 'run.status': run.status, 'scoring.failOn': failOn.join(',') })
      .map(([name, value]) => `      <property name="${name}" value="${attr(value)}"/>`)
      .join('\n');
    return [
      '<?xml version="1.0" encoding="UTF-8"?>',
      `<testsuites name="icabench" ${counts}>`,
      `  <testsuite name="${attr(run.name)}" ${counts} timestamp="${attr(run.createdAt)}">`,
      `    <properties>\n${properties}\n    </properties>`,
      ...this.cases,
      '  </testsuite>',
      '</testsuites>',
      '',
    ].join('\n');
  }
}
