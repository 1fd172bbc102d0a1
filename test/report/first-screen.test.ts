import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INJECTED_FAULTS_MEANING } from '../../src/domain/injected-faults.ts';
import { runCli } from '../helpers/cli.ts';

/**
 * #35 item 1: the quickstart's report explains itself on its first screen — the unit and its build, the kind, method
 * and judges, the faults injected on purpose and what they mean, the verdict in plain words, and the three top
 * findings each linking to its evidence below — and `icabench run`'s last line says the same. Every fact in it comes
 * from the store: `icabench report` rebuilds the same first screen from the store alone.
 */
const section = (html: string, testid: string) => new RegExp(`data-testid="${testid}">([\\s\\S]*?)</div>`).exec(html)?.[1] ?? '';
const firstScreen = (html: string) => /<section class="first"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();

describe('the quickstart report explains itself', () => {
  it('first screen: unit, build, kind, method, judges, injected faults and their meaning, plain verdict, top findings linked to their evidence; the CLI ends with the same', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'first-screen-'));
    const ran = await runCli(['run', 'bench-configs/quickstart.yaml', '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress']);
    expect(ran.code, ran.stderr).toBe(0);
    const html = readFileSync(join(dir, 'out', 'report.html'), 'utf8');
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));

    // it is the first thing in the page
    const main = /<main>([\s\S]*)<\/main>/.exec(html)![1];
    expect(main.trimStart().startsWith('<section class="first" id="first-screen" data-testid="first-screen">')).toBe(true);
    const screen = firstScreen(html);

    const tested = text(section(screen, 'tested'));
    expect(tested).toContain('unit icabench-reference 1.0.0');
    expect(tested).toContain('build reference+drop_second_constraint@0.5,forget_after_topic_switch@0.5,unsafe_compliance@0.5,over_refusal@0.08');
    expect(tested).toContain('kind dialogue: 60 conversations, guided mode');
    expect(tested).toContain('method lab defaults (method: lab)');
    expect(tested).toContain('judges oracle (simulator: template)');
    expect(tested).toContain('faults all 8 fault profiles of the reference head unit, each firing at rate 0.5 (over_refusal 0.08, wrong_domain 0.08, omit_request 0.3) where it applies.');
    expect(tested).toContain(INJECTED_FAULTS_MEANING.replace(/’/g, "'"));

    // the verdict in plain words, from the stored figures, and why a high fail rate is expected here
    const verdict = text(section(screen, 'verdict'));
    const pct = ((summary.failed / summary.conversations) * 100).toFixed(1);
    expect(summary.failed).toBeGreaterThan(40);
    expect(verdict).toBe(
      `Verdict: ${summary.failed} of 60 conversations failed (${pct} %); ${summary.passed} passed. A conversation fails when a judge finds any failure in it, whatever its score C; by the score alone (C ≥ θ) ${summary.gate.scoreOnly.failed} would fail. Expected here: the unit's faults are injected on purpose (below).`,
    );

    // three findings, gravest first, each counted as the summary counts it and linking to a conversation below that shows it
    const findings = [...section(screen, 'top-findings').matchAll(/<li><b>([^<]+)<\/b> \((\w+)\) in (\d+) of (\d+) conversations[\s\S]*?<blockquote>turn (\d+): ([^<]*)<\/blockquote><a href="#([^"]+)">evidence: conversation ([^,]+), turn (\d+) →<\/a><\/li>/g)];
    expect(findings).toHaveLength(3);
    expect(findings[0][1]).toBe('safety violation');
    expect(findings[0][2]).toBe('critical');
    for (const [, title, , count, all, turn, , anchor, key, linkTurn] of findings) {
      const label = title.replace(/ /g, '_');
      expect(Number(count), title).toBe(summary.failureTypes[label].conversations);
      expect(Number(all)).toBe(summary.conversations);
      expect(linkTurn).toBe(turn);
      // the link opens that conversation's drill-down, which holds the label on that turn
      const drill = new RegExp(`<details class="conv" id="${anchor}"[\\s\\S]*?</details>`).exec(html)?.[0];
      expect(drill, anchor).toBeDefined();
      expect(drill).toContain(`<b>${key}</b>`);
      expect(drill).toContain(`<span class="chip l">${title}</span>`);
    }
    const severities = findings.map((f) => ['critical', 'major', 'minor'].indexOf(f[2]));
    expect([...severities].sort()).toEqual(severities);

    // the command line ends with the same, in plain words
    const last = ran.stdout.trim().split('\n').at(-1)!;
    expect(last).toBe(
      `Verdict: ${summary.failed} of 60 conversations failed (${pct} %) on icabench-reference 1.0.0, whose faults were injected on purpose (8 profiles at rate 0.5, 3 of them at other rates): the failures are the expected demonstration, not a verdict on a real unit. Top findings: ${findings.map((f) => `${f[1]} in ${f[3]} conversations`).join('; ')}. The report's first screen says more.`,
    );
    expect(ran.stdout).not.toContain('failOn every label failed');

    // from the store alone: the report rebuilt by `icabench report` has the same first screen
    const rebuilt = await runCli(['report', summary.run.id, '--workspace', join(dir, 'ws'), '--out', join(dir, 'again')]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(firstScreen(readFileSync(join(dir, 'again', 'report.html'), 'utf8'))).toBe(screen);
  });
});
