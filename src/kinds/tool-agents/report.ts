import { escapeXml, escapeXmlAttribute as attr } from '../../report/escape.ts';
import type { TrialResult } from './loop.ts';

/**
 * Plain renderings of tool-task trials for the report and CI: JUnit XML (one test case per task trial; a task that is
 * not runnable is a skipped case with the reason) and a readable trajectory (tool calls with results, state diff,
 * failed components, policies).
 */
export function toolTrialsJunit(results: readonly TrialResult[], suiteName: string): string {
  let failures = 0;
  let errors = 0;
  let skipped = 0;
  const cases = results.map((r) => {
    const head = `name="${attr(`${r.taskId} trial ${r.trial}`)}" classname="${attr(`carbench.${r.family}.${r.taskType}`)}"`;
    if (r.outcome === 'not_runnable') {
      skipped++;
      return `    <testcase ${head}>\n      <skipped message="${attr(`not runnable: ${r.reason}`)}"/>\n    </testcase>`;
    }
    if (r.outcome !== 'scored') {
      errors++;
      return `    <testcase ${head}>\n      <error type="${r.outcome}" message="${attr(r.reason)}">${escapeXml(r.anomalies.join('\n'))}</error>\n    </testcase>`;
    }
    if (r.reward === 0) {
      failures++;
      const components = r.score ? (['state', 'subset', 'execution', 'end', 'policy', 'manipulation'] as const).filter((c) => !r.score![c].passed) : [];
      return `    <testcase ${head}>\n      <failure type="${attr(components.join(',') || 'reward_0')}" message="${attr(`R = 0: ${r.reason}`)}">${escapeXml(r.failures.join('\n'))}</failure>\n    </testcase>`;
    }
    return `    <testcase ${head}/>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${attr(suiteName)}" tests="${results.length}" failures="${failures}" errors="${errors}" skipped="${skipped}">`,
    `  <testsuite name="${attr(suiteName)}" tests="${results.length}" failures="${failures}" errors="${errors}" skipped="${skipped}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

const clip = (text: string, max = 400) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);

/** A technician's view of one trial: the conversation with tool calls and results, then the verdict per component. */
export function trialText(r: TrialResult): string {
  const lines = [`${r.taskId} (${r.taskType}) trial ${r.trial}, agent ${r.agent}, user ${r.userSimulator}: ${r.outcome}, R = ${r.reward ?? 'n/a'} — ${r.reason}`];
  for (const m of r.messages) {
    if (m.role === 'user') lines.push(`  user: ${clip(m.content)}`);
    else if (m.role === 'assistant' && m.toolCalls.length) for (const c of m.toolCalls) lines.push(`  agent → ${c.name}(${clip(typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments), 200)})`);
    else if (m.role === 'assistant') lines.push(`  agent: ${clip(m.content)}`);
    else lines.push(`    ← ${m.name} [${m.status}]: ${clip(m.content, 300)}`);
  }
  if (r.score) {
    const s = r.score;
    const flag = (c: { applies: boolean; passed: boolean }) => (!c.applies ? 'n/a' : c.passed ? 'pass' : 'FAIL');
    lines.push(`  components: state ${flag(s.state)}, subset ${flag(s.subset)}, execution ${flag(s.execution)}, end ${flag(s.end)}, policy ${flag(s.policy)}`);
    for (const d of s.state.finalDiff) lines.push(`    final state ${d.field}: expected ${JSON.stringify(d.expected)}, got ${JSON.stringify(d.actual)}`);
    for (const j of s.policy.judged) lines.push(`    policy ${j.rule}: ${j.status} (${j.judge})${j.status === 'violated' ? `: ${j.reasoning}` : ''}`);
  }
  for (const f of r.failures) lines.push(`  ✗ ${f}`);
  for (const a of r.anomalies) lines.push(`  ! ${a}`);
  return lines.join('\n');
}
