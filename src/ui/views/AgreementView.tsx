import type { AgreementView as Agreement } from '../../kinds/dialogue/agreement.ts';
import type { JudgeAgreementView } from '../../judge/agreement.ts';
import { FAILURE_LABELS } from '../../domain/taxonomy.ts';
import type { Rating } from '../../kinds/dialogue/ratings.ts';
import { DIMENSION_TITLES } from '../../domain/taxonomy.ts';
import { DataTable, ErrorBox, Loading, fmt, pct } from '../components/common.tsx';
import { useApi } from '../hooks.ts';

export function AgreementView({ runId }: { runId: string }) {
  const data = useApi<{ agreement: Agreement; ratings: Rating[] }>(`/api/runs/${encodeURIComponent(runId)}/agreement`);
  if (data.error) return <ErrorBox message={data.error} />;
  if (!data.data) return <Loading what="agreement" />;
  const { agreement, ratings } = data.data;
  return (
    <section>
      <div className="title-row">
        <h1>Rater agreement</h1>
        <a href={`#/runs/${encodeURIComponent(runId)}`}>← run report</a>
      </div>
      <p data-testid="agreement-summary">
        {agreement.ratedConversations} rated conversation(s) · raters: {agreement.raters.join(', ') || 'none yet'}
      </p>
      <p className="muted">
        κ is Cohen's κ with quadratic weights on the 0/1/2 scale; ρ is Spearman's rank correlation; “exact” and “within one” are shares of items. F1 is the judge's pass/fail
        against the raters' majority vote (a tie counts as fail), with fail as the positive class. A statistic that the data do not define (e.g. ρ over a single item) shows
        n/a. The judge's κ and ρ here are against the raters' majority (lab); “κ pair mean” is the paper's statistic (Negi et al., RQ0): κ of the judge with each rater,
        averaged over the judge–rater pairs (shown when the same raters rated every conversation).
      </p>
      <h2>Judge vs raters</h2>
      <DataTable headers={['Dimension', 'Items', 'Weighted κ', 'Spearman ρ', 'Exact', 'Within one', 'Pass/fail F1', 'Raters\' Light\'s κ', 'κ pair mean (paper)', 'ρ pair mean (paper)']} testId="judge-agreement">
        {agreement.judgeVsRaters.map((row) => (
          <tr key={row.dimension}>
            <td>{DIMENSION_TITLES[row.dimension]}</td>
            <td>{row.items}</td>
            <td>{fmt(row.kappa)}</td>
            <td>{fmt(row.spearman)}</td>
            <td>{pct(row.exact)}</td>
            <td>{pct(row.withinOne)}</td>
            <td>{row.passFail ? fmt(row.passFail.f1) : 'n/a'}</td>
            <td>{fmt(row.ratersLightsKappa)}</td>
            <td>{fmt(row.pairMean?.kappa ?? null)}</td>
            <td>{fmt(row.pairMean?.spearman ?? null)}</td>
          </tr>
        ))}
      </DataTable>
      <p data-testid="agreement-overall">
        Over the four dimensions (the paper's single figures): judge–rater pairs κ {fmt(agreement.overall.judge?.kappa ?? null)}, ρ {fmt(agreement.overall.judge?.spearman ?? null)}, exact{' '}
        {pct(agreement.overall.judge?.exact ?? null)}; rater pairs κ {fmt(agreement.overall.raters?.kappa ?? null)}, ρ {fmt(agreement.overall.raters?.spearman ?? null)}, exact{' '}
        {pct(agreement.overall.raters?.exact ?? null)}.
      </p>
      <h2>Between raters</h2>
      {agreement.raterPairs.length === 0 && <p className="muted">Agreement between raters needs at least two raters on the same conversation.</p>}
      {agreement.raterPairs.map((pair) => (
        <div key={`${pair.a}|${pair.b}`} className="card">
          <h3 data-testid="rater-pair">
            {pair.a} vs {pair.b} · {pair.items} shared conversation(s) · same pass/fail {pct(pair.passAgreement)}
          </h3>
          <DataTable headers={['Dimension', 'Weighted κ', 'Spearman ρ', 'Exact', 'Within one']}>
            {pair.dimensions.map((d) => (
              <tr key={d.dimension}>
                <td>{DIMENSION_TITLES[d.dimension]}</td>
                <td>{fmt(d.kappa)}</td>
                <td>{fmt(d.spearman)}</td>
                <td>{pct(d.exact)}</td>
                <td>{pct(d.withinOne)}</td>
              </tr>
            ))}
          </DataTable>
        </div>
      ))}
      <JudgePairs runId={runId} />
      <h2>Ratings</h2>
      <DataTable headers={['Conversation', 'Rater', 'Instr.', 'Context', 'Plan', 'Safety', 'T', 'C', 'Pass', 'Turn labels']} testId="ratings-table">
        {ratings.map((r) => (
          <tr key={`${r.key}|${r.rater}`}>
            <td>
              <a href={`#/runs/${encodeURIComponent(runId)}/conversations/${encodeURIComponent(r.key)}`}>{r.key}</a>
            </td>
            <td>{r.rater}</td>
            <td>{r.dimensions.instruction}</td>
            <td>{r.dimensions.context}</td>
            <td>{r.dimensions.plan}</td>
            <td>{r.dimensions.safety}</td>
            <td>{fmt(r.completedShare)}</td>
            <td>{fmt(r.score)}</td>
            <td>{r.pass ? 'pass' : 'fail'}</td>
            <td>{r.turnLabels.map((l) => `${l.turn}:${l.label}`).join(', ')}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

/** Judge vs judge: κ per failure label, exact agreement per dimension, and the turns where two judges part, for review. */
function JudgePairs({ runId }: { runId: string }) {
  const data = useApi<JudgeAgreementView>(`/api/runs/${encodeURIComponent(runId)}/judge-agreement`);
  if (data.error) return <ErrorBox message={data.error} />;
  if (!data.data) return <Loading what="judge agreement" />;
  const { pairs, disagreements, totalDisagreements } = data.data;
  return (
    <>
      <h2>Between judges</h2>
      {pairs.length === 0 && <p className="muted">Agreement between judges needs at least two judges in the run (judges: [oracle, sc-5:…]).</p>}
      {pairs.map((pair) => (
        <div key={pair.pair} className="card" data-testid="judge-pair">
          <h3>
            {pair.pair} · {pair.turns} turn(s) both judged
          </h3>
          <DataTable headers={['Failure label', 'Both', `Only ${pair.judges[0]}`, `Only ${pair.judges[1]}`, 'Neither', 'κ']}>
            {FAILURE_LABELS.map((l) => (
              <tr key={l}>
                <td>{l}</td>
                <td>{pair.labels[l].both}</td>
                <td>{pair.labels[l].onlyFirst}</td>
                <td>{pair.labels[l].onlySecond}</td>
                <td>{pair.labels[l].neither}</td>
                <td>{fmt(pair.labels[l].kappa)}</td>
              </tr>
            ))}
          </DataTable>
          <DataTable headers={['Dimension', 'Items', 'Exact', 'Weighted κ']}>
            {Object.entries(pair.dimensions).map(([d, row]) => (
              <tr key={d}>
                <td>{DIMENSION_TITLES[d as keyof typeof DIMENSION_TITLES]}</td>
                <td>{row.items}</td>
                <td>{pct(row.exact)}</td>
                <td>{fmt(row.kappa)}</td>
              </tr>
            ))}
          </DataTable>
        </div>
      ))}
      {totalDisagreements > 0 && (
        <>
          <h3>
            Turns where judges disagree ({totalDisagreements}
            {totalDisagreements > disagreements.length ? `; the first ${disagreements.length} listed` : ''}): review them by hand
          </h3>
          <DataTable headers={['Conversation', 'Turn', 'Judges', 'Only first', 'Only second', 'User', 'Head unit']} testId="judge-disagreements">
            {disagreements.map((d) => (
              <tr key={`${d.conversationKey}|${d.turnIndex}|${d.judges.join('|')}`}>
                <td>
                  <a href={`#/runs/${encodeURIComponent(runId)}/conversations/${encodeURIComponent(d.conversationKey)}`}>{d.conversationKey}</a>
                </td>
                <td>{d.turnIndex + 1}</td>
                <td>{d.judges.join(' vs ')}</td>
                <td>{d.onlyFirst.join(', ') || '–'}</td>
                <td>{d.onlySecond.join(', ') || '–'}</td>
                <td>{d.userText}</td>
                <td>{d.replyText}</td>
              </tr>
            ))}
          </DataTable>
        </>
      )}
    </>
  );
}
