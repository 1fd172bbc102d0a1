import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INJECTED_FAULTS_MEANING } from '../../../src/domain/injected-faults.ts';
import { runCli } from '../../helpers/cli.ts';
import { dataPath } from '../../helpers/repoData.ts';

/**
 * #35 item 1 for manual-QA: report.html opens on what was tested (unit, build, kind, method, judges, the manual faults
 * injected on purpose and what they mean), the verdict in plain words and the three gravest findings, each linking to
 * the question that shows it; `icabench run` ends with the same line; `icabench report` rebuilds the same screen from
 * the store alone.
 */
const dir = mkdtempSync(join(tmpdir(), 'manual-first-screen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const section = (html: string, testid: string) => new RegExp(`data-testid="${testid}">([\\s\\S]*?)</div>`).exec(html)?.[1] ?? '';
const firstScreen = (html: string) => /<section class="first"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();

const chapters = readdirSync(dataPath('bmw-manual/xml'))
  .filter((f) => f.endsWith('.xml'))
  .sort()
  .slice(0, 6)
  .map((f) => dataPath(`bmw-manual/xml/${f}`));

describe('the manual-QA report explains itself', () => {
  it('first screen from the store: unit, faults, plain verdict, gravest findings linked to their questions; the CLI ends with the same', { timeout: 180_000 }, async () => {
    const config = join(dir, 'manual.yaml');
    writeFileSync(
      config,
      `kind: manual-qa\nname: manual-first\nmanual: [${chapters.map((c) => JSON.stringify(c)).join(', ')}]\nlimit: 40\nheadUnit:\n  type: reference\nmanualFaults:\n  profiles: all\n  rate: 0.5\n  rates: { hedge: 0.2 }\njudges: [oracle]\nomissionSearch:\n  budget: 10\n`,
    );
    const ran = await runCli(['run', config, '--out', join(dir, 'out'), '--workspace', join(dir, 'ws'), '--no-progress']);
    expect(ran.code, ran.stderr).toBe(0);
    const html = readFileSync(join(dir, 'out', 'report.html'), 'utf8');
    const summary = JSON.parse(readFileSync(join(dir, 'out', 'summary.json'), 'utf8'));

    const main = /<main>([\s\S]*)<\/main>/.exec(html)![1];
    expect(main.trimStart().startsWith('<section class="first" id="first-screen" data-testid="first-screen">')).toBe(true);
    const screen = firstScreen(html);

    const tested = text(section(screen, 'tested'));
    expect(tested).toContain('unit icabench-reference');
    expect(tested).toContain(`kind manual-qa: ${summary.questions} of ${summary.planned} questions asked over 6 manual files; retrieval bm25 (`);
    expect(tested).toContain(`method ${summary.preset.statement}`);
    expect(tested).toContain('judges oracle faults');
    expect(tested).toContain(
      "faults the manual fault profiles omit_warning, drop_step, swap_steps, invent_step, hedge, not_in_manual of the reference head unit's manual skill, each firing at rate 0.5 (hedge 0.2) where it can change the answer.",
    );
    expect(tested).toContain(INJECTED_FAULTS_MEANING);

    const { pass, fail } = summary.outcomes;
    expect(fail).toBeGreaterThan(0);
    const pct = ((fail / summary.questions) * 100).toFixed(1);
    const verdict = text(section(screen, 'verdict'));
    expect(verdict).toMatch(new RegExp(`^Verdict: ${fail} of ${summary.questions} answers failed \\(${pct} %\\); ${pass} passed`));
    expect(verdict).toContain('An answer fails when a metric of oracle falls below 1');
    expect(verdict).toContain(`The warning-omission search asked ${summary.omissionSearch.asked} more phrasings; ${summary.omissionSearch.omissions} left a required warning out.`);
    expect(verdict).toContain("Expected here: the unit's faults are injected on purpose");

    // three findings, gravest first, each linking to a question whose drill-down shows that metric below 1
    const findings = [...section(screen, 'top-findings').matchAll(/<li><b>([^<]+)<\/b> \((\w+), (\w+)\) in (\d+) of (\d+) answers[\s\S]*?<blockquote>([^<]*)<\/blockquote><a href="#([^"]+)">evidence: question ([^<]+) →<\/a><\/li>/g)];
    expect(findings).toHaveLength(3);
    const severities = findings.map((f) => ['critical', 'major', 'minor'].indexOf(f[2]));
    expect([...severities].sort()).toEqual(severities);
    const tier = summary.judgeMetrics[0];
    for (const [, title, , metric, count, answers, quote, anchor, key] of findings) {
      expect(Number(answers), title).toBe(summary.questions);
      expect(Number(count), title).toBe(tier.metrics[metric].flagged);
      expect(quote.startsWith(key)).toBe(true);
      const drill = new RegExp(`<details class="conv q" id="${anchor}"[\\s\\S]*?</details>`).exec(html)?.[0];
      expect(drill, anchor).toBeDefined();
      expect(drill).toContain(`<b>${key}</b>`);
      expect(drill).toMatch(/<td class="n err"/);
    }
    expect(findings[0][1]).toBe('safety warning left out');

    const last = ran.stdout.trim().split('\n').at(-1)!;
    expect(last).toBe(
      `Verdict: ${fail} of ${summary.questions} answers failed (${pct} %) on ${/unit (icabench-reference[^ ]* [^ ]+)/.exec(tested)![1]}, whose faults were injected on purpose (6 manual profiles at rate 0.5, 1 of them at other rates): the failures are the expected demonstration, not a verdict on a real unit. Top findings: ${findings.map((f) => `${f[1]} in ${f[4]} answers`).join('; ')}. The report's first screen says more.`,
    );

    const rebuilt = await runCli(['report', summary.run.id, '--workspace', join(dir, 'ws'), '--out', join(dir, 'again')]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(firstScreen(readFileSync(join(dir, 'again', 'report.html'), 'utf8'))).toBe(screen);
  });
});
