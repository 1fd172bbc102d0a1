import { z } from 'zod';
import type { ResultStore } from '../store/store.ts';
import type { RunRecord } from '../store/types.ts';
import { unitBuildOf } from '../run/run-facts.ts';
import { INJECTED_FAULTS_EXPECTED, INJECTED_FAULTS_MEANING } from '../domain/injected-faults.ts';
import { escapeHtml as h } from './escape.ts';
import { runTiers } from './summary-header.ts';

/**
 * The first screen of every kind's report.html (#35 item 1), and the last line `icabench run` prints: what was tested
 * (unit and build, kind, method, judges, faults injected on purpose and what that means), the verdict in plain words,
 * and the three most important findings, each with its evidence one click away (an anchor in the report below).
 * Every fact in it is read from the store: the run's record and config, its run facts and its stored items.
 */

/** Faults the unit was made to commit on purpose: which, and what that means for the figures. */
export const InjectedFaultsSchema = z.object({
  /** e.g. "all 8 fault profiles of the reference unit at rate 0.5 (over_refusal 0.08)" */
  what: z.string().min(1),
  /** the same in a few words for the command line: "rate 0.5" */
  short: z.string().min(1),
});
export type InjectedFaults = z.infer<typeof InjectedFaultsSchema>;

export const FirstScreenSchema = z.object({
  tested: z.object({
    /** the unit (or agent) under test, as it introduced itself or as the config names it */
    unit: z.string().min(1),
    /** its build (announced in hello or given with --unit-build); null: none recorded */
    build: z.string().nullable(),
    /** the campaign kind and what it ran: "dialogue: 60 conversations, guided" */
    kind: z.string().min(1),
    /** the method preset statement */
    method: z.string().min(1),
    /** the judges in precedence order (and the simulator, where one plays the user) */
    judges: z.string().min(1),
    faults: InjectedFaultsSchema.nullable(),
  }),
  verdict: z.object({
    tone: z.enum(['pass', 'fail', 'inconclusive', 'error']),
    /** the verdict in a few words: "52 of 60 conversations failed (86.7 %)" */
    headline: z.string().min(1),
    /** the verdict in plain words, one or two sentences, the headline first */
    text: z.string().min(1),
  }),
  /** what qualifies every figure, said before the verdict (a replay of reference answers, not a unit under test); null: nothing */
  caveat: z.string().nullable(),
  /** at most three, most important first */
  findings: z
    .array(
      z.object({
        title: z.string().min(1),
        /** how often, and how grave */
        detail: z.string(),
        /** the finding in a few words for the command line: "safety violation in 25 conversations" */
        short: z.string().min(1),
        /** one example's evidence, quoted */
        quote: z.string(),
        /** the anchor (without #) of the evidence in the report below, and what it is */
        anchor: z.string().min(1),
        anchorLabel: z.string().min(1),
        /** the key of the item (conversation, question, trial) that holds the evidence, for the app's item page; null: none linked */
        item: z.string().nullable(),
      }),
    )
    .max(3),
  /** said when there are no findings: why (nothing failed, or nothing could be decided) */
  noFindings: z.string(),
});
export type FirstScreen = z.infer<typeof FirstScreenSchema>;
export type TopFinding = FirstScreen['findings'][number];

/**
 * Items (conversations, questions) beyond this many are listed in report.html without their drill-down, to keep the file
 * small; a first screen's evidence is one with a drill-down, so the report and the app's run page link the same one.
 */
export const DRILL_DOWN_LIMIT = 200;

