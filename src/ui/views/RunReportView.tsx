import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ChartConfiguration } from 'chart.js';
import type { RunSummary } from '../../analysis/profile.ts';
import { describeConversationProtocol, describeLate, protocolCounts, type ProtocolSection } from '../../analysis/protocol.ts';
import { describeFailOn, DIMENSIONS, DIMENSION_TITLES, FAILURE_LABELS, STRATEGIES } from '../../domain/taxonomy.ts';
import type { ConversationPage } from '../../store/store.ts';
import type { RunRecord } from '../../store/types.ts';
import type { VoiceSummary } from '../../voice/metrics.ts';
import { ChartCanvas } from '../components/ChartCanvas.tsx';
import { ReliabilityTable } from '../components/ReliabilityTable.tsx';
import { DataTable, ErrorBox, Loading, Pager, Pill, Stat, fmt, pct } from '../components/common.tsx';
import { navigate, useApi, type Loaded } from '../hooks.ts';
import { ResumeButton } from '../components/CampaignButtons.tsx';
import { RunDownloads } from '../components/RunDownloads.tsx';
import type { KindPage } from '../kind-page.ts';
import { ConversationView } from './ConversationView.tsx';

type Summary = Omit<RunSummary, 'perConversation'>;
const PAGE = 50;
const OUTCOMES = ['pass', 'fail', 'inconclusive', 'error'] as const;

type Filters = { outcome: string; label: string; keyFilter: string };

export function RunReportView({ runId }: { runId: string }) {
  const run = useApi<{ run: Omit<RunRecord, 'config'> }>(`/api/runs/${encodeURIComponent(runId)}`);
  const [offset, setOffset] = useState(0);
  const [filters, setFilters] = useState<Filters>({ outcome: '', label: '', keyFilter: '' });
  const query = new URLSearchParams({ offset: String(offset), limit: String(PAGE) });
  if (filters.outcome) query.set('outcome', filters.outcome);
  if (filters.label) query.set('label', filters.label);
  if (filters.keyFilter) query.set('key', filters.keyFilter);
  const page = useApi<ConversationPage>(`/api/runs/${encodeURIComponent(runId)}/conversations?${query}`);
  // the figures read every conversation of the run (seconds for 10,000 when not cached): ask only once the list is drawn
  const listDrawn = page.data !== null || page.error !== null;
  const [summaryWanted, setSummaryWanted] = useState(false);
  useEffect(() => {
    if (listDrawn) setSummaryWanted(true);
  }, [listDrawn]);
  const summary = useApi<{ summary: Summary }>(summaryWanted ? `/api/runs/${encodeURIComponent(runId)}/summary` : null);
  const protocol = summary.data?.summary.protocol;
  const protocolByKey = useMemo(() => (protocol ? new Map(protocol.byConversation.map((r) => [r.key, describeConversationProtocol(r)])) : null), [protocol]);
  // stable, so the charts are not rebuilt on every page change
  const filterBy = useCallback((field: keyof Filters, value: string) => {
    setFilters((current) => ({ ...current, [field]: value }));
    setOffset(0);
  }, []);
  const onLabel = useCallback((value: string) => filterBy('label', value), [filterBy]);
  const onOutcome = useCallback((value: string) => filterBy('outcome', value), [filterBy]);

  return (
    <section>
      <RunHeader runId={runId} run={run} summary={summary.data?.summary ?? null} />
      {summary.error && <ErrorBox message={summary.error} />}
      {!summary.data && !summary.error && <Loading what="report figures" />}
      {summary.data && <Charts summary={summary.data.summary} onLabel={onLabel} onOutcome={onOutcome} />}
      {summary.data?.summary.protocol && <ProtocolPanel protocol={summary.data.summary.protocol} />}
      {summary.data?.summary.voice && <VoicePanel voice={summary.data.summary.voice as VoiceSummary} />}
      {summary.data && <ReliabilityTable runs={[{ name: 'this run', reliability: summary.data.summary.reliability }]} />}

      <h2>Conversations</h2>
      <ConversationFilters filters={filters} filterBy={filterBy} />
      {page.error && <ErrorBox message={page.error} />}
      {page.data && (
        <>
          <Pager offset={offset} limit={PAGE} total={page.data.total} onChange={setOffset} />
          <ConversationTable runId={runId} rows={page.data.rows} protocolByKey={protocolByKey} />
        </>
      )}
    </section>
  );
}

