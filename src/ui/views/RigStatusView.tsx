import type { RigCheck } from '../../server/rig-status.ts';
import { DataTable, ErrorBox, Loading, Pill } from '../components/common.tsx';
import { useApi } from '../hooks.ts';

const AREA_TITLES: Record<RigCheck['area'], string> = {
  head_unit: 'Head unit',
  fleet: 'Fleet workers',
  models: 'Model providers',
  audio: 'Audio',
  can: 'CAN transport',
  disk: 'Disk',
  system: 'System',
};

/** Problems first (failures, then warnings), then by area and check, so what needs fixing is at the top. */
const STATUS_ORDER: Record<string, number> = { fail: 0, warn: 1, ok: 2 };
export function sortedChecks(checks: readonly RigCheck[]): RigCheck[] {
  return [...checks].sort((a, b) => (STATUS_ORDER[a.status] ?? 3) - (STATUS_ORDER[b.status] ?? 3) || AREA_TITLES[a.area].localeCompare(AREA_TITLES[b.area]) || a.title.localeCompare(b.title));
}

export function RigStatusView() {
  const rig = useApi<{ checks: RigCheck[] }>('/api/rig');
  return (
    <section>
      <div className="title-row">
        <h1>Rig status</h1>
        <button onClick={rig.reload}>Check again</button>
      </div>
      {rig.error && <ErrorBox message={rig.error} />}
      {!rig.data && !rig.error && <Loading what="rig checks" />}
      {rig.data && (
        <DataTable headers={['Area', 'Check', 'Status', 'Detail', 'Fix']} testId="rig-table">
          {sortedChecks(rig.data.checks).map((check, i) => (
            <tr key={i} className={`row-${check.status}`}>
              <td>{AREA_TITLES[check.area]}</td>
              <td>{check.title}</td>
              <td>
                <Pill kind={check.status}>{check.status}</Pill>
              </td>
              <td>{check.detail}</td>
              <td>{check.fix ? <code>{check.fix}</code> : '—'}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
