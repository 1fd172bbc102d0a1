import { useState } from 'react';
import { blobUrl } from '../api.ts';
import { useApi } from '../hooks.ts';

interface OutputFile {
  name: string;
  bytes: number | null;
}

function size(bytes: number | null): string {
  if (bytes === null) return 'streamed';
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(0)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The run's outputs, as `icabench report RUN` writes them (report.html, summary.json, junit.xml, the CSV) and the
 * JSONL of `icabench export RUN`: each a download (fetched with the app's token, so it works off the loopback too);
 * report.html also opens in a window of its own.
 */
export function RunDownloads({ runId }: { runId: string }) {
  const base = `/api/runs/${encodeURIComponent(runId)}/outputs`;
  const files = useApi<{ files: OutputFile[] }>(base);
  const [error, setError] = useState<string | null>(null);
  async function download(name: string) {
    setError(null);
    try {
      const url = await blobUrl(`${base}/${encodeURIComponent(name)}`);
      const link = document.createElement('a');
      link.href = url;
      link.download = `${runId}-${name}`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }
  return (
    <div className="downloads" data-testid="run-downloads">
      <span className="muted">Outputs:</span>
      {files.error && <span className="field-error-inline">{files.error}</span>}
      {!files.data && !files.error && <span className="muted">writing…</span>}
      {files.data?.files.map((f) => (
        <button key={f.name} onClick={() => void download(f.name)} data-testid={`download-${f.name}`} title={`download ${f.name} (${size(f.bytes)})`}>
          ⭳ {f.name}
        </button>
      ))}
      {files.data?.files.some((f) => f.name === 'report.html') && (
        <a href={`${base}/report.html?inline=1`} target="_blank" rel="noreferrer" data-testid="open-report">
          Open report.html ↗
        </a>
      )}
      {error && <span className="field-error-inline">{error}</span>}
    </div>
  );
}