/** The run's title, links, downloads and figures (the figures once the summary is there). */
function RunHeader({ runId, run, summary }: { runId: string; run: Loaded<{ run: Omit<RunRecord, 'config'> }>; summary: Summary | null }) {
  return (
    <>
      <div className="title-row">
        <h1>
          Run <span data-testid="run-title">{run.data?.run.name ?? runId}</span>
        </h1>
        <span className="muted">{runId}</span>
        <a href={`#/runs/${encodeURIComponent(runId)}/agreement`}>Rater agreement →</a>
        <a href={`#/compare/${encodeURIComponent(runId)}`}>Compare with… →</a>
        {run.data && <ResumeButton run={run.data.run} />}
      </div>
      <RunDownloads runId={runId} />
      {run.error && <ErrorBox message={run.error} />}
      {run.data && (
        <div className="stats">
          <Stat label="Status" value={run.data.run.status} />
          <Stat label="Mode" value={run.data.run.mode} />
          <Stat label="Stored / planned" value={`${run.data.run.stored} / ${run.data.run.planned}`} testId="run-stored" />
          {summary && (
            <>
              <Stat label="Passed" value={summary.passed} testId="stat-passed" />
              <Stat label="Failed" value={summary.failed} testId="stat-failed" />
              <Stat label="Inconclusive (needs review)" value={summary.inconclusive} testId="stat-inconclusive" />
              <Stat label="Errors" value={summary.errors.sut_error + summary.errors.simulator_error + summary.errors.judge_error} />
              <Stat label="Fail rate" value={pct(summary.failRate)} testId="stat-fail-rate" />
              <Stat label="Conversations with findings" value={`${summary.conversationsWithFindings} (${pct(summary.findingsRate)})`} testId="stat-findings" />
              <Stat label="Findings that fail" value={describeFailOn(summary.gate.failOn)} testId="stat-fail-on" />
              <Stat label="Mean C" value={fmt(summary.meanScore)} />
              <Stat label="Unique failure types / conv." value={fmt(summary.uniqueFailureTypesPerConversation)} />
            </>
          )}
        </div>
      )}
    </>
  );
}

