import { readFileSync } from 'node:fs';
import { observationLines } from '../domain/bus-observation.ts';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ConversationResult, TurnRecord } from '../domain/conversation.ts';
import { DIMENSIONS, DIMENSION_TITLES, FAILURE_LABELS, STRATEGIES, STRATEGY_TARGET_FAILURE, type FailureLabel } from '../domain/taxonomy.ts';
import type { RunComparison, SampleTest } from '../analysis/compare.ts';
import { POSITION_BINS, type RunInfo, type RunSummary } from '../analysis/profile.ts';
import { combinedVerdict, turnLabels, type CombinedVerdict } from '../analysis/verdict.ts';
import { decidingConversationVerdict, decidingTurnVerdict } from '../judge/precedence.ts';
import { describeConversationProtocol, type ConversationProtocol } from '../analysis/protocol.ts';
import { escapeHtml as h, jsonForScript } from './escape.ts';
import { coverageSectionHtml } from './coverage-section.ts';
import { reliabilityComparisonHtml, reliabilityTableHtml } from './reliability-section.ts';
import { conversationAnchor, DRILL_DOWN_LIMIT, FIRST_SCREEN_CSS, firstScreenHtml, type FirstScreen } from './first-screen.ts';
import { RowSpool } from './spool.ts';

/** A section another area adds to a report (vehicle context, voice path, LLM tiers); `html` is trusted markup. */
export interface ReportSection {
  title: string;
  html: string;
}

/**
 * Builds something from a run's conversations fed one at a time, so several sections share one
 * pass over the store (src/cli/outputs.ts).
 */
export interface ConversationCollector<T> {
  /** `combined`: the conversation's combinedVerdict, computed once by the pass for every collector (computed here when not given) */
  add(result: ConversationResult, combined?: CombinedVerdict): void;
  /** the result; null when the run has nothing for it */
  finish(): T | null;
}

/** Feeds every conversation to a collector and returns what it built. */
export function collect<T>(collector: ConversationCollector<T>, conversations: Iterable<ConversationResult>): T | null {
  for (const result of conversations) collector.add(result, combinedVerdict(result));
  return collector.finish();
}

let chartJsSource: string | null = null;
/** Chart.js is inlined from node_modules at report time, so the report opens offline with no external URL. */
export function chartJs(): string {
  if (chartJsSource === null) {
    const entry = createRequire(import.meta.url).resolve('chart.js');
    const file = join(dirname(entry), 'chart.umd.min.js');
    try {
      chartJsSource = readFileSync(file, 'utf8').replace(/<\/(script)/gi, '<\\/$1');
    } catch (error) {
      throw new Error(`report: cannot read Chart.js from ${file} (is the chart.js package installed?): ${(error as Error).message}`);
    }
  }
  return chartJsSource;
}

const pct = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)}%`);
const num = (value: number | null, digits = 2) => (value === null ? '–' : value.toFixed(digits));
const labelTitle = (label: string) => label.replace(/_/g, ' ');

const CSS = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2433;--muted:#5d6778;--line:#e2e6ec;--pass:#1f8a4c;--fail:#c0392b;--warn:#b7791f;--err:#7b3fa0;--accent:#2b6cb0}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
header{background:#1d2433;color:#fff;padding:20px 32px}header h1{margin:0 0 4px;font-size:22px}header .meta{color:#c5cbd6;font-size:13px}
main{max-width:1280px;margin:0 auto;padding:24px 32px 64px}
h2{font-size:18px;margin:32px 0 12px;border-bottom:2px solid var(--line);padding-bottom:6px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px}
.card .v{font-size:26px;font-weight:650}.card .k{color:var(--muted);font-size:13px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:16px}
.panel{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px}
.panel h3{margin:0 0 8px;font-size:15px}.panel p.note{color:var(--muted);font-size:13px;margin:6px 0 0}
.chart{position:relative;height:280px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff}
.b-pass{background:var(--pass)}.b-fail{background:var(--fail)}.b-inconclusive{background:var(--warn)}.b-error{background:var(--err)}
.chip{display:inline-block;background:#eef2f7;border:1px solid #d8dee8;border-radius:6px;padding:0 6px;margin:1px 2px;font-size:12px}
.chip.l{background:#fdecea;border-color:#f5c6c0}
.conv{background:var(--card);border:1px solid var(--line);border-radius:8px;margin:6px 0}
.conv summary,.conv .row{display:grid;grid-template-columns:minmax(160px,2fr) 1.2fr 90px 60px 50px 3fr 1.4fr;gap:8px;padding:8px 12px;align-items:center;cursor:pointer}
.conv .row{cursor:default}.conv summary::marker{content:''}
.conv[open] summary{border-bottom:1px solid var(--line);background:#fafbfc}
.conv .body{padding:8px 12px 12px}.conv .body td{max-width:420px;white-space:pre-wrap;word-break:break-word}
.head{display:grid;grid-template-columns:minmax(160px,2fr) 1.2fr 90px 60px 50px 3fr 1.4fr;gap:8px;padding:4px 12px;color:var(--muted);font-size:12px;font-weight:600}
.toolbar{display:flex;gap:8px;margin:8px 0}.toolbar input,.toolbar select{padding:6px 8px;border:1px solid var(--line);border-radius:6px;font:inherit}
.muted{color:var(--muted)}.err{color:var(--err)}pre{white-space:pre-wrap;background:#f0f2f5;padding:8px;border-radius:6px;font-size:12px}
.sig{font-weight:650;color:var(--fail)}.ns{color:var(--muted)}
del{background:#fde2e2;text-decoration:line-through}ins{background:#dcf5e3;text-decoration:none}
`;

