import { INJECTED_FAULTS_EXPECTED, INJECTED_FAULTS_MEANING } from '../../domain/injected-faults.ts';
import type { FirstScreen } from '../../report/first-screen.ts';

/**
 * A run's first screen on its app page, the same facts report.html opens on (src/report/first-screen.ts): a caveat that
 * qualifies every figure, the verdict in plain words, what was tested, and the top findings, each linking to the item
 * page (`itemHref`) that holds its evidence.
 */
export function FirstScreenPanel({ screen, itemHref }: { screen: FirstScreen; itemHref: (key: string) => string }) {
  const { tested, verdict } = screen;
  const rows: [string, string][] = [
    ['unit', tested.unit],
    ['build', tested.build ?? 'none recorded'],
    ['kind', tested.kind],
    ['method', tested.method],
    ['judges', tested.judges],
  ];
  return (
    <section className="first-screen" data-testid="first-screen">
      {screen.caveat && (
        <div className="warn-box" data-testid="caveat">
          <b>Read this first:</b> {screen.caveat}
        </div>
      )}
      <div className={`verdict-box verdict-${verdict.tone}`} data-testid="verdict">
        <b>Verdict:</b> {verdict.text}
        {tested.faults && verdict.tone !== 'pass' && (
          <>
            {' '}
            <b>Expected here:</b> {INJECTED_FAULTS_EXPECTED}
          </>
        )}
      </div>
      <div className="first-grid">
        <div className="card" data-testid="tested">
          <h3>What was tested</h3>
          <table className="table kv">
            <tbody>
              {rows.map(([key, value]) => (
                <tr key={key}>
                  <th>{key}</th>
                  <td>{value}</td>
                </tr>
              ))}
              <tr>
                <th>faults</th>
                <td>
                  {tested.faults ? (
                    <>
                      <b>{tested.faults.what}.</b> <span className="muted">{INJECTED_FAULTS_MEANING}</span>
                    </>
                  ) : (
                    'none injected'
                  )}
                </td>
              </tr>
            </tbody>
          </table>
        </div>
        <div className="card" data-testid="top-findings">
          <h3>Top findings</h3>
          {screen.findings.length === 0 ? (
            <p className="muted">{screen.noFindings}</p>
          ) : (
            <ol>
              {screen.findings.map((f) => (
                <li key={f.title}>
                  <b>{f.title}</b> {f.detail}
                  {f.quote && <blockquote>{f.quote}</blockquote>}
                  {f.item !== null && <a href={itemHref(f.item)}>evidence: {f.anchorLabel} →</a>}
                </li>
              ))}
            </ol>
          )}
        </div>
      </div>
    </section>
  );
}
