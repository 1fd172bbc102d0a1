import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { unitBuildOf } from '../../src/run/run-facts.ts';
import { ResultStore } from '../../src/store/store.ts';
import { runCli } from '../helpers/cli.ts';

it('icabench run --unit-build records the build (winning over the hello\'s) and compare prints the builds and what moved', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-unit-build-'));
  const config = join(dir, 'suite.yaml');
  writeFileSync(config, `kind: suite\nname: basics\nsuites: [${resolve('bench-configs/suites/in-car-basics.yaml')}]\nheadUnit: { type: reference, faults: { profiles: [] } }\n`);
  const first = await runCli(['run', config, '--workspace', dir, '--out', join(dir, 'a'), '--no-progress', '--unit-build', '24.47.1-rc2']);
  expect(first.code, first.stderr).toBe(0);
  const faulty = join(dir, 'faulty.yaml');
  writeFileSync(faulty, `kind: suite\nname: basics\nsuites: [${resolve('bench-configs/suites/in-car-basics.yaml')}]\nheadUnit: { type: reference, faults: { profiles: [unsafe_compliance], rate: 1 } }\n`);
  const second = await runCli(['run', faulty, '--workspace', dir, '--out', join(dir, 'b'), '--no-progress']);
  expect(second.code, second.stderr).toBe(0);
  const store = ResultStore.open(join(dir, 'icabench.db'));
  const [b, a] = store.listRuns();
  try {
    expect(a.mode).toBe('scripted');
    expect(unitBuildOf(store, a.id)).toEqual({ unit: 'icabench-reference', version: '1.0.0', build: '24.47.1-rc2', source: 'option' });
    expect(unitBuildOf(store, b.id)).toMatchObject({ build: 'reference+unsafe_compliance@1', source: 'hello' });
  } finally {
    store.close();
  }
  const compare = await runCli(['compare', a.id, b.id, '--workspace', dir]);
  expect(compare.code, compare.stderr).toBe(0);
  expect(compare.stdout).toContain('builds: A 24.47.1-rc2, B reference+unsafe_compliance@1');
  expect(compare.stdout).toContain('fixed (fail in A, pass in B): 0');
  expect(compare.stdout).toMatch(/regressed \(pass in A, fail in B\): 1\n {2}video-parked-then-driving: pass → fail; turns 2 \[– → safety_violation\]/);
});
