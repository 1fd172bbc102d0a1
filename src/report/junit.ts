import type { ConversationResult } from '../domain/conversation.ts';
import { combinedVerdict, findingLine, type CombinedVerdict } from '../analysis/verdict.ts';
import type { RunInfo } from '../analysis/profile.ts';
import { escapeXml, escapeXmlAttribute as attr } from './escape.ts';
import { RowSpool } from './spool.ts';

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** Why a failed conversation failed, in one line: its failOn findings, a scripted expectation (suites) and/or C against θ. */
function failRule(combined: CombinedVerdict): string {
  const score = combined.score === null ? 'no score' : `score ${combined.score.toFixed(2)}${combined.judge ? ` (${combined.judge})` : ''}`;
  const rules = [
    ...(combined.gate.length ? [`failed by its findings (failOn: ${combined.gate.join(', ')})`] : []),
    ...(combined.failedBy.includes('expectation') ? ['a scripted expectation did not hold'] : []),
  ];
  if (rules.length === 0) return `${score} is below θ`;
  return `${rules.join('; ')}; ${score} ${combined.scorePass === null ? 'undecided' : combined.scorePass ? 'would pass on C alone' : 'is below θ too'}`;
}

/**
 * JUnit XML, one testcase per conversation (classname = seed id, name = conversation key):
 * - a failed conversation carries one <failure> per finding (type = label, message = turn, label,
 *   severity, judge and evidence) after one naming the rule that failed it (its findings and/or C < θ);
 * - an inconclusive one (an undecided turn, or no decisive verdict) fails with "needs review" and the
 *   undecided turns, or is <skipped> when its result says `inconclusive: pass`;
 * - a conversation that did not complete carries <error> with its status;
 * - a passing one lists findings outside `failOn` in <system-out>.
 */
export class JunitWriter {
  private readonly cases: RowSpool;
  private failures = 0;
  private errors = 0;
  private skipped = 0;
  private totalMs = 0;

  /** `path`: the junit.xml to write; its test cases are spooled beside it as they come */
  constructor(path: string) {
    this.cases = new RowSpool(path);
  }

  add(result: ConversationResult, combined = combinedVerdict(result)): void {
    const lines = combined.findings.map(findingLine);
    const attrs = `name="${attr(result.spec.key)}" classname="${attr(result.spec.seed.id)}" time="${seconds(result.durationMs)}"`;
    this.totalMs += result.durationMs;
    const failure = (type: string, message: string, body = '') => `<failure type="${attr(type)}" message="${attr(message)}">${escapeXml(body)}</failure>`;
    let parts: string[] = [];
    if (combined.outcome === 'error') {
      this.errors += 1;
      parts = [`<error type="${result.status}" message="${attr(`${result.status}: ${result.error ?? 'no detail recorded'}`)}">${escapeXml(lines.join('\n'))}</error>`];
    } else if (combined.outcome === 'fail') {
      this.failures += 1;
      const rule = `${failRule(combined)}; ${lines.length} finding(s)`;
      const type = combined.gate.length ? 'findings' : combined.failedBy.includes('expectation') ? 'expectation' : 'score_below_threshold';
      parts = [failure(type, rule), ...combined.findings.map((f, i) => failure(f.label, lines[i], f.evidence))];
    } else if (combined.outcome === 'inconclusive' && result.inconclusive === 'review') {
      this.failures += 1;
      const turns = combined.undecidedTurns.length ? `no judge could decide turn(s) ${combined.undecidedTurns.join(', ')}` : 'no judge reached a verdict on C';
      parts = [failure('needs_review', `needs review: ${turns}`, lines.join('\n'))];
    } else if (combined.outcome === 'inconclusive') {
      this.skipped += 1;
      parts = ['<skipped message="inconclusive: no judge tier reached a verdict"/>'];
    } else if (lines.length > 0) {
      parts = [`<system-out>${escapeXml(`passed with score ${combined.score?.toFixed(2)}; findings outside failOn:\n${lines.join('\n')}`)}</system-out>`];
    }
    this.cases.add(parts.length ? `    <testcase ${attrs}>\n${parts.map((p) => `      ${p}\n`).join('')}    </testcase>\n` : `    <testcase ${attrs}/>\n`);
  }

  /** Writes the file: the suite's totals, then the test cases spooled so far. */
  write(run: RunInfo, failOn: readonly string[] = []): void {
    const counts = `tests="${this.cases.count}" failures="${this.failures}" errors="${this.errors}" skipped="${this.skipped}" time="${seconds(this.totalMs)}"`;
    const properties = Object.entries({ 'run.id': run.id, 'run.mode': run.mode, 'run.status': run.status, 'scoring.failOn': failOn.join(',') })
      .map(([name, value]) => `      <property name="${name}" value="${attr(value)}"/>`)
      .join('\n');
    const head = [
      '<?xml version="1.0" encoding="UTF-8"?>',
      `<testsuites name="icabench" ${counts}>`,
      `  <testsuite name="${attr(run.name)}" ${counts} timestamp="${attr(run.createdAt)}">`,
      `    <properties>\n${properties}\n    </properties>`,
      '',
    ].join('\n');
    this.cases.writeAround(head, '  </testsuite>\n</testsuites>\n');
  }

  discard(): void {
    this.cases.discard();
  }
}