/** Draws every <canvas data-chart="name"> from the embedded data; without Chart.js the tables still carry the numbers. */
const CHART_SCRIPT = `
(function(){
  var D = JSON.parse(document.getElementById('report-data').textContent);
  var C = ['#2b6cb0','#c0392b','#1f8a4c','#b7791f','#7b3fa0','#2c7a7b','#718096','#d53f8c'];
  // a first-screen link to the evidence opens the item it points at (a closed <details> would hide it)
  var openTarget = function(){
    var id = decodeURIComponent(location.hash.slice(1)), el = id && document.getElementById(id);
    if (el && el.tagName === 'DETAILS') { el.open = true; el.scrollIntoView(); }
  };
  window.addEventListener('hashchange', openTarget); openTarget();
  if (typeof Chart === 'undefined') return;
  Chart.defaults.font.family = 'system-ui, sans-serif';
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.animation = false;
  // long category labels break into lines instead of rotating out of the canvas (a rotated label is clipped at the edge)
  var wrap = function(label){
    if (typeof label !== 'string' || label.length <= 12) return label;
    var lines = [], line = '';
    label.split(' ').forEach(function(word){
      if (line && (line + ' ' + word).length > 12) { lines.push(line); line = word; } else line = line ? line + ' ' + word : word;
    });
    if (line) lines.push(line);
    return lines;
  };
  document.querySelectorAll('canvas[data-chart]').forEach(function(canvas){
    var spec = D.charts[canvas.getAttribute('data-chart')];
    if (!spec) return;
    var datasets = spec.series.map(function(s, i){
      return { label: s.label, data: s.data, type: s.type || 'bar', yAxisID: s.axis || 'y', backgroundColor: s.color || C[i % C.length], borderColor: s.color || C[i % C.length], stack: spec.stacked ? 'all' : undefined };
    });
    var scales = { x: { stacked: !!spec.stacked, ticks: { autoSkip: false, maxRotation: 90, font: { size: 11 } } }, y: { beginAtZero: true, stacked: !!spec.stacked, title: { display: !!spec.yTitle, text: spec.yTitle || '' }, max: spec.yMax } };
    if (spec.y2Title) scales.y2 = { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: spec.y2Title }, max: spec.y2Max };
    new Chart(canvas, { type: 'bar', data: { labels: spec.labels.map(wrap), datasets: datasets }, options: { indexAxis: spec.horizontal ? 'y' : 'x', scales: spec.horizontal ? undefined : scales, plugins: { legend: { display: spec.series.length > 1 } } } });
  });
  var filter = document.getElementById('conv-filter'), outcome = document.getElementById('conv-outcome');
  if (filter) {
    var apply = function(){
      var q = filter.value.toLowerCase(), o = outcome.value;
      document.querySelectorAll('.conv').forEach(function(el){
        var show = (!q || el.getAttribute('data-search').indexOf(q) >= 0) && (!o || el.getAttribute('data-outcome') === o);
        el.style.display = show ? '' : 'none';
      });
    };
    filter.addEventListener('input', apply); outcome.addEventListener('change', apply);
  }
})();
`;

interface ChartSpec {
  labels: string[];
  series: { label: string; data: (number | null)[]; type?: 'bar' | 'line'; axis?: 'y' | 'y2'; color?: string }[];
  yTitle?: string;
  yMax?: number;
  y2Title?: string;
  y2Max?: number;
  stacked?: boolean;
  horizontal?: boolean;
}

