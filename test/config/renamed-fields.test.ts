import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadManualQaConfig } from '../../src/kinds/manual-qa/config.ts';
import { ManualQaSetupSchema } from '../../src/kinds/manual-qa/item.ts';
import { loadToolAgentsConfig } from '../../src/kinds/tool-agents/config.ts';
import { manualQaKind } from '../../src/kinds/manual-qa/kind.ts';
import { resumedRun } from '../../src/run/resume.ts';
import { ResultStore } from '../../src/store/store.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';
import { computeManualQaSummary, loadManualQaRun } from '../../src/kinds/manual-qa/results.ts';
import { MANUAL_QA_FACTS } from '../../src/kinds/manual-qa/item.ts';
import { TESTSET_FORMAT } from '../../src/manual/testset.ts';

const MANUAL = join(REPO_ROOT, 'data/bmw-manual/xml');
const dir = mkdtempSync(join(tmpdir(), 'icabench-renamed-'));
const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** What the loader printed on standard error while `load` ran. */
function printed(load: () => unknown): { lines: string[]; error: string | null } {
  const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    load();
    return { lines: spy.mock.calls.map((call) => String(call[0])), error: null };
  } catch (error) {
    return { lines: spy.mock.calls.map((call) => String(call[0])), error: (error as Error).message };
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('one vocabulary across kinds: the old field names for one release', () => {
  it('manual-qa `evaluators` is read as `judges`, with a deprecation message naming the file and the new field, printed once', () => {
    const path = write('manual-old.yaml', `kind: manual-qa\nname: m\nmanual: [${MANUAL}]\nevaluators: [oracle, "ollama:judge"]\n`);
    const first = printed(() => expect(loadManualQaConfig(path).config.judges).toEqual(['oracle', 'ollama:judge']));
    expect(first.error).toBeNull();
    expect(first.lines).toEqual([`${path}: "evaluators" is deprecated and will be refused in the next release; rename it "judges" (docs/configuration.md, "Role names across kinds")`]);
    expect(printed(() => loadManualQaConfig(path)).lines).toEqual([]);
    expect(manualQaKind.modelRefs(loadManualQaConfig(path).config)).toEqual(['ollama:judge']);
  });

  it('tool-agents `user` is read as `simulator`, with the deprecation message', () => {
    const path = write('tools-old.yaml', 'kind: tool-agents\nname: t\ntasks: [t.json]\nuser: "ollama:user-model"\n');
    const loaded = printed(() => expect(loadToolAgentsConfig(path).config.simulator).toBe('ollama:user-model'));
    expect(loaded.error).toBeNull();
    expect(loaded.lines).toEqual([expect.stringContaining(`${path}: "user" is deprecated and will be refused in the next release; rename it "simulator"`)]);
  });

  it('the new names load without a message', () => {
    const manual = write('manual-new.yaml', `kind: manual-qa\nname: m\nmanual: [${MANUAL}]\njudges: [oracle]\n`);
    const tools = write('tools-new.yaml', 'kind: tool-agents\nname: t\ntasks: [t.json]\nsimulator: deterministic\n');
    expect(printed(() => loadManualQaConfig(manual))).toEqual({ lines: [], error: null });
    expect(printed(() => loadToolAgentsConfig(tools))).toEqual({ lines: [], error: null });
  });

  it('both names given is a config error naming the file, the line and the new field', () => {
    const manual = write('manual-both.yaml', `kind: manual-qa\nname: m\nmanual: [${MANUAL}]\njudges: [oracle]\nevaluators: [oracle]\n`);
    expect(printed(() => loadManualQaConfig(manual)).error).toContain(`${manual}:5: evaluators: "evaluators" is the old name of "judges"; give only "judges"`);
    const tools = write('tools-both.yaml', 'kind: tool-agents\nname: t\ntasks: [t.json]\nuser: deterministic\nsimulator: deterministic\n');
    expect(printed(() => loadToolAgentsConfig(tools)).error).toContain(`${tools}:4: user: "user" is the old name of "simulator"; give only "simulator"`);
  });

  it('a setup fact stored before the rename reads in the new name (and, older than the family-bias test, with no assistant family)', () => {
    const stored = { retrieval: 'bm25', evaluators: ['oracle'], manual: ['a.xml'], testSet: 'deterministic' };
    expect(ManualQaSetupSchema.parse(stored)).toEqual({ retrieval: 'bm25', judges: ['oracle'], manual: ['a.xml'], testSet: 'deterministic', assistantFamily: null });
  });

  it('a run stored with the old name resumes with the config in the new name; another config is still refused', () => {
    const store = ResultStore.open(join(dir, 'resume.db'));
    try {
      const oldConfig = { kind: 'manual-qa', name: 'm', manual: ['a.xml'], evaluators: ['oracle'], concurrency: 4 };
      const runId = store.createItemRun({ name: 'm', kind: 'manual-qa', config: oldConfig, plan: [{ key: 'q1', item: {} }], meta: {} });
      const today = { kind: 'manual-qa', name: 'm', manual: ['a.xml'], judges: ['oracle'], concurrency: 4 };
      expect(resumedRun(store, runId, 'manual-qa', today, manualQaKind.configSchema)?.id).toBe(runId);
      expect(() => resumedRun(store, runId, 'manual-qa', { ...today, judges: ['oracle', 'ollama:x'] }, manualQaKind.configSchema)).toThrow(/judges differs/);
    } finally {
      store.close();
    }
  });

  it('a manual-QA run stored before the rename still reports: its setup fact names the judges `evaluators`', () => {
    const store = ResultStore.open(join(dir, 'old-manual.db'));
    try {
      const item = { format: TESTSET_FORMAT, id: 'q1', kind: 'definition', difficulty: 'beginner', question: 'What is ACC?', answer: 'Cruise control.', facts: [], chapter: 'c', sectionIds: ['s1'], chunkIds: [], warningIds: [], generator: 'deterministic', parentId: null };
      const runId = store.createItemRun({ name: 'old', kind: 'manual-qa', config: { kind: 'manual-qa', name: 'old', manual: ['a.xml'], evaluators: ['oracle'] }, plan: [{ key: 'q1', item }], meta: { evaluators: ['oracle'] } });
      store.addRunFact(runId, MANUAL_QA_FACTS.setup, { retrieval: 'bm25', evaluators: ['oracle'], manual: ['a.xml'], testSet: 'deterministic' });
      const summary = computeManualQaSummary(loadManualQaRun(store, runId));
      expect(summary.setup).toEqual({ retrieval: 'bm25', judges: ['oracle'], manual: ['a.xml'], testSet: 'deterministic', assistantFamily: null });
      expect(summary.judgeMetrics.map((m) => m.tier)).toEqual(['oracle']);
      expect(summary.tiers).toEqual([]);
    } finally {
      store.close();
    }
  });
});
