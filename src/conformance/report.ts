import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml, escapeXml, escapeXmlAttribute as attr } from '../report/escape.ts';
import type { CheckResult, ConformanceReport } from './checks.ts';

const seconds = (ms: number) => (ms / 1000).toFixed(3);
const evidenceText = (check: CheckResult) =>
  check.evidence.map((e) => `${e.atMs.toFixed(1).padStart(8)} ms ${e.direction === 'sent' ? 'bench → unit' : e.direction === 'received' ? 'unit → bench' : '      note  '} ${e.event === 'note' ? String(e.payload) : `${e.event} ${JSON.stringify(e.payload)}`}`).join('\n');

/** JUnit XML: one test case per check (classname conformance.<unit>), failure = the check failed, skipped = it does not apply. */
export function conformanceJunit(report: ConformanceReport): string {
  const classname = `conformance.${report.unit?.name ?? 'no-unit'}`;
  const cases = report.checks.map((check) => {
    const attrs = `name="${attr(`${check.id}: ${check.title}`)}" classname="${attr(classname)}" time="${seconds(check.durationMs)}"`;
    if (check.status === 'skipped') return `    <testcase ${attrs}>\n      <skipped message="${attr(check.detail)}"/>\n    </testcase>`;
    const out = `<system-out>${escapeXml(`requires: ${check.requires}\n${check.detail}\n\n${evidenceText(check)}`)}</system-out>`;
    if (check.status === 'fail') return `    <testcase ${attrs}>\n      <failure type="${attr(check.id)}" message="${attr(check.detail)}">${escapeXml(`requires: ${check.requires}\n\n${evidenceText(check)}`)}</failure>\n    </testcase>`;
    return `    <testcase ${attrs}>\n      ${out}\n    </testcase>`;
  });
  const failures = report.checks.filter((c) => c.status === 'fail').length;
  const skipped = report.checks.filter((c) => c.status === 'skipped').length;
  const total = report.checks.reduce((n, c) => n + c.durationMs, 0);
  const properties = Object.entries({ protocol: report.protocol, 'bridge.url': report.bridgeUrl, 'unit.version': report.unit?.version ?? '', turnTimeoutMs: String(report.limits.turnTimeoutMs) })
    .map(([name, value]) => `      <property name="${name}" value="${attr(value)}"/>`)
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="icabench conformance" tests="${report.checks.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds(total)}">
  <testsuite name="${attr(classname)}" tests="${report.checks.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds(total)}" timestamp="${attr(report.startedAt)}">
    <properties>
${properties}
    </properties>
${cases.join('\n')}
  </testsuite>
</testsuites>
`;
}

/** A standalone HTML page: one section per check with its verdict, what the protocol requires, and the messages. */
export function conformanceHtml(report: ConformanceReport): string {
  const badge = (status: CheckResult['status']) => `<span class="badge ${status}">${status === 'pass' ? 'PASS' : status === 'fail' ? 'FAIL' : 'SKIPPED'}</span>`;
  const rows = report.checks
    .map(
      (c) => `<section class="check ${c.status}" id="${c.id}">
  <h2>${badge(c.status)} ${escapeHtml(c.title)} <small>${escapeHtml(c.id)} · ${c.durationMs} ms</small></h2>
  <p class="detail">${escapeHtml(c.detail)}</p>
  <p class="requires"><b>The protocol requires:</b> ${escapeHtml(c.requires)}</p>
  ${c.evidence.length ? `<details${c.status === 'fail' ? ' open' : ''}><summary>${c.evidence.length} messages (sent and received)</summary><pre>${escapeHtml(evidenceText(c))}</pre></details>` : ''}
</section>`,
    )
    .join('\n');
  const counts = (['pass', 'fail', 'skipped'] as const).map((s) => `${report.checks.filter((c) => c.status === s).length} ${s === 'pass' ? 'passed' : s === 'fail' ? 'failed' : 'skipped'}`).join(', ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>icabench conformance: ${escapeHtml(report.unit?.name ?? 'no unit')}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#1d2330}
.badge{display:inline-block;padding:1px 8px;border-radius:4px;font-size:12px;color:#fff;vertical-align:middle}
.badge.pass{background:#1f7a3a}.badge.fail{background:#b3261e}.badge.skipped{background:#777}
section.check{border:1px solid #d6dae3;border-left:5px solid #777;border-radius:6px;padding:.4em 1em;margin:1em 0}
section.check.pass{border-left-color:#1f7a3a}section.check.fail{border-left-color:#b3261e}
h2{font-size:16px;margin:.4em 0}h2 small{color:#667;font-weight:normal}
pre{background:#f5f6f8;padding:.6em;overflow-x:auto;font-size:12px;white-space:pre-wrap;word-break:break-all}
.requires{color:#445}
</style></head>
<body>
<h1>Conformance: ${escapeHtml(report.unit ? `${report.unit.name} ${report.unit.version}` : 'no unit dialled in')} — ${report.passed ? 'PASSED' : 'FAILED'}</h1>
<p>${escapeHtml(report.protocol)} · bench ${escapeHtml(report.bridgeUrl)}${report.unit ? ` · unit at ${escapeHtml(report.unit.address)}` : ''} · started ${escapeHtml(report.startedAt)} · turn timeout ${report.limits.turnTimeoutMs} ms · ${counts}</p>
<p>Declared capabilities: <code>${escapeHtml(JSON.stringify(report.declared))}</code></p>
${rows}
</body></html>
`;
}

/** Writes conformance.json, junit.xml and report.html into `outDir`; returns their paths. */
export function writeConformanceReport(report: ConformanceReport, outDir: string): { json: string; junit: string; html: string } {
  mkdirSync(outDir, { recursive: true });
  const paths = { json: join(outDir, 'conformance.json'), junit: join(outDir, 'junit.xml'), html: join(outDir, 'report.html') };
  writeFileSync(paths.json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(paths.junit, conformanceJunit(report));
  writeFileSync(paths.html, conformanceHtml(report));
  return paths;
}