/** The conversation list's filters: outcome, failure label, key. */
function ConversationFilters({ filters, filterBy }: { filters: Filters; filterBy: (field: keyof Filters, value: string) => void }) {
  return (
    <div className="filters">
      <select value={filters.outcome} onChange={(e) => filterBy('outcome', e.target.value)} aria-label="outcome filter">
        <option value="">all outcomes</option>
        {OUTCOMES.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
      <select value={filters.label} onChange={(e) => filterBy('label', e.target.value)} aria-label="label filter">
        <option value="">any failure label</option>
        {FAILURE_LABELS.map((l) => (
          <option key={l}>{l}</option>
        ))}
      </select>
      <input placeholder="key contains…" value={filters.keyFilter} onChange={(e) => filterBy('keyFilter', e.target.value)} />
    </div>
  );
}

/** One page of the run's conversations, each row opening its conversation. */
function ConversationTable({ runId, rows, protocolByKey }: { runId: string; rows: ConversationPage['rows']; protocolByKey: Map<string, string> | null }) {
  return (
    <DataTable headers={['Conversation', 'Outcome', 'C', 'Turns', 'Failure labels', 'Status', ...(protocolByKey ? ['Protocol'] : [])]} testId="conversation-table">
      {rows.map((row) => (
        <tr key={row.key} className="clickable" onClick={() => navigate('runs', runId, 'conversations', row.key)}>
          <td>
            <a href={`#/runs/${encodeURIComponent(runId)}/conversations/${encodeURIComponent(row.key)}`}>{row.key}</a>
          </td>
          <td>
            <Pill kind={row.outcome}>{row.outcome}</Pill>
          </td>
          <td>{fmt(row.score)}</td>
          <td>{row.turns}</td>
          <td>
            {row.labels.map((l) => (
              <Pill key={l} kind="label">
                {l}
              </Pill>
            ))}
          </td>
          <td>{row.status}</td>
          {protocolByKey && <td className="muted">{protocolByKey.get(row.key) ?? '–'}</td>}
        </tr>
      ))}
    </DataTable>
  );
}

const COLORS = ['#2f6fde', '#d94c3d', '#e3a31b', '#3c9a5f', '#8a5cd1', '#5b6b7a', '#1aa3a3', '#c2528b'];

function Charts({ summary, onLabel, onOutcome }: { summary: Summary; onLabel: (label: string) => void; onOutcome: (outcome: string) => void }) {
  const configs = useMemo(() => {
    const errors = summary.errors.sut_error + summary.errors.simulator_error + summary.errors.judge_error;
    const outcomes: ChartConfiguration = {
      type: 'doughnut',
      data: { labels: [...OUTCOMES], datasets: [{ data: [summary.passed, summary.failed, summary.inconclusive, errors], backgroundColor: ['#3c9a5f', '#d94c3d', '#e3a31b', '#5b6b7a'] }] },
      options: { onClick: (_e, elements) => elements[0] && onOutcome(OUTCOMES[elements[0].index]), plugins: { title: { display: true, text: 'Outcomes (click to filter)' } } },
    };
    const labels: ChartConfiguration = {
      type: 'bar',
      data: {
        labels: [...FAILURE_LABELS],
        datasets: [
          { label: 'occurrences', data: FAILURE_LABELS.map((l) => summary.failureTypes[l].count), backgroundColor: COLORS[1] },
          { label: 'conversations', data: FAILURE_LABELS.map((l) => summary.failureTypes[l].conversations), backgroundColor: COLORS[0] },
        ],
      },
      options: { indexAxis: 'y', scales: { y: { ticks: { autoSkip: false } } }, onClick: (_e, elements) => elements[0] && onLabel(FAILURE_LABELS[elements[0].index]), plugins: { title: { display: true, text: 'Failure types (click to filter)' } } },
    };
    const dimensions: ChartConfiguration = {
      type: 'bar',
      data: { labels: DIMENSIONS.map((d) => DIMENSION_TITLES[d]), datasets: [{ label: 'mean score (0–2)', data: DIMENSIONS.map((d) => summary.dimensions[d].mean), backgroundColor: COLORS[3] }] },
      options: { scales: { y: { min: 0, max: 2 } }, plugins: { title: { display: true, text: 'Rubric dimensions' } } },
    };
    const strategies: ChartConfiguration = {
      type: 'bar',
      data: {
        labels: [...STRATEGIES],
        datasets: [
          { label: 'target failure triggered', data: STRATEGIES.map((s) => summary.strategies[s].targetTriggered), backgroundColor: COLORS[4] },
          { label: 'collateral failures', data: STRATEGIES.map((s) => summary.strategies[s].collateralRate), backgroundColor: COLORS[2] },
        ],
      },
      options: { scales: { x: { ticks: { autoSkip: false } }, y: { min: 0, max: 1 } }, plugins: { title: { display: true, text: 'Strategy effectiveness (share of uses)' } } },
    };
    const positions: ChartConfiguration = {
      type: 'bar',
      data: {
        labels: summary.failurePositions.relative.map((_, i, all) => `${Math.round((i / all.length) * 100)}–${Math.round(((i + 1) / all.length) * 100)} %`),
        datasets: [{ label: 'failures by relative turn position', data: summary.failurePositions.relative, backgroundColor: COLORS[6] }],
      },
      options: { plugins: { title: { display: true, text: 'Where in the conversation failures happen' } } },
    };
    return { outcomes, labels, dimensions, strategies, positions };
  }, [summary, onLabel, onOutcome]);
  return (
    <div className="charts" data-testid="report-charts">
      <ChartCanvas config={configs.outcomes} label="outcomes" />
      <ChartCanvas config={configs.labels} label="failure types" />
      <ChartCanvas config={configs.dimensions} label="rubric dimensions" />
      <ChartCanvas config={configs.strategies} label="strategy effectiveness" />
      <ChartCanvas config={configs.positions} label="failure positions" />
    </div>
  );
}

/** What the head unit did wrong on the wire and how its link went (summary.protocol; docs/bridge-protocol.md). */
const milliseconds = (value: number | null) => (value === null ? '–' : `${Math.round(value)} ms`);

/**
 * The voice path of a spoken run, as summary.json's `voice` section and the HTML report give it: WER and
 * fail rates per SNR level, reply latency; what the unit recognised is on each turn of the conversation view.
 */
function VoicePanel({ voice }: { voice: VoiceSummary }) {
  const levels = Object.keys(voice.bySnr).sort((a, b) => (a === 'clean' ? -1 : b === 'clean' ? 1 : Number(b) - Number(a)));
  return (
    <section data-testid="voice-section">
      <h2>Voice path</h2>
      <div className="stats">
        <Stat label="Spoken turns" value={voice.turns} />
        <Stat label="Head-unit ASR WER" value={pct(voice.headUnitAsrWer)} testId="voice-wer" />
        <Stat label="Reply transcription WER" value={pct(voice.replyTranscriptionWer)} />
        <Stat label="First reply audio p50 / p95" value={`${milliseconds(voice.firstReplyLatencyMs.p50)} / ${milliseconds(voice.firstReplyLatencyMs.p95)}`} testId="voice-latency" />
        <Stat label="Barge-ins" value={voice.bargeInEvents} />
      </div>
      <DataTable headers={['SNR', 'Turns', 'ASR WER', 'Voice fail rate', 'Conversations', 'Fail rate']} testId="voice-by-snr">
        {levels.map((level) => {
          const row = voice.bySnr[level];
          return (
            <tr key={level}>
              <td>{level === 'clean' ? 'clean' : `${level} dB`}</td>
              <td>{row.turns}</td>
              <td>{pct(row.headUnitAsrWer)}</td>
              <td>{pct(row.voiceFailRate)}</td>
              <td>{row.conversations}</td>
              <td>{pct(row.failRate)}</td>
            </tr>
          );
        })}
      </DataTable>
      <p className="muted">What the head unit recognised is shown on each spoken turn of a conversation.</p>
    </section>
  );
}

function ProtocolPanel({ protocol }: { protocol: ProtocolSection }) {
  return (
    <div data-testid="protocol-panel">
      <h2>Head unit protocol</h2>
      {protocol.stopped && <ErrorBox message={`The run stopped: ${protocol.stopped}`} />}
      <div className="stats">
        {protocolCounts(protocol).map(([label, value]) => (
          <Stat key={label} label={label} value={value} />
        ))}
      </div>
      {protocol.events.some((e) => e.kind !== 'connected') && (
        <DataTable headers={['Time', 'Event', 'Address', 'Detail']} testId="protocol-events">
          {protocol.events.slice(0, 50).map((e, i) => (
            <tr key={i}>
              <td>{e.at}</td>
              <td>{e.kind}</td>
              <td>{e.kind === 'replaced' ? `${e.previousAddress ?? '?'} → ${e.address ?? '?'}` : (e.address ?? '')}</td>
              <td>{[e.detail, e.pausedMs === null ? null : `waited ${Math.round(e.pausedMs)} ms`].filter(Boolean).join('; ')}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {protocol.late.length > 0 && (
        <p className="muted">
          Late replies:{' '}
          {protocol.late
            .slice(0, 20)
            .map((l) => `${l.key} turn ${l.turn === null ? 'session_ready' : l.turn + 1}: ${describeLate(l)}`)
            .join(' · ')}
        </p>
      )}
      {protocol.beforeHelloMessages.length > 0 && (
        <p className="muted">
          Messages before hello:{' '}
          {protocol.beforeHelloMessages
            .slice(0, 20)
            .map((m) => `${m.key ?? 'no session'} ${m.event}${m.turn === null ? '' : ` turn ${m.turn + 1}`}: ${m.content.slice(0, 120)}`)
            .join(' · ')}
        </p>
      )}
    </div>
  );
}

/** The page of runs of conversations (dialogue, suite and live views name it `report`): the run at `#/runs/<id>`, a conversation at `…/conversations/<key>`. */
export const REPORT_PAGE: KindPage = {
  name: 'report',
  run: null,
  items: 'conversations',
  RunView: RunReportView,
  ItemView: ({ runId, itemKey }) => <ConversationView runId={runId} conversationKey={itemKey} />,
};
