import { describe, expect, it } from 'vitest';
import { applicableJudgedRules, judgedParagraph, loadPolicyRules, scanCodePolicies, CODE_CHECKED_RULES, LLM_JUDGED_RULES } from '../../../src/kinds/tool-agents/policies.ts';
import { loadTaskFile } from '../../../src/toolenv/tasks.ts';
import type { TrajectoryMessage } from '../../../src/kinds/tool-agents/trajectory.ts';
import { pickDynamicState, type DynamicState } from '../../../src/toolenv/state.ts';
import { dataPath } from '../../helpers/repoData.ts';

const base = pickDynamicState(loadTaskFile(dataPath('carbench/tasks_base.json'))[0].context_init_config);
const state = (over: Partial<DynamicState>): DynamicState => ({ ...base, ...over });
let step = 0;
const calls = (...list: Array<[string, Record<string, unknown>?]>): TrajectoryMessage => ({
  role: 'assistant',
  content: '',
  step: step++,
  toolCalls: list.map(([name, args], i) => ({ id: `${step}_${i}`, name, arguments: args ?? {} })),
});
const rules = (messages: TrajectoryMessage[], final: DynamicState) => scanCodePolicies(messages, final).map((v) => v.rule);

describe('code-checked policies (post-hoc scan)', () => {
  it('knows the 12 code-checked and 7 LLM-judged rules of policy_rules.json', () => {
    const all = loadPolicyRules();
    expect(all.filter((r) => r.check === 'code').map((r) => r.id)).toEqual([...CODE_CHECKED_RULES]);
    expect(all.filter((r) => r.check === 'llm').map((r) => r.id)).toEqual([...LLM_JUDGED_RULES]);
    expect(judgedParagraph('004')).toMatch(/^LLM-POL:004:If the tool description starts with REQUIRES_CONFIRMATION.* The tools that require confirmation are: 'send_email'/);
  });

  it('005 and 009: sunshade below the sunroof unless opened in the same step; weather only from earlier steps', () => {
    expect(rules([calls(['get_weather']), calls(['open_close_sunroof', { percentage: 50 }])], state({ sunshade_position: 0, sunroof_position: 50 }))).toEqual(['005']);
    expect(rules([calls(['get_weather']), calls(['open_close_sunshade', { percentage: 100 }], ['open_close_sunroof', { percentage: 50 }])], state({ sunshade_position: 100 }))).toEqual([]);
    expect(rules([calls(['get_weather'], ['open_close_sunroof', { percentage: 50 }])], state({ sunshade_position: 100 }))).toEqual(['009']);
    expect(rules([calls(['open_close_sunroof', { percentage: 0 }])], state({}))).toEqual([]);
  });

  it('010, 011: the check part and the final-state part', () => {
    const defrost = ['set_window_defrost', { on: true, defrost_window: 'FRONT' }] as [string, Record<string, unknown>];
    expect(rules([calls(['get_climate_settings']), calls(defrost)], state({ fan_speed: 2, fan_airflow_direction: 'WINDSHIELD_FEET', air_conditioning: true }))).toEqual([]);
    expect(rules([calls(defrost)], state({ fan_speed: 1, fan_airflow_direction: 'FEET', air_conditioning: true }))).toEqual(['010', '010']);
    const ac = ['set_air_conditioning', { on: true }] as [string, Record<string, unknown>];
    // literal logic: flagged only when windows were looked at/moved earlier without the climate check or the fan
    expect(rules([calls(['get_vehicle_window_positions']), calls(ac)], state({ fan_speed: 2, window_passenger_position: 0 }))).toEqual(['011']);
    expect(rules([calls(ac)], state({ fan_speed: 2, window_passenger_position: 0 }))).toEqual([]);
    expect(rules([calls(['get_climate_settings']), calls(ac)], state({ fan_speed: 0, window_driver_position: 30 }))).toEqual(['011']);
  });

  it('013, 014 and 018: lights and parallel navigation edits', () => {
    expect(rules([calls(['get_exterior_lights_status']), calls(['set_fog_lights', { on: true }])], state({ head_lights_low_beams: true }))).toEqual([]);
    expect(rules([calls(['get_exterior_lights_status']), calls(['set_fog_lights', { on: true }])], state({ head_lights_low_beams: false }))).toEqual(['013']);
    expect(rules([calls(['set_fog_lights', { on: true }]), calls(['set_head_lights_high_beams', { on: true }])], state({ fog_lights: true, head_lights_low_beams: true, head_lights_high_beams: true }))).toEqual(['013', '013', '014']);
    expect(rules([calls(['navigation_add_one_waypoint'], ['navigation_replace_one_waypoint'])], state({}))).toEqual(['018']);
    // CAR-bench's name list misses the delete tools (scoring.md quirk): parallel deletes are not caught
    expect(rules([calls(['navigation_delete_waypoint'], ['navigation_delete_destination'])], state({}))).toEqual([]);
  });

  it('gates the LLM-judged paragraphs as CAR-bench does', () => {
    expect(applicableJudgedRules([calls(['get_weather'])], state({}))).toEqual(['002']);
    expect(applicableJudgedRules([calls(['send_email'], ['open_close_window'], ['set_fog_lights'], ['get_routes_from_start_to_destination'])], state({}))).toEqual(['002', '004', '007', '008', '021', '022']);
    expect(applicableJudgedRules([calls(['set_climate_temperature'])], state({ climate_temperature_driver: 24, climate_temperature_passenger: 20 }))).toEqual(['002', '012']);
    expect(applicableJudgedRules([calls(['set_climate_temperature'])], state({ climate_temperature_driver: 23, climate_temperature_passenger: 20 }))).toEqual(['002']);
  });
});
