import type { DiversityComparison, DiversitySection } from '../analysis/diversity.ts';
import { escapeHtml as h } from './escape.ts';
import type { ReportSection } from './html.ts';

/** Duplicates listed in the report; the rest are counted (summary.json lists all). */
export const DUPLICATE_LIMIT = 100;
/** Characters of a medoid's rendering shown as its cluster's example. */
const EXAMPLE_CHARS = 1200;

const PALETTE = ['#2b6cb0', '#c0392b', '#1f8a4c', '#b7791f', '#7b3fa0', '#2c7a7b', '#718096', '#d53f8c', '#dd6b20', '#38a169', '#553c9a', '#975a16'];
/** The palette, then hues a golden angle apart, so up to any k no two clusters share a colour. */
const colour = (i: number) => (i < PALETTE.length ? PALETTE[i] : `hsl(${((i - PALETTE.length) * 137.508 + 20) % 360},60%,42%)`);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** An inline SVG scatter of the 2-D projection (no script needed; each point's tooltip names its conversation). */
function scatter(points: DiversitySection['conversations'], colourOf: (p: DiversitySection['conversations'][number]) => string, title: string): string {
  const size = 360;
  const pad = 12;
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sx = (x: number) => pad + ((x - x0) / (x1 - x0 || 1)) * (size - 2 * pad);
  const sy = (y: number) => size - pad - ((y - y0) / (y1 - y0 || 1)) * (size - 2 * pad);
  const dots = points
    .map((p) => `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="3.5" fill="${colourOf(p)}" fill-opacity="0.75"><title>${h(p.key)} (${h(p.run)}, cluster ${p.cluster + 1})</title></circle>`)
    .join('');
  return `<figure style="margin:0"><svg role="img" aria-label="${h(title)}" viewBox="0 0 ${size} ${size}" width="${size}" height="${size}" style="background:#fafbfc;border:1px solid #e2e6ec;border-radius:6px">${dots}</svg><figcaption class="muted">${h(title)}</figcaption></figure>`;
}

function legend(entries: readonly [string, string][]): string {
  return `<p>${entries.map(([name, c]) => `<span class="chip"><span style="color:${c}">●</span> ${h(name)}</span>`).join(' ')}</p>`;
}

function coverageText(coverage: DiversitySection['coverage'][string]): string {
  return `${pct(coverage.mean)} ± ${pct(coverage.std)}`;
}

/** What a diversity section is over, in words, and its title. */
const NOUNS = { failing: 'failing conversations', findings: 'conversations with findings' } as const;
const TITLES = { failing: 'Failure diversity', findings: 'Failure diversity over conversations with findings' } as const;

/** The report's "Failure diversity" section: unique failing conversations, clusters with their medoid example, the projection plots. */
export function diversitySection(section: DiversitySection): ReportSection {
  const noun = NOUNS[section.population];
  const runs = Object.keys(section.unique);
  const totalUnique = Object.values(section.unique).reduce((a, b) => a + b, 0);
  const clustering = section.clustering;
  const chosen = clustering.runs.map((r) => r.k);
  const intro =
    `<p>${section.failing} ${noun}, <b>${totalUnique} unique</b> after deduplication at cosine similarity &gt; ${section.threshold} ` +
    `(${section.duplicates.length} duplicate(s)). Embeddings: <b>${h(section.embedder)}</b>. ` +
    `Distance d = ${h(section.distance)}.</p>` +
    (clustering.runs.length
      ? `<p>${h(clustering.algorithm)}; k from ${clustering.kRange[0]} to ${clustering.kRange[1]}, ${clustering.repetitions} seeded repetitions (seed ${clustering.seed}${clustering.sampled < totalUnique ? `, each on a sample of ${clustering.sampled}, the rest assigned to the nearest medoid` : ''}); chosen k per repetition: ${chosen.join(', ')}. ` +
        `Shown: repetition ${clustering.shown + 1} (k = ${clustering.runs[clustering.shown].k}, silhouette ${clustering.runs[clustering.shown].silhouette.toFixed(3)}). ` +
        `Coverage (share of the clusters reached, mean ± std over the repetitions): ${runs.map((r) => `${h(r)} ${coverageText(section.coverage[r])}`).join('; ')}` +
        `${runs.length === 1 ? ' (a run reaches all of its own clusters; coverage compares runs: <code>icabench compare</code> clusters the union of two runs)' : ''}.</p>` +
        (chosen.some((k) => k === clustering.kRange[1]) && clustering.kRange[1] < totalUnique - 1
          ? `<p class="muted">The silhouette chose the largest k of the range in some repetitions: the best k may lie above it (raise <code>diversity.kMax</code>).</p>`
          : '')
      : `<p>Too few unique ${noun} to cluster (k needs at least ${clustering.kRange[0]} + 1): each is its own cluster.</p>`);
  const clusterRows = section.clusters
    .map(
      (c) =>
        `<tr><td><span style="color:${colour(c.id)}">●</span> ${c.id + 1}</td><td class="n">${c.size}</td><td>${h(c.medoid)}</td><td><pre>${h(c.example.length > EXAMPLE_CHARS ? `${c.example.slice(0, EXAMPLE_CHARS)}…` : c.example)}</pre></td></tr>`,
    )
    .join('');
  const plots = section.conversations.length
    ? `<div class="grid" style="grid-template-columns:repeat(auto-fit,minmax(380px,1fr))"><div>${scatter(section.conversations, (p) => colour(p.cluster), `PCA projection of the unique ${noun}, coloured by cluster`)}${legend(section.clusters.map((c) => [`cluster ${c.id + 1}`, colour(c.id)]))}</div>` +
      `<div>${scatter(section.conversations, (p) => colour(runs.indexOf(p.run)), 'the same, coloured by run')}${legend(runs.map((r, i) => [r, colour(i)]))}</div></div>`
    : '';
  const duplicates = section.duplicates.slice(0, DUPLICATE_LIMIT);
  const duplicateTable = duplicates.length
    ? `<h3>Duplicates and their nearest twin</h3>${section.duplicates.length > duplicates.length ? `<p class="muted">The first ${duplicates.length} of ${section.duplicates.length}; summary.json lists all.</p>` : ''}<table><thead><tr><th>conversation</th><th>twin</th><th class="n">cosine</th></tr></thead><tbody>${duplicates
        .map((d) => `<tr><td>${h(d.key)}</td><td>${h(d.twin)}</td><td class="n">${d.similarity.toFixed(3)}</td></tr>`)
        .join('')}</tbody></table>`
    : '';
  return {
    title: TITLES[section.population],
    html:
      intro +
      plots +
      (clusterRows ? `<h3>Clusters and their medoid conversation</h3><table><thead><tr><th>cluster</th><th class="n">size</th><th>medoid</th><th>example (the medoid's rendering)</th></tr></thead><tbody>${clusterRows}</tbody></table>` : '') +
      duplicateTable,
  };
}

/** The comparison report's diversity section: unique failing conversations A/B and coverage of the union's clusters. */
export function diversityComparisonSection(comparison: DiversityComparison, nameA: string, nameB: string): ReportSection {
  const noun = NOUNS[comparison.population];
  const ratio = comparison.uniqueRatio === null ? '–' : `${comparison.uniqueRatio.toFixed(2)}×`;
  const share = (x: number | null) => (x === null ? '–' : pct(x));
  const row = (label: string, a: string, b: string) => `<tr><td>${h(label)}</td><td class="n">${a}</td><td class="n">${b}</td></tr>`;
  return {
    title: TITLES[comparison.population],
    html:
      `<p>Embeddings: <b>${h(comparison.embedder)}</b>${comparison.note ? ` (${h(comparison.note)})` : ''}. Unique ${noun} A/B: <b>${ratio}</b>. ` +
      `Coverage: the share of the clusters of the union of both runs' unique ${noun} each run reaches (k-medoids, k ${comparison.union.clustering.runs.map((r) => r.k).join(', ')} over ${comparison.union.clustering.repetitions} repetitions), mean ± std.</p>` +
      `<table><thead><tr><th></th><th class="n">A: ${h(nameA)}</th><th class="n">B: ${h(nameB)}</th></tr></thead><tbody>` +
      row(`unique ${noun}`, String(comparison.uniqueA), String(comparison.uniqueB)) +
      row(`duplicates among ${noun}`, share(comparison.duplicateShareA), share(comparison.duplicateShareB)) +
      row('coverage of the union clusters', coverageText(comparison.coverageA), coverageText(comparison.coverageB)) +
      `</tbody></table>`,
  };
}