export function page(title: string, subtitle: string, body: string, data: { charts: Record<string, ChartSpec> }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${h(title)}</title><style>${CSS}${FIRST_SCREEN_CSS}</style></head>
<body><header><h1>${h(title)}</h1><div class="meta">${subtitle}</div></header>
<main>${body}</main>
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
<script>${chartJs()}</script>
<script>${CHART_SCRIPT}</script>
</body></html>
`;
}

const card = (value: string, key: string) => `<div class="card"><div class="v">${value}</div><div class="k">${h(key)}</div></div>`;
const panel = (title: string, chart: string, extra = '', note = '') =>
  `<div class="panel"><h3>${h(title)}</h3><div class="chart"><canvas data-chart="${chart}"></canvas></div>${extra}${note ? `<p class="note">${note}</p>` : ''}</div>`;
const badge = (outcome: string) => `<span class="badge b-${outcome}">${h(outcome)}</span>`;
const chips = (items: readonly string[], cls = '') => items.map((i) => `<span class="chip ${cls}">${h(labelTitle(i))}</span>`).join('');

export function runChartData(summary: RunSummary): Record<string, ChartSpec> {
  const histogram = new Array<number>(10).fill(0);
  for (const c of summary.perConversation) if (c.score !== null) histogram[Math.min(9, Math.floor(c.score * 10))] += 1;
  const judges = Object.entries(summary.judgeTiers.judges);
  const tierRows = [
    ...judges.map(([ref, counts]) => ({ label: `${ref} · conversation`, counts: counts.conversation })),
    ...judges.map(([ref, counts]) => ({ label: `${ref} · turn`, counts: counts.turn })),
  ];
  return {
    failureTypes: {
      labels: FAILURE_LABELS.map(labelTitle),
      series: [
        { label: 'occurrences', data: FAILURE_LABELS.map((l) => summary.failureTypes[l].count) },
        { label: 'prevalence (% of conversations)', data: FAILURE_LABELS.map((l) => summary.failureTypes[l].prevalence * 100), type: 'line', axis: 'y2', color: '#c0392b' },
      ],
      yTitle: 'occurrences',
      y2Title: '% of conversations',
      y2Max: 100,
    },
    strategies: {
      labels: STRATEGIES.map(labelTitle),
      series: [
        { label: 'target failure triggered (% of uses)', data: STRATEGIES.map((s) => (summary.strategies[s].targetTriggered ?? 0) * 100) },
        { label: 'collateral failures (% of uses)', data: STRATEGIES.map((s) => (summary.strategies[s].collateralRate ?? 0) * 100), color: '#b7791f' },
      ],
      yTitle: '% of uses',
      yMax: 100,
    },
    positionRelative: {
      labels: Array.from({ length: POSITION_BINS }, (_, i) => `${(i / POSITION_BINS).toFixed(1)}–${((i + 1) / POSITION_BINS).toFixed(1)}`),
      series: [{ label: 'failures', data: summary.failurePositions.relative.map((v) => Math.round(v * 100) / 100) }],
      yTitle: 'failure labels',
    },
    positionAbsolute: {
      labels: summary.failurePositions.absolute.map((_, i) => `turn ${i + 1}`),
      series: [{ label: 'failures', data: summary.failurePositions.absolute }],
      yTitle: 'failure labels',
    },
    scores: {
      labels: histogram.map((_, i) => `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}`),
      series: [{ label: 'conversations', data: histogram }],
      yTitle: 'conversations',
    },
    dimensions: {
      labels: DIMENSIONS.map((d) => DIMENSION_TITLES[d]),
      series: [{ label: 'mean score (0–2)', data: DIMENSIONS.map((d) => summary.dimensions[d].mean) }],
      yMax: 2,
      yTitle: 'mean (0–2)',
    },
    judgeTiers: {
      labels: tierRows.map((r) => r.label),
      series: [
        { label: 'judged', data: tierRows.map((r) => r.counts.judged), color: '#1f8a4c' },
        { label: 'inconclusive', data: tierRows.map((r) => r.counts.inconclusive), color: '#b7791f' },
        { label: 'judge error', data: tierRows.map((r) => r.counts.judge_error), color: '#7b3fa0' },
      ],
      stacked: true,
      yTitle: 'verdicts',
    },
  };
}

function turnRows(turns: readonly TurnRecord[]): string {
  return turns
    .map((turn) => {
      const deciding = decidingTurnVerdict(turn.verdicts);
      const labels = (deciding?.labels ?? [])
        .map((l) => `<div><span class="chip l">${h(labelTitle(l.label))}</span>${l.targetId ? ` <span class="muted">${h(l.targetId)}</span>` : ''}<div class="muted">${h(l.evidence)}</div></div>`)
        .join('');
      const judges = turn.verdicts.map((v) => (v === deciding ? `<b>${h(v.judge)}: ${h(v.outcome)}</b>` : `${h(v.judge)}: ${h(v.outcome)}`)).join(', ');
      const actions = turn.reply?.actions.map((a) => a.type) ?? [];
      // a scripted turn's expectations (suites), each with whether it held and why
      const expected = (turn.expectations?.checks ?? []).map((c) => `<div class="${c.met ? 'muted' : 'err'}">${c.met ? 'expected' : 'unmet'}: ${h(c.expected)} (${h(c.detail)})</div>`).join('');
      // what the unit was seen doing on the CAN bus (vehicle.observe), frame by frame
      const bus = turn.observed ? `<div class="muted">on the bus: ${observationLines(turn.observed).map(h).join('<br>')}</div>` : '';
      return `<tr><td class="n">${turn.index + 1}</td><td>${turn.utterance.strategy ? chips([turn.utterance.strategy]) : '<span class="muted">–</span>'}</td>
