import type { Reliability } from '../../analysis/reliability.ts';
import { DataTable, pct } from './common.tsx';

/**
 * pass^k / pass@k over the repeats of each conversation plan (summary.reliability; docs/reports.md), one or two runs
 * side by side; or over the trials of each tool-agent task, one column pair per task family (`item: 'task'`).
 */
export function ReliabilityTable({ runs, item = 'conversation plan' }: { runs: readonly { name: string; reliability: Reliability | null | undefined }[]; item?: 'conversation plan' | 'task' }) {
  const shown = runs.filter((r): r is { name: string; reliability: Reliability } => !!r.reliability);
  if (shown.length === 0) return null;
  const maxK = Math.max(...shown.map((r) => r.reliability.maxTrials));
  const at = (r: Reliability, k: number) => r.byK.find((x) => x.k === k);
  const named = (r: { name: string }) => (shown.length > 1 ? r.name : '');
  const headers = ['k', ...shown.flatMap((r) => [`pass^k ${named(r)} (unbiased · first k)`, `pass@k ${named(r)} (unbiased · first k)`])];
  return (
    <>
      <h2>{item === 'task' ? 'Reliability over trials' : 'Reliability over repeats'}</h2>
      <DataTable headers={headers} testId="reliability-table">
        {Array.from({ length: maxK }, (_, i) => i + 1).map((k) => (
          <tr key={k}>
            <td>{k}</td>
            {shown.map((r) => {
              const row = at(r.reliability, k);
              return [
                <td key={`${r.name}-hat`}>{row ? `${pct(row.passHatK.unbiased)} · ${pct(row.passHatK.firstK)}` : '–'}</td>,
                <td key={`${r.name}-at`}>{row ? `${pct(row.passAtK.unbiased)} · ${pct(row.passAtK.firstK)}` : '–'}</td>,
              ];
            })}
          </tr>
        ))}
      </DataTable>
      <p className="muted">pass^k: all k trials of a {item} pass; pass@k: at least one does. Unbiased: the estimator from c passes of n trials; first k: the first k trials as they ran.</p>
    </>
  );
}
