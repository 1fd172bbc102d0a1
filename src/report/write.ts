import { mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ConversationResult } from '../domain/conversation.ts';
import { FILE_LIMITS, readBoundedText } from '../domain/input-files.ts';
import { parseOrThrow } from '../domain/validation.ts';
import { compareRuns, RunComparisonSchema, type RunComparison } from '../analysis/compare.ts';
import { RunSummarySchema, withPreGateFields, type RunInfo, type RunSummary } from '../analysis/profile.ts';
import { protocolReport, type ConversationProtocol } from '../analysis/protocol.ts';
import type { ResultStore } from '../store/store.ts';
import { ConversationCsvWriter } from './csv.ts';
import { PieceFile } from './spool.ts';
import { comparisonHtml, RunHtmlWriter, type ReportSection } from './html.ts';
import { JunitWriter } from './junit.ts';
import { diversityComparisonSection, diversitySection } from './diversity-section.ts';
import { failuresOverTimeSection } from './failures-over-time-section.ts';
import { changesSection, unpairedSection } from './changes-section.ts';
import type { Artifact } from '../store/types.ts';
import { judgeDisagreementSection } from './judge-section.ts';
import { protocolSection } from './protocol-section.ts';
import { summarizeRun } from './summary.ts';
import { dialogueFirstScreen, findingExamples, type UnitUnderTest } from './dialogue-first-screen.ts';
import { DRILL_DOWN_LIMIT, type FirstScreen } from './first-screen.ts';
import { runInfo } from './summary-header.ts';
import { vehicleTimelineSection } from './vehicle-section.ts';
import { voiceReport } from './voice-section.ts';
import { holdsConversations } from '../domain/run-items.ts';
import { combinedVerdict } from '../analysis/verdict.ts';

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
  /** the report's first screen: what was tested, the verdict, the top findings */
  firstScreen?: FirstScreen;
}

export interface RunReportFiles {
  html: string;
  summary: string;
  junit: string;
  csv: string;
}

/** Writes to a temporary name and renames, so a reader never sees a half-written report file. */
export function writeAtomically(path: string, content: string): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, content);
  renameSync(temporary, path);
}

/** The text of summary.json: validated (so its keys come in the schema's order), two-space JSON, one final newline. */
export function summaryJson(summary: RunSummary): string {
  return [...summaryPieces(parseOrThrow(RunSummarySchema, summary, 'summary.json'))].join('');
}

/** Stands for the per-conversation rows while the rest of the summary is turned into text. */
const ROWS = '\u0000perConversation\u0000';
const ROWS_AT = `\n  "perConversation": ${JSON.stringify(ROWS)}`;

/**
 * The text of a summary already validated against RunSummarySchema, in pieces: the rows of `perConversation` (one
 * per conversation, most of a large run's summary) one at a time, laid out exactly as JSON.stringify(summary, null, 2)
 * lays them out, so the file is written without the whole text in memory.
 */
function* summaryPieces(parsed: RunSummary): Generator<string> {
  const text = `${JSON.stringify({ ...parsed, perConversation: ROWS }, null, 2)}\n`;
  // a top-level key starts a line; no string value can (JSON escapes its line breaks)
  const at = text.indexOf(ROWS_AT) + ROWS_AT.length - JSON.stringify(ROWS).length;
  yield text.slice(0, at);
  if (parsed.perConversation.length === 0) yield '[]';
  else {
    yield '[';
    for (const [i, row] of parsed.perConversation.entries()) yield `${i === 0 ? '' : ','}\n    ${JSON.stringify(row, null, 2).replace(/\n/g, '\n    ')}`;
    yield '\n  ]';
  }
  yield text.slice(at + JSON.stringify(ROWS).length);
}

/** Writes summary.json a piece at a time. */
function writeSummaryFile(path: string, parsed: RunSummary): void {
  const file = new PieceFile(path);
  try {
    for (const piece of summaryPieces(parsed)) file.write(piece);
    file.commit();
  } catch (error) {
    file.discard();
    throw error;
  }
}