<td>${h(turn.utterance.text)}${turn.voice ? `<div class="muted">heard: ${h(turn.voice.recognizedText ?? '(not reported)')}${turn.voice.snrDb === null ? '' : ` · ${turn.voice.snrDb} dB SNR`}</div>` : ''}</td><td>${turn.reply ? h(turn.reply.text) + (actions.length ? `<div>${chips(actions)}</div>` : '') : '<span class="err">no reply</span>'}${bus}</td>
<td>${labels || '<span class="muted">none</span>'}${expected}</td><td class="muted">${judges}<br>${Math.round(turn.latencyMs)} ms</td></tr>`;
    })
    .join('\n');
}

/** One line saying how a conversation's outcome came about: which judge decided, the gate, the score rule. */
function outcomeReason(combined: CombinedVerdict): string {
  const byScore = combined.scorePass === null ? 'no judge reached a verdict on C' : `C = ${num(combined.score)} by ${combined.judge} ${combined.scorePass ? 'passes' : 'fails'} θ`;
  const gate = combined.gate.length ? `its findings fail it (failOn: ${combined.gate.join(', ')})` : '';
  const review = combined.undecidedTurns.length ? `no judge could decide turn(s) ${combined.undecidedTurns.join(', ')}` : '';
  if (combined.outcome === 'error') return `error: the conversation did not complete; ${byScore}${gate ? `; ${gate}` : ''}.`;
  if (combined.outcome === 'fail' && gate) return `fail: ${gate}, whatever C; ${byScore}.`;
  if (combined.outcome === 'fail' && combined.failedBy.includes('expectation')) return `fail: a scripted turn's expectation did not hold, whatever C; ${byScore}.`;
  if (combined.outcome === 'inconclusive' && review) return `inconclusive, needs review: ${review}; ${byScore}.`;
  return `${combined.outcome}: ${byScore}${review ? `; ${review}` : ''}.`;
}

