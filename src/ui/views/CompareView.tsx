import { useMemo } from 'react';
import type { ChartConfiguration } from 'chart.js';
import type { ConversationChange, ReplyDiffPart, RunChanges } from '../../analysis/changes.ts';
import type { RunComparison } from '../../analysis/compare.ts';
import type { ToolRunsCompared } from '../../kinds/tool-agents/view.ts';
import { comparePairRefusal, compareRefusal, comparisonWarningsText } from '../../domain/comparable.ts';
import { describeFailOn, FAILURE_LABELS } from '../../domain/taxonomy.ts';
import type { ListedRun } from '../../server/server.ts';
import { ChartCanvas } from '../components/ChartCanvas.tsx';
import { ReliabilityTable } from '../components/ReliabilityTable.tsx';
import { DataTable, ErrorBox, Loading, fmt, pct } from '../components/common.tsx';
import { navigate, useApi } from '../hooks.ts';
import { turnNumber } from '../../domain/conversation.ts';

/** GET /api/compare: the stored kind, the page of its view (src/run/kind-view.ts), and what that view's comparison holds. */
type Served = { kind: string; page: string; warnings?: unknown } & ({ page: 'report'; comparison: RunComparison; warnings: string[] } | ({ page: 'tool-agents' } & ToolRunsCompared) | Record<string, unknown>);

export function CompareView({ a, b }: { a: string | null; b: string | null }) {
  const runs = useApi<{ runs: ListedRun[]; comparedKindGroups: string[][] }>('/api/runs');
  const compared = runs.data?.comparedKindGroups ?? [];
  const kindOf = (id: string | null) => runs.data?.runs.find((r) => r.id === id)?.kind ?? null;
  // a pair the server would refuse is never asked for: its runs are greyed out below, with the reason
  const [kindA, kindB] = [kindOf(a), kindOf(b)];
  const refused = kindA && kindB ? comparePairRefusal(kindA, kindB, compared) : null;
  const comparison = useApi<Served>(a && b && runs.data && !refused ? `/api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}` : null);
  const choose = (which: 'a' | 'b', id: string) => navigate('compare', ...(which === 'a' ? [id, b ?? ''] : [a ?? '', id]).filter(Boolean));
  return (
    <section>
      <h1>Compare two runs</h1>
      <div className="filters">
        {(['a', 'b'] as const).map((which) => {
          const other = kindOf(which === 'a' ? b : a);
          return (
            <select key={which} value={(which === 'a' ? a : b) ?? ''} onChange={(e) => choose(which, e.target.value)} aria-label={`run ${which}`} data-testid={`compare-${which}`}>
              <option value="">run {which.toUpperCase()}…</option>
              {(runs.data?.runs ?? []).map((r) => {
                const why = compareRefusal(r.kind, compared, other);
                return (
                  <option key={r.id} value={r.id} disabled={why !== null} title={why ?? undefined}>
                    {r.name} · {r.id}
                    {why ? ` (${r.kind}: not comparable here)` : ''}
                  </option>
                );
              })}
            </select>
          );
        })}
      </div>
      {!(a && b) && <CompareGuidance runs={runs.data?.runs.length ?? null} />}
      {refused && <ErrorBox message={refused} />}
      {comparison.error && <ErrorBox message={comparison.error} />}
      {a && b && !refused && !comparison.data && !comparison.error && <Loading what="comparison" />}
      {comparison.data && <ServedComparison served={comparison.data} />}
    </section>
  );
}

/** A comparison on the page its kind's view names; a page the app does not have shows the comparison as it was served. */
function ServedComparison({ served }: { served: Served }) {
  const warning = comparisonWarningsText(Array.isArray(served.warnings) ? (served.warnings as string[]) : []);
  const warnings = warning && (
    <div className="warn-box" data-testid="compare-warnings">
      {warning}
    </div>
  );
  if (served.page === 'report' && 'comparison' in served) {
    return (
      <>
        {warnings}
        <Comparison c={served.comparison as RunComparison} />
      </>
    );
  }
  if (served.page === 'tool-agents' && 'toolComparison' in served) {
    const tool = served as ToolRunsCompared;
    return (
      <>
        {warnings}
        <ToolComparison a={tool.a} b={tool.b} c={tool.toolComparison} />
      </>
    );
  }
  return <pre data-testid="served-comparison">{JSON.stringify(served, null, 2)}</pre>;
}

