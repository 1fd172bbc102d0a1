import type { AgreementView as Agreement } from '../../server/agreement.ts';
import type { Rating } from '../../server/annotations.ts';
import { DIMENSION_TITLES } from '../../domain/taxonomy.ts';
import { ErrorBox, Loading, fmt, pct } from '../components/common.tsx';
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
        n/a.
      </p>
      <h2>Judge vs raters</h2>
      <table className="table" data-testid="judge-agreement">
        <thead>
          <tr>
            <th>Dimension</th>
            <th>Items</th>
            <th>Weighted κ</th>
            <th>Spearman ρ</th>
            <th>Exact</th>
            <th>Within one</th>
            <th>Pass/fail F1</th>
            <th>Raters' Light's κ</th>
          </tr>
        </thead>
        <tbody>
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
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Between raters</h2>
      {agreement.raterPairs.length === 0 && <p className="muted">Agreement between raters needs at least two raters on the same conversation.</p>}
      {agreement.raterPairs.map((pair) => (
        <div key={`${pair.a}|${pair.b}`} className="card">
          <h3 data-testid="rater-pair">
            {pair.a} vs {pair.b} · {pair.items} shared conversation(s) · same pass/fail {pct(pair.passAgreement)}
          </h3>
          <table className="table">
            <thead>
              <tr>
                <th>Dimension</th>
                <th>Weighted κ</th>
                <th>Spearman ρ</th>
                <th>Exact</th>
                <th>Within one</th>
              </tr>
            </thead>
            <tbody>
              {pair.dimensions.map((d) => (
                <tr key={d.dimension}>
                  <td>{DIMENSION_TITLES[d.dimension]}</td>
                  <td>{fmt(d.kappa)}</td>
                  <td>{fmt(d.spearman)}</td>
                  <td>{pct(d.exact)}</td>
                  <td>{pct(d.withinOne)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
      <h2>Ratings</h2>
      <table className="table" data-testid="ratings-table">
        <thead>
          <tr>
            <th>Conversation</th>
            <th>Rater</th>
            <th>Instr.</th>
            <th>Context</th>
            <th>Plan</th>
            <th>Safety</th>
            <th>T</th>
            <th>C</th>
            <th>Pass</th>
            <th>Turn labels</th>
          </tr>
        </thead>
        <tbody>
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
        </tbody>
      </table>
    </section>
  );
}