/** An element id for an item's key (conversation, question, task): the anchors the first screen links to. */
export function anchorOf(prefix: string, key: string): string {
  return `${prefix}-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** The anchor of a conversation in report.html (its drill-down's id). */
export const conversationAnchor = (key: string) => anchorOf('conv', key);

/** What every kind's first screen says about the unit, its build and the judges, from the run facts. */
export function testedFromFacts(store: ResultStore, record: RunRecord): { unit: string | null; build: string | null; judges: string | null } {
  const fact = unitBuildOf(store, record.id);
  const tiers = runTiers(store, record.id).at(-1);
  const judges = tiers ? `${tiers.judges.map((j) => j.ref).join(' → ')} (simulator: ${tiers.simulator.ref})` : null;
  return { unit: fact?.unit ? [fact.unit, fact.version].filter(Boolean).join(' ') : null, build: fact?.build ?? null, judges };
}

const clip = (text: string, max = 240) => (text.length > max ? `${text.slice(0, max)}…` : text);

export const FIRST_SCREEN_CSS = `
.first{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.3fr);gap:16px;margin-bottom:8px}
.first .verdict{grid-column:1/-1;font-size:17px;padding:12px 16px;border-radius:10px;border:1px solid var(--line);background:var(--card);border-left:6px solid var(--muted)}
.first .verdict.t-fail{border-left-color:var(--fail)}.first .verdict.t-pass{border-left-color:var(--pass)}.first .verdict.t-inconclusive{border-left-color:var(--warn)}.first .verdict.t-error{border-left-color:var(--err)}
.first table.kv th{width:110px;white-space:nowrap}.first table.kv td{word-break:break-word}
.first ol{margin:0;padding-left:20px}.first li{margin:0 0 10px}.first blockquote{margin:4px 0;padding:4px 8px;border-left:3px solid var(--line);color:var(--muted);font-size:13px}
@media (max-width:900px){.first{grid-template-columns:1fr}}
`;

/** The first screen as HTML: the verdict, what was tested, the top findings with links to their evidence. */
export function firstScreenHtml(screen: FirstScreen): string {
  const s = FirstScreenSchema.parse(screen);
  const t = s.tested;
  const row = (key: string, value: string) => `<tr><th>${h(key)}</th><td>${value}</td></tr>`;
  const faults = t.faults ? `<b>${h(t.faults.what)}.</b> <span class="muted">${h(INJECTED_FAULTS_MEANING)}</span>` : 'none injected';
  const tested = `<table class="kv"><tbody>${row('unit', h(t.unit))}${row('build', t.build ? `<code>${h(t.build)}</code>` : '<span class="muted">none recorded (a unit announces it in hello; --unit-build records one)</span>')}${row('kind', h(t.kind))}${row('method', h(t.method))}${row('judges', h(t.judges))}${row('faults', faults)}</tbody></table>`;
  const findings = s.findings.length
    ? `<ol>${s.findings.map((f) => `<li><b>${h(f.title)}</b> ${h(f.detail)}${f.quote ? `<blockquote>${h(clip(f.quote))}</blockquote>` : ''}<a href="#${h(f.anchor)}">evidence: ${h(f.anchorLabel)} →</a></li>`).join('')}</ol>`
    : `<p class="muted">${h(s.noFindings)}</p>`;
  return `<section class="first" id="first-screen" data-testid="first-screen">
${s.caveat ? `<div class="verdict t-inconclusive" data-testid="caveat"><b>Read this first:</b> ${h(s.caveat)}</div>
` : ''}<div class="verdict t-${s.verdict.tone}" data-testid="verdict"><b>Verdict:</b> ${h(s.verdict.text)}${t.faults && s.verdict.tone !== 'pass' ? ` <b>Expected here:</b> ${h(INJECTED_FAULTS_EXPECTED)}` : ''}</div>
<div class="panel" data-testid="tested"><h3>What was tested</h3>${tested}</div>
<div class="panel" data-testid="top-findings"><h3>Top findings</h3>${findings}</div>
</section>`;
}

/** The first screen in one line, the last line `icabench run` prints: the verdict, the unit and whether its faults were on purpose, the top findings. */
export function firstScreenLine(screen: FirstScreen): string {
  const s = FirstScreenSchema.parse(screen);
  const faults = s.tested.faults ? `, whose faults were injected on purpose (${s.tested.faults.short}): the failures are the expected demonstration, not a verdict on a real unit` : '';
  const top = s.findings.length ? ` Top findings: ${s.findings.map((f) => f.short).join('; ')}.` : ` ${s.noFindings}`;
  return `${s.caveat ? `${s.caveat} ` : ''}Verdict: ${s.verdict.headline} on ${s.tested.unit}${faults}.${top} The report's first screen says more.`;
}
