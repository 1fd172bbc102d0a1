import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTaskFile, parseTasks, parseTasksLenient, taskFamily } from '../../../src/toolenv/tasks.ts';
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

  it('the lenient loader lists a task that does not validate and keeps the others, but refuses the file for a duplicate id', () => {
    const raw = JSON.parse(readFileSync(dataPath('carbench/tasks_base.json'), 'utf8')) as Record<string, any>[];
    const tasks = structuredClone(raw.slice(0, 3));
    tasks[1].context_init_config.fan_speed = 9;
    const loaded = parseTasksLenient(JSON.stringify(tasks), 'x.json');
    expect(loaded.tasks.map((t) => t.task_id)).toEqual([raw[0].task_id, raw[2].task_id]);
    expect(loaded.invalid).toEqual([{ where: 'x.json', taskId: raw[1].task_id, position: 1, reason: expect.stringMatching(new RegExp(`^x\\.json: task ${raw[1].task_id} \\(#1\\): context_init_config\\.fan_speed`)) }]);
    // a task that is not valid under an id another task has is still a duplicate: the file is refused, not one of them dropped
    expect(() => parseTasksLenient(JSON.stringify([...tasks, tasks[0]]), 'd.json')).toThrow(`d.json: task ${raw[0].task_id} (#3): task_id: duplicate id (task #0 has it too); each task_id must be unique`);
    expect(parseTasksLenient('{}', 'o.json')).toEqual({ tasks: [], invalid: [{ where: 'o.json', taskId: '(file)', position: -1, reason: 'expected a JSON array of tasks' }] });
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
