import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTaskFile, parseTasks, taskFamily } from '../../../src/toolenv/tasks.ts';
import { dataPath } from '../../helpers/repoData.ts';

describe('CAR-bench tasks as data', () => {
  it('loads the three vendored train files with the documented counts', () => {
    const base = loadTaskFile(dataPath('carbench/tasks_base.json'));
    const hall = loadTaskFile(dataPath('carbench/tasks_hallucination.json'));
    const dis = loadTaskFile(dataPath('carbench/tasks_disambiguation.json'));
    expect([base.length, hall.length, dis.length]).toEqual([50, 48, 31]);
    expect(new Set(hall.map((t) => taskFamily(t.task_type)))).toEqual(new Set(['hallucination']));
    expect(hall.every((t) => (t.removed_part ?? []).length > 0)).toBe(true);
  });

  it('a bad field names the file, the task id and the field', () => {
    const raw = JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')) as Record<string, any>[];
    const broken = structuredClone(raw.slice(0, 3));
    broken[2].context_init_config.fan_speed = 9;
    expect(() => parseTasks(JSON.stringify(broken), 'x.json')).toThrow(/x\.json: task base_4 \(#2\): context_init_config\.fan_speed/);
    const noKw = structuredClone(raw.slice(0, 1));
    delete noKw[0].actions[1].kwargs;
    expect(() => parseTasks(JSON.stringify(noKw), 'y.json')).toThrow(/task base_0 \(#0\): actions\.1\.kwargs/);
  });

  it('rejects a hallucination task without removed_part, duplicates and non-arrays', () => {
    const raw = JSON.parse(readFileSync(dataPath('carbench/tasks_hallucination.json'), 'utf8')) as Record<string, any>[];
    const t = structuredClone(raw[0]);
    t.removed_part = null;
    expect(() => parseTasks(JSON.stringify([t]), 'h.json')).toThrow(/hallucination_0.*removed_part/);
    expect(() => parseTasks(JSON.stringify([raw[0], raw[0]]), 'h.json')).toThrow(/duplicate/);
    expect(() => parseTasks('{}', 'h.json')).toThrow(/JSON array/);
    expect(() => parseTasks('{', 'h.json')).toThrow(/not JSON/);
  });
});
