import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConversationResult } from '../domain/conversation.ts';
import { parseOrThrow } from '../domain/validation.ts';
import { compareRuns, RunComparisonSchema, type RunComparison } from '../analysis/compare.ts';
import { computeRunSummary, RunSummarySchema, withPreGateFields, type RunInfo, type RunSummary } from '../analysis/profile.ts';
import type { ConversationProtocol } from '../analysis/protocol.ts';
import type { ResultStore } from '../store/store.ts';
import { safetyPolicyOfStoredConfig } from '../domain/safety-policy.ts';
import { ConversationCsvWriter } from './csv.ts';
import { comparisonHtml, DRILL_DOWN_LIMIT, RunHtmlWriter, type ReportSection } from './html.ts';
import { JunitWriter } from './junit.ts';
import { diversityComparisonSection } from './diversity-section.ts';

export interface RunReportInput {
  run: RunInfo;
  summary: RunSummary;
  /** any iterable, e.g. ResultStore.conversations(runId); read once */
  conversations: Iterable<ConversationResult>;
  /** sections other areas add to report.html (vehicle, voice, LLM) */
  extraSections?: readonly ReportSection[];
  drillDownLimit?: number;
  /** per conversation for the report's protocol column (src/analysis/protocol.ts) */
  protocolOf?: (result: ConversationResult) => ConversationProtocol | null;
}

export interface RunReportFiles {
  html: string;
  summary: string;
  junit: string;
  csv: string;
}

/** Writes to a temporary name and renames, so a reader never sees a half-written report file. */
function writeAtomically(path: string, content: string): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, content);
  renameSync(temporary, path);
}

/** Writes report.html, summary.json, junit.xml and conversations.csv into `dir` in one pass over the conversations. */
export function writeRunReport(dir: string, input: RunReportInput): RunReportFiles {
  const summary = parseOrThrow(RunSummarySchema, input.summary, 'writeRunReport: summary');
  mkdirSync(dir, { recursive: true });
  const html = new RunHtmlWriter(input.drillDownLimit ?? DRILL_DOWN_LIMIT, input.protocolOf);
  const junit = new JunitWriter();
  const csv = new ConversationCsvWriter();
  for (const result of input.conversations) {
    html.add(result);
    junit.add(result);
    csv.add(result);
  }
  const files: RunReportFiles = {
    html: join(dir, 'report.html'),
    summary: join(dir, 'summary.json'),
    junit: join(dir, 'junit.xml'),
    csv: join(dir, 'conversations.csv'),
  };
  writeAtomically(files.summary, `${JSON.stringify(summary, null, 2)}\n`);
  writeAtomically(files.junit, junit.toString(input.run, summary.gate.failOn));
  writeAtomically(files.csv, csv.toString());
  writeAtomically(files.html, html.toString(input.run, summary, input.extraSections));
  return files;
}

/** Summarises a stored run and writes its report: the store is streamed twice, never loaded whole. */
export function writeRunReportFromStore(
  store: ResultStore,
  runId: string,
  dir: string,
  options: { extraSections?: readonly ReportSection[]; extend?: (summary: RunSummary) => RunSummary; protocolOf?: RunReportInput['protocolOf'] } = {},
): { summary: RunSummary; files: RunReportFiles } {
  const record = store.getRun(runId);
  if (!record) throw new Error(`${store.path}: no run with id "${runId}"`);
  const run: RunInfo = { id: record.id, name: record.name, mode: record.mode, status: record.status, createdAt: record.createdAt, finishedAt: record.finishedAt };
  const base = computeRunSummary(store.conversations(runId), run, { safety: safetyPolicyOfStoredConfig(record.config) });
  const summary = options.extend ? options.extend(base) : base;
  const files = writeRunReport(dir, { run, summary, conversations: store.conversations(runId), extraSections: options.extraSections, protocolOf: options.protocolOf });
  return { summary, files };
}

/** Reads a summary.json (or a run directory holding one), validated. */
export function readRunSummary(path: string): RunSummary {
  const file = statSync(path, { throwIfNoEntry: false })?.isDirectory() ? join(path, 'summary.json') : path;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`${file}: cannot read the run summary: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  return parseOrThrow(RunSummarySchema, withPreGateFields(json), file);
}

/** Writes comparison.html and comparison.json into `dir`. */
export function writeComparisonReport(dir: string, comparison: RunComparison, extraSections: readonly ReportSection[] = []): { html: string; json: string } {
  const valid = parseOrThrow(RunComparisonSchema, comparison, 'writeComparisonReport: comparison');
  mkdirSync(dir, { recursive: true });
  const files = { html: join(dir, 'comparison.html'), json: join(dir, 'comparison.json') };
  writeAtomically(files.json, `${JSON.stringify(valid, null, 2)}\n`);
  const diversity = valid.diversity ? [diversityComparisonSection(valid.diversity, valid.a.name, valid.b.name)] : [];
  writeAtomically(files.html, comparisonHtml(valid, [...diversity, ...extraSections]));
  return files;
}

/** `icabench compare A B`: A and B are run directories or summary.json files. */
export function compareSummaryFiles(pathA: string, pathB: string): RunComparison {
  return compareRuns(readRunSummary(pathA), readRunSummary(pathB));
}
