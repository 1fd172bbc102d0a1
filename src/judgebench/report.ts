import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml, jsonForScript } from '../report/escape.ts';
import { chartJs } from '../report/html.ts';
import { ERROR_CATEGORIES } from './dataset.ts';
import type { ConfigurationSummary, PairResult } from './runner.ts';
import type { Preset } from '../domain/method.ts';

export interface JudgeBenchOutput {
  name: string;
  /** lab defaults or the paper preset, in one line */
  preset: Preset;
  dataset: { source: string; pairs: number; withPreferences: number };
  configurations: ConfigurationSummary[];
  /** per configuration label ("judge/technique"), the per-pair results */
  pairs: Record<string, PairResult[]>;
}

export const configurationLabel = (s: { judge: string; technique: string }) => `${s.judge}/${s.technique}`;

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
const h = escapeHtml;

const CHART_SCRIPT = `
(function(){
  var D = JSON.parse(document.getElementById('data').textContent);
  if (typeof Chart === 'undefined') return;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  function scatter(id, key, title){
    new Chart(document.getElementById(id), { type: 'scatter',
      data: { datasets: D.configurations.map(function(c){ return { label: c.judge + '/' + c.technique, data: [{ x: c[key], y: c.f1 }], pointRadius: 6 }; }) },
      options: { scales: { x: { title: { display: true, text: title } }, y: { min: 0, max: 1, title: { display: true, text: 'F1' } } } } });
  }
  scatter('f1-time', 'meanLatencyMs', 'mean latency per request (ms)');
  scatter('f1-cost', 'costPerRequest', 'cost per request (USD)');
  new Chart(document.getElementById('per-category'), { type: 'bar',
    data: { labels: D.categories, datasets: D.configurations.map(function(c){ return { label: c.judge + '/' + c.technique, data: D.categories.map(function(k){ return c.perCategoryAccuracy[k]; }) }; }) },
    options: { scales: { y: { min: 0, max: 1, title: { display: true, text: 'accuracy' } } } } });
})();`;

export function judgeBenchHtml(output: JudgeBenchOutput): string {
  const injection = output.configurations.some((c) => c.injection);
  const rows = output.configurations
    .map(
      (c) =>
        `<tr><td>${h(c.judge)}</td><td>${h(c.technique)}</td><td>${h(c.models.join(', ') || '–')}</td><td>${c.precision.toFixed(3)}</td><td>${c.recall.toFixed(3)}</td><td>${c.f1.toFixed(3)}</td>` +
        ERROR_CATEGORIES.map((k) => `<td>${pct(c.perCategoryAccuracy[k])}</td>`).join('') +
        `<td>${c.meanLatencyMs.toFixed(1)}</td><td>${c.callsPerRequest.toFixed(2)}</td><td>${c.tokensIn}</td><td>${c.tokensOut}</td><td>${c.costPerRequest.toFixed(6)}</td><td>${c.errors}</td>` +
        (injection ? `<td>${c.injection ? `${c.injection.flipped}/${c.injection.rightWithout} (${pct(c.injection.susceptibility)})` : '–'}</td>` : '') +
        '</tr>',
    )
    .join('\n');
  const data = { configurations: output.configurations, categories: ERROR_CATEGORIES };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${h(output.name)} – judge benchmark</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 6px;text-align:right}td:nth-child(-n+3),th:nth-child(-n+3){text-align:left}.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(380px,1fr));gap:16px}.chart{position:relative;height:300px}.muted{color:#666}</style>
</head><body>
<h1>${h(output.name)}: judge benchmark</h1>
<p><b>Method:</b> ${h(output.preset.statement)}.</p>
<p class="muted">Dataset ${h(output.dataset.source)}: ${output.dataset.pairs} pairs (${output.dataset.withPreferences} with structured preferences). Positive class: ${output.preset.method === 'paper' ? 'the recommendation is correct (the paper\'s convention)' : 'the recommendation is wrong'}. A pair without a verdict counts as judged wrongly.</p>
<table><thead><tr><th>judge</th><th>technique</th><th>models</th><th>precision</th><th>recall</th><th>F1</th>${ERROR_CATEGORIES.map((k) => `<th>acc. ${h(k)}</th>`).join('')}<th>ms/request</th><th>calls/request</th><th>tokens in</th><th>tokens out</th><th>USD/request</th><th>errors</th>${injection ? '<th>injection: flipped / right without (susceptibility)</th>' : ''}</tr></thead>
<tbody>${rows}</tbody></table>
<div class="charts">
<div><h3>F1 vs time</h3><div class="chart"><canvas id="f1-time"></canvas></div></div>
<div><h3>F1 vs cost</h3><div class="chart"><canvas id="f1-cost"></canvas></div></div>
<div><h3>Accuracy per error category</h3><div class="chart"><canvas id="per-category"></canvas></div></div>
</div>
<script id="data" type="application/json">${jsonForScript(data)}</script>
<script>${chartJs()}</script>
<script>${CHART_SCRIPT}</script>
</body></html>
`;
}

/** Writes DIR/summary.json (one entry per judge configuration), DIR/results.json (with every pair's verdict) and DIR/report.html. */
export function writeJudgeBenchOutputs(dir: string, output: JudgeBenchOutput): { summary: string; results: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const files = { summary: join(dir, 'summary.json'), results: join(dir, 'results.json'), html: join(dir, 'report.html') };
  writeFileSync(files.summary, JSON.stringify(output.configurations, null, 2) + '\n');
  writeFileSync(files.results, JSON.stringify(output, null, 2) + '\n');
  writeFileSync(files.html, judgeBenchHtml(output));
  return files;
}