/** The findings of a conversation as a table: turn, label, severity, judge, evidence. */
function findingsTable(combined: CombinedVerdict): string {
  if (combined.findings.length === 0) return '<p class="muted">no findings</p>';
  const rows = combined.findings
    .map((f) => `<tr><td class="n">${f.turn}</td><td>${h(f.label)}${f.targetId ? ` <span class="muted">[${h(f.targetId)}]</span>` : ''}</td><td>${h(f.severity)}</td><td>${h(f.judge)}</td><td>${h(f.evidence)}</td></tr>`)
    .join('');
  return `<table class="findings"><thead><tr><th class="n">turn</th><th>finding</th><th>severity</th><th>judge</th><th>evidence</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function gateHtml(summary: RunSummary): string {
  const { gate } = summary;
  const rule = gate.failOn.length
    ? `Findings decide: <code>scoring.failOn: [${h(gate.failOn.join(', '))}]</code>: a conversation with any of these labels fails whatever its C. ${gate.failedByGate} conversation(s) failed by their findings, ${gate.failedOnlyByGate} of them would pass (or stay undecided) on C alone. ${summary.conversationsWithFindings} conversation(s) have findings.`
    : `No findings gate (<code>scoring.failOn: []</code>): the verdict is C ≥ θ alone, as in the paper; ${summary.conversationsWithFindings} conversation(s) have findings all the same.`;
  const s = gate.scoreOnly;
  const preset = summary.preset ? `<p><b>Method:</b> ${h(summary.preset.statement)}.</p>` : '';
  return `${preset}<p>${rule}</p><table><thead><tr><th></th><th class="n">passed</th><th class="n">failed</th><th class="n">inconclusive</th><th class="n">fail rate</th></tr></thead><tbody>
<tr><td>verdict (findings and C)</td><td class="n">${summary.passed}</td><td class="n">${summary.failed}</td><td class="n">${summary.inconclusive}</td><td class="n">${pct(summary.failRate)}</td></tr>
<tr><td>C ≥ θ alone (paper)</td><td class="n">${s.passed}</td><td class="n">${s.failed}</td><td class="n">${s.inconclusive}</td><td class="n">${pct(s.failRate)}</td></tr></tbody></table>`;
}

/** What each invocation ran with (run facts): judges in precedence order, prompt versions, and any fallback taken. */
function tiersHtml(summary: RunSummary): string {
  if (!summary.tiers?.length) return '';
  const fallbacks = summary.tiers.flatMap((t) => t.fallbacks);
  const warning = fallbacks
    .map((f) => `<p class="err"><b>Fallback:</b> the ${h(f.role)} ${h(f.requested)} was not available (${h(f.reason)}); the ${h(f.replacedBy)} tier ran instead, as the config's <code>fallback</code> asks.${f.fix ? ` Fix: <code>${h(f.fix)}</code>` : ''}</p>`)
    .join('');
  const tier = (t: { ref: string; kind: string; prompts: readonly { id: string; sha256: string }[] }) =>
    `${h(t.ref)} <span class="muted">(${h(t.kind)}${t.prompts.length ? `; prompts ${t.prompts.map((p) => `${h(p.id)} ${h(p.sha256)}`).join(', ')}` : ''})</span>`;
  const rows = summary.tiers
    .map((t, i) => `<tr><td class="n">${i + 1}</td><td>${tier(t.simulator)}</td><td>${t.judges.map(tier).join('<br>')}</td><td>${t.fallbacks.length ? t.fallbacks.map((f) => `${h(f.requested)} → ${h(f.replacedBy)}`).join('<br>') : '–'}</td></tr>`)
    .join('');
  return `<h2>Simulator and judges</h2><div class="panel">${warning}<table><thead><tr><th class="n">invocation</th><th>simulator</th><th>judges (precedence order)</th><th>fallbacks</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** Where the spooled conversation list goes in the page. */
const CONVERSATION_LIST = '\u0000conversation list\u0000';

/** The HTML report of one run: summary cards, charts of the analysis, conversation list with drill-down. */
export class RunHtmlWriter {
  /** the conversation list, one item per conversation, spooled beside the file as the run is read */
  private readonly items: RowSpool;

  constructor(
    /** the report.html to write */
    path: string,
    private readonly drillDownLimit = DRILL_DOWN_LIMIT,
    /** the conversation's protocol anomalies (src/analysis/protocol.ts), for the protocol column; default: what the result stored */
    private readonly protocolOf?: (result: ConversationResult) => ConversationProtocol | null,
  ) {
    this.items = new RowSpool(path);
  }

  private get count(): number {
    return this.items.count;
  }

  /** items are separated by a line break, as the list always was */
  private addItem(item: string): void {
    this.items.add(this.count === 0 ? item : `\n${item}`);
  }

  add(result: ConversationResult, combined = combinedVerdict(result)): void {
    const found = new Set(result.turns.flatMap((t) => turnLabels(t).map((l) => l.label)));
    const labels = FAILURE_LABELS.filter((l: FailureLabel) => found.has(l));
    const search = `${result.spec.key} ${result.spec.seed.id} ${result.spec.persona} ${labels.join(' ')}`.toLowerCase();
    const cells = `<span><b>${h(result.spec.key)}</b></span><span class="muted">${h(result.spec.seed.id)} · ${h(result.spec.persona)}</span>
<span>${badge(combined.outcome)}${combined.gate.length ? ' <span class="chip l" title="failed by its findings (scoring.failOn)">findings</span>' : ''}${combined.outcome === 'inconclusive' && combined.undecidedTurns.length ? ' <span class="chip" title="a turn no judge could decide">needs review</span>' : ''}</span><span class="n">${num(combined.score)}</span><span class="n">${result.turns.length}</span><span>${chips(labels, 'l')}</span><span class="muted" data-col="protocol">${h(this.protocolCell(result))}</span>`;
    const attrs = `class="conv" id="${h(conversationAnchor(result.spec.key))}" data-outcome="${combined.outcome}" data-search="${h(search)}"`;
    if (this.count >= this.drillDownLimit) {
      this.addItem(`<div ${attrs}><div class="row">${cells}</div></div>`);
      return;
    }
    const deciding = decidingConversationVerdict(result.verdicts);
    const verdicts = result.verdicts
      .map((v) => {
        const dims = DIMENSIONS.flatMap((d) => (v.dimensions[d] ? [`${d} ${v.dimensions[d]!.score}/2`] : [])).join(', ');
        return `<div><b>${h(v.judge)}</b> <span class="muted">(${h(v.tier)}${v === deciding ? ', decides' : ''})</span>: ${h(v.outcome)}, C = ${num(v.score)}, ${v.pass === null ? 'no pass flag' : v.pass ? 'C ≥ θ' : 'C < θ'}${dims ? ` (${h(dims)})` : ''}${v.reasoning ? ` <span class="muted">— ${h(v.reasoning)}</span>` : ''}</div>`;
      })
      .join('');
    const error = result.error ? `<p class="err">${h(result.status)}: ${h(result.error)}</p>` : '';
    this.addItem(`<details ${attrs}><summary>${cells}</summary><div class="body">${error}<p>${h(outcomeReason(combined))}</p>${findingsTable(combined)}${verdicts || '<p class="muted">no conversation verdict</p>'}
<table><thead><tr><th class="n">#</th><th>strategy</th><th>user</th><th>assistant</th><th>failure labels</th><th>judges · latency</th></tr></thead>
<tbody>${turnRows(result.turns)}</tbody></table></div></details>`);
  }

  private protocolCell(result: ConversationResult): string {
    const row = this.protocolOf ? this.protocolOf(result) : result.protocol ? { key: result.spec.key, ...result.protocol, lateReplies: [], beforeHello: 0 } : null;
    if (!row) return '';
    return describeConversationProtocol(row) || '–';
  }

  /** Writes the file: `firstScreen` (what was tested, the verdict and the top findings: src/report/first-screen.ts) first, the conversations spooled so far last. */
  write(run: RunInfo, summary: RunSummary, extraSections: readonly ReportSection[] = [], firstScreen?: FirstScreen): void {
    const errors = summary.errors.sut_error + summary.errors.simulator_error + summary.errors.judge_error;
    const judges = Object.entries(summary.judgeTiers.judges);
    const cards = [
      card(String(summary.conversations), 'conversations'),
      card(pct(summary.failRate), `fail rate (${summary.failed} of ${summary.passed + summary.failed} decided)`),
      card(String(summary.conversationsWithFindings), `conversations with findings (${pct(summary.findingsRate)} of completed)`),
      card(pct(summary.gate.scoreOnly.failRate), 'fail rate by C alone (the paper’s verdict)'),
      card(String(summary.gate.failedByGate), `failed by findings (failOn: ${summary.gate.failOn.join(', ') || 'none'})`),
      card(num(summary.meanScore), 'mean score C'),
      card(num(summary.uniqueFailureTypesPerConversation), 'unique failure types / conversation'),
      card(String(summary.inconclusive), 'inconclusive (needs review)'),
      card(String(errors), `errors (SUT ${summary.errors.sut_error}, simulator ${summary.errors.simulator_error}, judge ${summary.errors.judge_error})`),
      card(num(summary.meanTurns, 1), 'mean turns'),
    ].join('');
    const failureTable = `<table><thead><tr><th>failure type</th><th class="n">count</th><th class="n">share</th><th class="n">prevalence</th></tr></thead><tbody>${FAILURE_LABELS.map(
      (l) => `<tr><td>${h(labelTitle(l))}</td><td class="n">${summary.failureTypes[l].count}</td><td class="n">${pct(summary.failureTypes[l].share)}</td><td class="n">${pct(summary.failureTypes[l].prevalence)}</td></tr>`,
    ).join('')}</tbody></table>`;
    const strategyTable = `<table><thead><tr><th>strategy</th><th>target failure</th><th class="n">uses</th><th class="n">triggered</th><th class="n">collateral</th></tr></thead><tbody>${STRATEGIES.map(
      (s) => `<tr><td>${h(labelTitle(s))}</td><td>${h(labelTitle(STRATEGY_TARGET_FAILURE[s]))}</td><td class="n">${summary.strategies[s].uses}</td><td class="n">${pct(summary.strategies[s].targetTriggered)}</td><td class="n">${pct(summary.strategies[s].collateralRate)}</td></tr>`,
    ).join('')}</tbody></table>`;
    const extensions = (['vehicle', 'voice', 'llm'] as const)
      .filter((k) => summary[k] && !extraSections.some((s) => s.title.toLowerCase() === k))
      .map((k) => ({ title: k, html: `<pre>${h(JSON.stringify(summary[k], null, 2))}</pre>` }));
    const more = [...extraSections, ...extensions].map((s) => `<h2>${h(s.title)}</h2><div class="panel">${s.html}</div>`).join('\n');
    const capped = this.count > this.drillDownLimit
      ? `<p class="muted">Turn-by-turn detail is included for the first ${this.drillDownLimit} of ${this.count} conversations; conversations.csv and the JSONL export hold all of them.</p>`
      : '';
    const body = `${firstScreen ? firstScreenHtml(firstScreen) : ''}
<h2>In figures</h2>
<div class="cards">${cards}</div>
<h2>Failures</h2>
<div class="grid">
${panel('Failure-type profile', 'failureTypes', failureTable, 'Share: of all failure labels. Prevalence: share of conversations with at least one.')}
${panel('Strategies: target failure and collateral', 'strategies', strategyTable, 'Triggered: uses whose turn got the strategy’s target failure. Collateral: uses whose turn got any other label.')}
${panel('Where failures occur (relative position)', 'positionRelative', '', '0 is the start of the conversation, 1 its end; turn k of n spans k/n to (k+1)/n and its failures are spread over the bins it covers, so conversations of any length compare.')}
${panel('Where failures occur (turn)', 'positionAbsolute')}
</div>
<h2>Scores and judges</h2>
<div class="grid">
${panel('Conversation score C', 'scores', '', 'Score of the deciding verdict: the first judge, in the order of <code>judges:</code>, whose verdict is decisive.')}
${panel('Rubric dimensions', 'dimensions')}
${panel('Judges', 'judgeTiers', '', `Decided by: ${judges.map(([ref, c]) => `${h(ref)} ${c.decided}`).join(', ') || 'none'} (precedence: ${judges.map(([ref]) => h(ref)).join(' → ') || '–'}). Inconclusive verdicts are reported, never counted as pass or fail.`)}
<div class="panel"><h3>Verdict rule</h3>${gateHtml(summary)}</div>
</div>
${tiersHtml(summary)}
${summary.coverage || summary.safety ? `<h2>Coverage and safety policy</h2>
<div class="panel">${coverageSectionHtml(summary)}</div>` : ''}
${summary.reliability ? `<h2>Reliability over repeats (pass^k / pass@k)</h2>
<div class="panel">${reliabilityTableHtml(summary.reliability)}</div>` : ''}
${more}
<h2 id="conversations">Conversations</h2>
<p class="muted">Click a conversation to open its turns: what the simulator said and with which strategy, the head unit's reply, and the failure labels with their evidence.</p>
${capped}
<div class="toolbar"><input id="conv-filter" placeholder="filter by key, seed, persona, failure…" size="40">
<select id="conv-outcome"><option value="">all outcomes</option><option>pass</option><option>fail</option><option>inconclusive</option><option>error</option></select></div>
<div class="head"><span>conversation</span><span>seed · persona</span><span>outcome</span><span>C</span><span>turns</span><span>failure types</span><span>protocol</span></div>
${CONVERSATION_LIST}
`;
    const subtitle = `${h(run.name)} · run ${h(run.id)} · ${h(run.mode)} · ${h(run.status)} · started ${h(run.createdAt)}${run.finishedAt ? ` · finished ${h(run.finishedAt)}` : ''}`;
    const html = page(`icabench report: ${run.name}`, subtitle, body, { charts: runChartData(summary) });
    // the last one: after it come only the page's own scripts and the chart data (JSON, which escapes a NUL)
    const at = html.lastIndexOf(CONVERSATION_LIST);
    this.items.writeAround(html.slice(0, at), html.slice(at + CONVERSATION_LIST.length));
  }

  discard(): void {
    this.items.discard();
  }
}

function testRow(title: string, test: SampleTest): string {
  const verdict = test.p === null ? '<span class="ns">not testable (empty sample)</span>' : test.significant ? '<span class="sig">significant</span>' : '<span class="ns">not significant</span>';
  return `<tr><td>${h(title)}</td><td class="n">${test.nA} / ${test.nB}</td><td class="n">${num(test.u, 1)}</td><td class="n">${test.p === null ? '–' : test.p.toPrecision(3)}</td><td>${test.method ?? '–'}</td><td class="n">${num(test.a12, 3)}</td><td>${test.magnitude ?? '–'}</td><td>${verdict}</td></tr>`;
}

/** The HTML report of `icabench compare`: both runs side by side, the tests, and enrichment per failure type. */
export function comparisonHtml(comparison: RunComparison, extraSections: readonly ReportSection[] = []): string {
  const { a, b } = comparison;
  const row = (label: string, va: string, vb: string) => `<tr><td>${h(label)}</td><td class="n">${va}</td><td class="n">${vb}</td></tr>`;
  const overview = `<table><thead><tr><th></th><th class="n">A: ${h(a.name)}</th><th class="n">B: ${h(b.name)}</th></tr></thead><tbody>
${row('conversations', String(a.conversations), String(b.conversations))}
${row('fail rate', pct(a.failRate), pct(b.failRate))}
${row('conversations with findings', `${a.conversationsWithFindings} (${pct(a.findingsRate)})`, `${b.conversationsWithFindings} (${pct(b.findingsRate)})`)}
${row('findings that fail (scoring.failOn)', h(a.failOn.join(', ') || 'none'), h(b.failOn.join(', ') || 'none'))}
${row('failed by findings', String(a.failedByGate), String(b.failedByGate))}
${row('fail rate by C alone (paper)', pct(a.scoreOnlyFailRate), pct(b.scoreOnlyFailRate))}
${row('mean score C', num(a.meanScore), num(b.meanScore))}
${row('unique failure types / conversation', num(a.uniqueFailureTypesPerConversation), num(b.uniqueFailureTypesPerConversation))}
${row('conversations with ≥ 3 failure types', pct(a.threeOrMoreFailureTypes), pct(b.threeOrMoreFailureTypes))}
${row('inconclusive', String(a.inconclusive), String(b.inconclusive))}
${row('errors', String(a.errors), String(b.errors))}
</tbody></table>`;
  const tests = `<table><thead><tr><th>per-conversation measure</th><th class="n">n A / B</th><th class="n">U</th><th class="n">p</th><th>method</th><th class="n">Â12</th><th>effect</th><th>α = ${comparison.alpha}</th></tr></thead><tbody>
${testRow('score C', comparison.scores)}${testRow('unique failure types', comparison.uniqueFailureTypes)}</tbody></table>`;
  const enrichment = `<table><thead><tr><th>failure type</th><th class="n">share A</th><th class="n">share B</th><th class="n">enrichment A/B</th><th class="n">prevalence A</th><th class="n">prevalence B</th></tr></thead><tbody>${FAILURE_LABELS.map((l) => {
    const e = comparison.enrichment[l];
    return `<tr><td>${h(labelTitle(l))}</td><td class="n">${pct(e.shareA)}</td><td class="n">${pct(e.shareB)}</td><td class="n">${e.ratio === null ? (e.countA > 0 ? 'only in A' : '–') : `${e.ratio.toFixed(2)}×`}</td><td class="n">${pct(e.prevalenceA)}</td><td class="n">${pct(e.prevalenceB)}</td></tr>`;
  }).join('')}</tbody></table>`;
  const charts: Record<string, ChartSpec> = {
    enrichment: {
      labels: FAILURE_LABELS.map(labelTitle),
      series: [
        { label: `A: ${a.name}`, data: FAILURE_LABELS.map((l) => comparison.enrichment[l].prevalenceA * 100) },
        { label: `B: ${b.name}`, data: FAILURE_LABELS.map((l) => comparison.enrichment[l].prevalenceB * 100), color: '#718096' },
      ],
      yTitle: '% of conversations',
      yMax: 100,
    },
  };
  const ratio = comparison.uniqueFailureTypesRatio === null ? 'B found no failures' : `${comparison.uniqueFailureTypesRatio.toFixed(2)}×`;
  const body = `
<div class="cards">${card(ratio, 'unique failure types per conversation, A ÷ B')}${card(comparison.failRateDifference === null ? '–' : `${(comparison.failRateDifference * 100).toFixed(1)} pt`, 'fail rate, A − B')}</div>
<h2>Runs</h2><div class="panel">${overview}</div>
<h2>Mann–Whitney U and Vargha–Delaney Â12</h2><div class="panel">${tests}<p class="note">Two-sided tests. Â12 is the probability that a conversation of A scores higher than one of B (ties count ½); 0.5 means no effect.</p></div>
<h2>Failure types</h2><div class="grid">${panel('Prevalence by failure type', 'enrichment')}<div class="panel">${enrichment}<p class="note">Enrichment: share of A’s failures ÷ share of B’s failures.</p></div></div>
${comparison.reliability ? `<h2>Reliability over repeats (pass^k / pass@k)</h2><div class="panel">${reliabilityComparisonHtml(comparison.reliability.a, comparison.reliability.b, { a: a.name, b: b.name })}</div>` : ''}
${extraSections.map((s) => `<h2>${h(s.title)}</h2><div class="panel">${s.html}</div>`).join('\n')}
`;
  return page(`icabench comparison: ${a.name} vs ${b.name}`, `A = ${h(a.name)}${a.id ? ` (${h(a.id)})` : ''} · B = ${h(b.name)}${b.id ? ` (${h(b.id)})` : ''}`, body, { charts });
}
