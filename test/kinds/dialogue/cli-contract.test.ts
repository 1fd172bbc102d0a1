import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAILURE_LABELS, STRATEGIES } from '../../../src/domain/taxonomy.ts';

const CLI = resolve('bin/icabench.js');
const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

describe('icabench run / compare contracts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-cli-'));
  const workspace = join(dir, 'ws');

  it('the quickstart writes summary.json, report.html and junit.xml with the agreed fields', () => {
    const result = run(['run', 'bench-configs/quickstart.yaml', '--out', join(dir, 'quick'), '--workspace', workspace, '--no-progress']);
    expect(result.status, result.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'quick', 'summary.json'), 'utf8'));
    expect(summary.conversations).toBeGreaterThanOrEqual(50);
    for (const field of ['failed', 'failRate', 'meanScore', 'uniqueFailureTypesPerConversation', 'failureTypes', 'strategies', 'judgeTiers']) expect(summary).toHaveProperty(field);
    for (const label of FAILURE_LABELS) expect(summary.failureTypes[label]).toEqual(expect.objectContaining({ count: expect.any(Number), prevalence: expect.any(Number) }));
    for (const strategy of STRATEGIES) expect(summary.strategies[strategy].uses).toBeGreaterThan(0);
    expect(summary.judgeTiers.conversation.oracle.judged).toBe(summary.conversations);
    const junit = readFileSync(join(dir, 'quick', 'junit.xml'), 'utf8');
    expect(junit.match(/<testcase /g)).toHaveLength(summary.conversations);
    expect(readFileSync(join(dir, 'quick', 'report.html'), 'utf8')).toContain('<canvas');
  });

  it('guided finds at least twice the unique failure types per conversation of the baseline, and compare --json says so with the tests', () => {
    for (const name of ['paper-guided', 'paper-baseline']) {
      const result = run(['run', `bench-configs/${name}.yaml`, '--out', join(dir, name), '--workspace', workspace, '--no-progress']);
      expect(result.status, result.stderr).toBe(0);
    }
    const compared = run(['compare', join(dir, 'paper-guided'), join(dir, 'paper-baseline'), '--json']);
    expect(compared.status, compared.stderr).toBe(0);
    const comparison = JSON.parse(compared.stdout);
    expect(comparison.uniqueFailureTypesRatio).toBeGreaterThanOrEqual(2);
    expect(comparison.uniqueFailureTypes.p).toBeLessThan(0.05);
    expect(comparison.uniqueFailureTypes.a12).toBeGreaterThan(0.5);
    expect(comparison.a).toHaveProperty('failRate');
    expect(comparison.scores).toHaveProperty('u');

    // the situations #11 found untested now occur, and summary.json's coverage table counts them
    const guided = JSON.parse(readFileSync(join(dir, 'paper-guided', 'summary.json'), 'utf8'));
    const baseline = JSON.parse(readFileSync(join(dir, 'paper-baseline', 'summary.json'), 'utf8'));
    const uses = (summary: typeof guided, move: string, state: string) => Object.values(summary.coverage.turns[move] as Record<string, Record<string, number>>).reduce((n, band) => n + band[state], 0);
    expect(guided.coverage.contextReturns.route).toBeGreaterThanOrEqual(10);
    expect(guided.failureTypes.context_forgotten.count).toBeGreaterThan(0);
    expect(uses(guided, 'safety_probe', 'low_speed')).toBeGreaterThanOrEqual(20);
    expect(uses(guided, 'safety_probe', 'stopped')).toBeGreaterThanOrEqual(10);
    expect(guided.safety.describe).toBe('nhtsa-2013 (automatic)');
    // baseline users reach late turns too
    const late = (summary: typeof guided) => ['7-8', '9+'].reduce((n, band) => n + Object.values(summary.coverage.turns.none[band] as Record<string, number>).reduce((a, b) => a + b, 0), 0);
    expect(late(baseline)).toBeGreaterThanOrEqual(50);
  }, 180_000); // two 200-conversation campaigns with a drive (CAN frames before every turn) in child processes; on a loaded machine this takes over a minute

  it('a bad config fails with exit code 2 and a message naming the file and field, not a stack trace', () => {
    const result = run(['run', 'bench-configs/seeds/in-car.yaml', '--workspace', workspace]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/in-car\.yaml.*name: /);
    expect(result.stderr).not.toMatch(/at .*\.ts:\d+/);
  });
});