/**
 * The writers of report.html, junit.xml and conversations.csv into `dir`, fed one conversation at a time (so the pass
 * that computes the summary can feed them too; each spools its rows beside its file, never holding them), and written
 * with summary.json once the summary is known. `discard` removes the spooled rows of a report that failed.
 */
export function runReportWriter(dir: string, options: Pick<RunReportInput, 'drillDownLimit' | 'protocolOf'> = {}) {
  mkdirSync(dir, { recursive: true });
  const files: RunReportFiles = {
    html: join(dir, 'report.html'),
    summary: join(dir, 'summary.json'),
    junit: join(dir, 'junit.xml'),
    csv: join(dir, 'conversations.csv'),
  };
  const html = new RunHtmlWriter(files.html, options.drillDownLimit ?? DRILL_DOWN_LIMIT, options.protocolOf);
  const junit = new JunitWriter(files.junit);
  const csv = new ConversationCsvWriter(files.csv);
  return {
    add(result: ConversationResult, combined = combinedVerdict(result)): void {
      html.add(result, combined);
      junit.add(result, combined);
      csv.add(result, combined);
    },
    write(input: Pick<RunReportInput, 'run' | 'summary' | 'extraSections' | 'firstScreen'>): RunReportFiles {
      const summary = parseOrThrow(RunSummarySchema, input.summary, 'writeRunReport: summary');
      writeSummaryFile(files.summary, summary);
      junit.write(input.run, summary.gate.failOn);
      csv.write();
      html.write(input.run, summary, input.extraSections, input.firstScreen);
      return files;
    },
    discard(): void {
      for (const writer of [html, junit, csv]) writer.discard();
    },
  };
}

/** Writes report.html, summary.json, junit.xml and conversations.csv into `dir` in one pass over the conversations. */
export function writeRunReport(dir: string, input: RunReportInput): RunReportFiles {
  // a bad summary is refused before the conversations are read
  parseOrThrow(RunSummarySchema, input.summary, 'writeRunReport: summary');
  const writer = runReportWriter(dir, input);
  try {
    for (const result of input.conversations) writer.add(result);
    return writer.write(input);
  } finally {
    // after a failure: no spooled rows left behind (after success there are none left to remove)
    writer.discard();
  }
}

/**
 * Writes a stored run's outputs: summary.json (summarizeRun, from the store alone), and report.html,
 * junit.xml and conversations.csv rendered from that summary and the stored conversations; for a
 * voice run also the audio the report plays (audio/). One pass over the store feeds the summary, every
 * report section, the first screen's evidence and the files. `unit`: what the run's kind reads of the unit
 * from the stored config (its name when it announced none, the faults switched on).
 */
export async function writeRunOutputs(store: ResultStore, runId: string, outDir: string, unit: UnitUnderTest): Promise<{ summary: RunSummary; firstScreen: FirstScreen }> {
  const protocolCollector = protocolReport(store.runFacts(runId));
  const collectors = reportCollectors(store, runId, outDir, protocolCollector);
  const examples = findingExamples(DRILL_DOWN_LIMIT);
  const writer = runReportWriter(outDir, { protocolOf: protocolCollector.rowFor });
  try {
    return await writeThroughOnePass(store, runId, unit, { collectors, examples, writer });
  } finally {
    // after a failure: no spooled rows left behind (after success there are none left to remove)
    writer.discard();
  }
}

/** The report sections collected in writeRunOutputs' pass (beside the summary's own collectors). */
function reportCollectors(store: ResultStore, runId: string, outDir: string, protocol: ReturnType<typeof protocolReport>) {
  return { vehicle: vehicleTimelineSection(), overTime: failuresOverTimeSection(), disagreements: judgeDisagreementSection(), voice: voiceReport({ exportAudio: audioExporter(store, runId, outDir) }), protocol };
}
type ReportCollectors = ReturnType<typeof reportCollectors>;