/** Two tool-agents runs: pass^k per task family and the tasks whose success rate moved (as `icabench compare` prints them). */
function ToolComparison({ a, b, c }: { a: ToolRunsCompared['a']; b: ToolRunsCompared['b']; c: ToolRunsCompared['toolComparison'] }) {
  return (
    <>
      <DataTable headers={['Task family', 'k', `A: ${a.name}`, `B: ${b.name}`, 'B − A']} testId="tool-comparison-table">
        {c.families.map((f) => (
          <tr key={f.family}>
            <td>{f.family}</td>
            <td>{f.k}</td>
            <td>{pct(f.a)}</td>
            <td>{pct(f.b)}</td>
            <td>{f.delta === null ? 'n/a' : `${(f.delta * 100).toFixed(1)} pts`}</td>
          </tr>
        ))}
      </DataTable>
      <p className="muted">pass^k (unbiased) at the largest k both runs have. Tasks whose success rate changed: {c.changed.length}.</p>
      {c.changed.length > 0 && (
        <DataTable headers={['Task', 'A success rate', 'B success rate']} testId="tool-changed">
          {c.changed.slice(0, 50).map((t) => (
            <tr key={t.taskId}>
              <td>{t.taskId}</td>
              <td>{pct(t.a)}</td>
              <td>{pct(t.b)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {(c.onlyIn.a.length > 0 || c.onlyIn.b.length > 0) && (
        <p className="muted">
          Only in A: {c.onlyIn.a.length} tasks; only in B: {c.onlyIn.b.length} tasks.
        </p>
      )}
      <p className="muted" data-testid="tool-hallucination-split">
        Failed hallucination trials, fabrication / concealment: A {c.hallucinationFailures.a.fabrication} / {c.hallucinationFailures.a.concealment}, B{' '}
        {c.hallucinationFailures.b.fabrication} / {c.hallucinationFailures.b.concealment}.
      </p>
    </>
  );
}

/** What to do on the compare page before two runs are chosen (nothing is shown otherwise). */
export function CompareGuidance({ runs }: { runs: number | null }) {
  return (
    <p className="muted" data-testid="compare-guidance">
      {runs === 0
        ? 'There is no run to compare yet: start a campaign on Campaign setup (or icabench run CONFIG), then come back.'
        : runs === 1
          ? 'There is one run so far: a comparison needs two (a guided and a baseline run of the same seeds, or the same campaign on two unit builds).'
          : 'Choose run A and run B above: fail rates, mean C, unique failure types and Mann–Whitney U with Â12, and for two builds of one campaign what got fixed and what regressed.'}
    </p>
  );
}

function Comparison({ c }: { c: RunComparison }) {
  const chart = useMemo<ChartConfiguration>(
    () => ({
      type: 'bar',
      data: {
        labels: [...FAILURE_LABELS],
        datasets: [
          { label: `A: ${c.a.name}`, data: FAILURE_LABELS.map((l) => c.enrichment[l].prevalenceA), backgroundColor: '#2f6fde' },
          { label: `B: ${c.b.name}`, data: FAILURE_LABELS.map((l) => c.enrichment[l].prevalenceB), backgroundColor: '#e3a31b' },
        ],
      },
      options: { indexAxis: 'y', scales: { y: { ticks: { autoSkip: false } } }, plugins: { title: { display: true, text: 'Share of conversations with each failure' } } },
    }),
    [c],
  );
  const rows: [string, string, string][] = [
    ['Conversations', String(c.a.conversations), String(c.b.conversations)],
    ['Passed / failed / inconclusive', `${c.a.passed} / ${c.a.failed} / ${c.a.inconclusive}`, `${c.b.passed} / ${c.b.failed} / ${c.b.inconclusive}`],
    ['Errors', String(c.a.errors), String(c.b.errors)],
    ['Fail rate', pct(c.a.failRate), pct(c.b.failRate)],
    ['Conversations with findings', `${c.a.conversationsWithFindings} (${pct(c.a.findingsRate)})`, `${c.b.conversationsWithFindings} (${pct(c.b.findingsRate)})`],
    ['Findings that fail (scoring.failOn)', describeFailOn(c.a.failOn), describeFailOn(c.b.failOn)],
    ['Fail rate by C alone (paper)', pct(c.a.scoreOnlyFailRate), pct(c.b.scoreOnlyFailRate)],
    ['Mean C', fmt(c.a.meanScore), fmt(c.b.meanScore)],
    ['Unique failure types / conversation', fmt(c.a.uniqueFailureTypesPerConversation), fmt(c.b.uniqueFailureTypesPerConversation)],
    ...(c.diversity
      ? ([
          ['Unique failing conversations', String(c.diversity.uniqueA), String(c.diversity.uniqueB)],
          ['Duplicates among failing conversations', pct(c.diversity.duplicateShareA), pct(c.diversity.duplicateShareB)],
          ['Coverage of the union’s failure clusters (mean ± std)', `${pct(c.diversity.coverageA.mean)} ± ${pct(c.diversity.coverageA.std)}`, `${pct(c.diversity.coverageB.mean)} ± ${pct(c.diversity.coverageB.std)}`],
        ] as [string, string, string][])
      : []),
    ...(c.findingsDiversity
      ? ([
          ['Unique conversations with findings', String(c.findingsDiversity.uniqueA), String(c.findingsDiversity.uniqueB)],
          ['Coverage of the union’s clusters of conversations with findings (mean ± std)', `${pct(c.findingsDiversity.coverageA.mean)} ± ${pct(c.findingsDiversity.coverageA.std)}`, `${pct(c.findingsDiversity.coverageB.mean)} ± ${pct(c.findingsDiversity.coverageB.std)}`],
        ] as [string, string, string][])
      : []),
  ];
  return (
    <>
      <DataTable headers={['', `A: ${c.a.name}`, `B: ${c.b.name}`]} testId="comparison-table">
        {rows.map(([label, x, y]) => (
          <tr key={label}>
            <td>{label}</td>
            <td>{x}</td>
            <td>{y}</td>
          </tr>
        ))}
      </DataTable>
      <p>
        Scores A vs B: Mann–Whitney p = {fmt(c.scores.p, 4)}, Â12 = {fmt(c.scores.a12)} ({c.scores.magnitude ?? 'n/a'}){c.scores.significant ? ', significant' : ''} at α = {c.alpha}. Unique failure
        types: p = {fmt(c.uniqueFailureTypes.p, 4)}, Â12 = {fmt(c.uniqueFailureTypes.a12)}.
      </p>
      {c.diversity && (
        <p className="muted" data-testid="diversity-note">
          Failure diversity: unique failing conversations A/B {fmt(c.diversity.uniqueRatio)}; clusters of the union by k-medoids; embeddings: {c.diversity.embedder} (docs/diversity.md).
        </p>
      )}
      {c.changes && <BuildChanges changes={c.changes} />}
      {c.unpaired && (
        <p className="muted" data-testid="unpaired">
          Fixed / regressed: not listed. {c.unpaired}.
        </p>
      )}
      <ChartCanvas config={chart} label="failure prevalence A vs B" height={300} />
      <ReliabilityTable runs={[{ name: `A: ${c.a.name}`, reliability: c.reliability?.a }, { name: `B: ${c.b.name}`, reliability: c.reliability?.b }]} />
    </>
  );
}

function ReplyDiff({ parts }: { parts: readonly ReplyDiffPart[] }) {
  return (
    <span>
      {parts.map((p, i) => (p.op === 'same' ? <span key={i}>{p.text}</span> : p.op === 'removed' ? <del key={i}>{p.text}</del> : <ins key={i}>{p.text}</ins>))}
    </span>
  );
}

function ChangedConversations({ title, list, testId }: { title: string; list: readonly ConversationChange[]; testId: string }) {
  return (
    <div data-testid={testId}>
      <h3>
        {title}: {list.length}
      </h3>
      {list.map((c) => (
        <details key={c.key} open={list.length <= 5}>
          <summary>
            <b>{c.key}</b>: {c.outcomeA}
            {c.failedByA.length ? ` (${c.failedByA.join(', ')})` : ''} → {c.outcomeB}
            {c.failedByB.length ? ` (${c.failedByB.join(', ')})` : ''}
          </summary>
          <DataTable headers={['Turn', 'Driver', 'Labels A', 'Labels B', 'Reply (A → B)']}>
            {c.turns.map((t) => (
              <tr key={t.index}>
                <td>{turnNumber(t.index)}</td>
                <td>{t.user}</td>
                <td>
                  {t.labelsA.join(', ') || '–'}
                  {t.expectationsA === false ? ' · expectation unmet' : ''}
                </td>
                <td>
                  {t.labelsB.join(', ') || '–'}
                  {t.expectationsB === false ? ' · expectation unmet' : ''}
                </td>
                <td>
                  <ReplyDiff parts={t.replyDiff} />
                </td>
              </tr>
            ))}
          </DataTable>
        </details>
      ))}
    </div>
  );
}

/** Two runs of one suite or campaign on two unit builds: what B fixed and what it regressed, turn by turn (docs/reports.md, "Two builds"). */
function BuildChanges({ changes }: { changes: RunChanges }) {
  return (
    <section data-testid="build-changes">
      <h2>Fixed and regressed</h2>
      <p>
        Builds: A <code>{changes.buildA ?? 'not recorded'}</code>, B <code>{changes.buildB ?? 'not recorded'}</code>. Unchanged: {changes.unchanged.pass} passing, {changes.unchanged.fail} failing,{' '}
        {changes.unchanged.other} other{changes.onlyInA.length || changes.onlyInB.length ? `; only in A ${changes.onlyInA.length}, only in B ${changes.onlyInB.length}` : ''}.
      </p>
      <ChangedConversations title="Fixed (fail in A, pass in B)" list={changes.fixed} testId="fixed" />
      <ChangedConversations title="Regressed (pass in A, fail in B)" list={changes.regressed} testId="regressed" />
      {changes.otherChanges.length > 0 && <ChangedConversations title="Other changes" list={changes.otherChanges} testId="other-changes" />}
    </section>
  );
}
