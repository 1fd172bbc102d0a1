import { useMemo } from 'react';
import type { ChartConfiguration } from 'chart.js';
import { liveRate, type LiveSnapshot } from '../../server/live-snapshot.ts';
import { ChartCanvas } from './ChartCanvas.tsx';
import { Stat } from './common.tsx';

const LABEL_COLORS = ['#d94c3d', '#2f6fde', '#e3a31b', '#3c9a5f', '#8a5cd1', '#5b6b7a', '#1aa3a3', '#c2528b', '#7a5306', '#1f4fa8'];

/** "m:ss" or "h:mm:ss". */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  const clock = `${Math.floor((s % 3600) / 60)}:${String(s % 60).padStart(2, '0')}`;
  return s >= 3600 ? `${Math.floor(s / 3600)}:${clock.padStart(5, '0')}` : clock;
}

/**
 * What a supervisor reads off the Live screen at a glance: this start's tally by outcome (pass, fail, inconclusive,
 * error), how fast it goes and how long it has left, and the findings by label as the run went on.
 */
export function LiveTally({ snapshot }: { snapshot: LiveSnapshot }) {
  const { outcomes } = snapshot.tally;
  const rate = liveRate(snapshot);
  const { items } = snapshot.nouns;
  return (
    <div data-testid="live-tally">
      <div className="stats">
        <Stat label="Passed" value={<span data-testid="tally-pass">{outcomes.pass}</span>} />
        <Stat label="Failed" value={<span data-testid="tally-fail">{outcomes.fail}</span>} />
        <Stat label="Inconclusive (needs review)" value={<span data-testid="tally-inconclusive">{outcomes.inconclusive}</span>} />
        <Stat label="Errors" value={<span data-testid="tally-error">{outcomes.error}</span>} />
        <Stat label={`Rate (${items} / min)`} value={<span data-testid="live-rate">{rate.perMinute === null ? '—' : rate.perMinute.toFixed(rate.perMinute < 10 ? 1 : 0)}</span>} />
        <Stat label="Time left (estimate)" value={<span data-testid="live-time-left">{rate.leftMs === null ? '—' : duration(rate.leftMs)}</span>} />
      </div>
      <FindingsPlot timeline={snapshot.timeline} items={items} />
    </div>
  );
}

/** Findings by label (cumulative) against the items finished: which failure is piling up, and since when. */
function FindingsPlot({ timeline, items }: { timeline: LiveSnapshot['timeline']; items: string }) {
  const config = useMemo((): ChartConfiguration | null => {
    const labels = [...new Set(timeline.flatMap((p) => Object.keys(p.labels)))].sort();
    if (labels.length === 0) return null;
    return {
      type: 'line',
      data: {
        labels: timeline.map((p) => p.finished),
        datasets: labels.map((label, i) => ({ label, data: timeline.map((p) => p.labels[label] ?? 0), borderColor: LABEL_COLORS[i % LABEL_COLORS.length], backgroundColor: LABEL_COLORS[i % LABEL_COLORS.length], pointRadius: 0, tension: 0.2 })),
      },
      options: {
        scales: { x: { title: { display: true, text: `${items} finished` } }, y: { beginAtZero: true, title: { display: true, text: 'findings (turns labelled)' } } },
        plugins: { title: { display: true, text: 'Findings by label over the run' }, legend: { position: 'bottom' } },
      },
    };
  }, [timeline, items]);
  if (!config) return <p className="muted" data-testid="findings-plot-empty">No findings yet.</p>;
  return (
    <div data-testid="findings-plot">
      <ChartCanvas config={config} label="findings by label over the run" height={260} />
    </div>
  );
}