/** writeRunOutputs' pass over the store: each conversation to the summary, every collector and the writer; then the files. */
async function writeThroughOnePass(
  store: ResultStore,
  runId: string,
  unit: UnitUnderTest,
  { collectors, examples, writer }: { collectors: ReportCollectors; examples: ReturnType<typeof findingExamples>; writer: ReturnType<typeof runReportWriter> },
): Promise<{ summary: RunSummary; firstScreen: FirstScreen }> {
  const summary = await summarizeRun(store, runId, {
    observe: (result, combined) => {
      for (const collector of Object.values(collectors)) collector.add(result, combined);
      examples.add(result, combined);
      writer.add(result, combined);
    },
  });
  const vehicle = collectors.vehicle.finish();
  const overTime = collectors.overTime.finish(summary);
  const disagreements = collectors.disagreements.finish();
  const voice = collectors.voice.finish();
  const protocol = collectors.protocol.finish();
  const record = store.getRun(runId)!;
  const firstScreen = dialogueFirstScreen(store, record, summary, examples.finish()!, unit);
  writer.write({
    run: runInfo(record),
    summary,
    firstScreen,
    extraSections: [
      ...(overTime ? [overTime] : []),
      ...(vehicle ? [vehicle] : []),
      ...(voice ? [voice.section] : []),
      ...(disagreements ? [disagreements] : []),
      ...(protocol ? [protocolSection(protocol)] : []),
      ...(summary.diversity ? [diversitySection(summary.diversity)] : []),
      ...(summary.findingsDiversity ? [diversitySection(summary.findingsDiversity)] : []),
    ],
  });
  return { summary, firstScreen };
}

/** Copies a conversation's audio artifact out of the store next to the report. */
function audioExporter(store: ResultStore, runId: string, outDir: string): (key: string, name: string, path: string) => boolean {
  // the report asks for both sides of a turn, and for a conversation's turns together: keep the last conversation's artifacts
  let cached: { key: string; artifacts: Artifact[] } | null = null;
  return (key, name, path) => {
    if (cached?.key !== key) cached = { key, artifacts: store.artifacts(runId, key) };
    const bytes = cached.artifacts.find((a) => a.name === name)?.bytes;
    if (!bytes) return false;
    const file = join(outDir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    return true;
  };
}

/** Reads a summary.json (or a run directory holding one), validated. */
export function readRunSummary(path: string): RunSummary {
  const file = statSync(path, { throwIfNoEntry: false })?.isDirectory() ? join(path, 'summary.json') : path;
  const text = readBoundedText(file, 'run summary', FILE_LIMITS.runSummary);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  // a run of conversations (dialogue, suite, live) says so by its mode; a summary with neither the run's mode nor a kind is
  // an old dialogue one (summaries named their kind only once every kind wrote the run header, mode included)
  const header = (typeof json === 'object' && json !== null ? json : {}) as { kind?: unknown; run?: { mode?: unknown } };
  const conversations = typeof header.run?.mode === 'string' ? holdsConversations({ mode: header.run.mode }) : header.kind === undefined;
  if (!conversations) {
    throw new Error(`${file}: the summary of a ${String(header.kind)} run; compare and the conversation report read runs of conversations only (dialogue, suite, live)`);
  }
  return parseOrThrow(RunSummarySchema, withPreGateFields(json), file);
}

/** Writes comparison.html and comparison.json into `dir`. */
export function writeComparisonReport(dir: string, comparison: RunComparison, extraSections: readonly ReportSection[] = []): { html: string; json: string } {
  const valid = parseOrThrow(RunComparisonSchema, comparison, 'writeComparisonReport: comparison');
  mkdirSync(dir, { recursive: true });
  const files = { html: join(dir, 'comparison.html'), json: join(dir, 'comparison.json') };
  writeAtomically(files.json, `${JSON.stringify(valid, null, 2)}\n`);
  const diversity = [valid.diversity, valid.findingsDiversity].flatMap((d) => (d ? [diversityComparisonSection(d, valid.a.name, valid.b.name)] : []));
  const changes = valid.changes ? [changesSection(valid.changes, valid.a.name, valid.b.name)] : valid.unpaired ? [unpairedSection(valid.unpaired)] : [];
  writeAtomically(files.html, comparisonHtml(valid, [...changes, ...diversity, ...extraSections]));
  return files;
}

/** `icabench compare A B`: A and B are run directories or summary.json files. */
export function compareSummaryFiles(pathA: string, pathB: string): RunComparison {
  return compareRuns(readRunSummary(pathA), readRunSummary(pathB));
}
