import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseOrThrow } from '../../domain/validation.ts';
import { carbenchPath } from '../../toolenv/paths.ts';
import type { DynamicState } from '../../toolenv/state.ts';
import { toolSteps, type TrajectoryMessage } from './trajectory.ts';

/** The 19 CAR-bench policy rules (data/carbench/policy_rules.json): 12 checked in code, 7 by an LLM judge. */
export const PolicyRuleSchema = z.object({
  id: z.string().regex(/^\d{3}$/),
  tag: z.string(),
  check: z.enum(['code', 'llm']),
  section: z.string(),
  text: z.string(),
  raw_wiki_paragraph: z.string(),
  shares_wiki_paragraph_with: z.array(z.string()).nullable(),
  related_tools: z.array(z.string()),
  llm_judge: z.object({ evaluated_when: z.string(), appended_to_policy_text: z.string().nullable() }).nullable(),
});
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

let cached: PolicyRule[] | undefined;
export function loadPolicyRules(): PolicyRule[] {
  if (!cached) {
    const path = carbenchPath('policy_rules.json');
    cached = parseOrThrow(z.array(PolicyRuleSchema.passthrough()), JSON.parse(readFileSync(path, 'utf8')), path);
  }
  return cached;
}

export const CODE_CHECKED_RULES = ['005', '009', '010', '011', '013', '014', '016', '017', '018', '019', '023', '024'] as const;
export const LLM_JUDGED_RULES = ['002', '004', '007', '008', '012', '021', '022'] as const;

export interface PolicyViolation {
  rule: string;
  message: string;
}

/** PE.evaluate_aut's post-hoc trajectory scan (rules 005, 009, 010, 011, 013, 014, 018-b); see policy_rules.json. */
export function scanCodePolicies(messages: readonly TrajectoryMessage[], finalState: DynamicState): PolicyViolation[] {
  const out: PolicyViolation[] = [];
  const earlier = new Set<string>();
  const NAV_EDITS = new Set(['navigation_add_one_waypoint', 'navigation_replace_one_waypoint', 'navigation_replace_final_destination']);
  toolSteps(messages).forEach((step, stepIndex) => {
    const here = new Set(step.toolCalls.map((c) => c.name));
    for (const call of step.toolCalls) {
      const a = (call.arguments && typeof call.arguments === 'object' ? call.arguments : {}) as Record<string, unknown>;
      const where = `step ${stepIndex + 1}, ${call.name}(${JSON.stringify(a)})`;
      if (call.name === 'open_close_sunroof' && typeof a.percentage === 'number' && a.percentage !== 0) {
        if (finalState.sunshade_position < a.percentage && !here.has('open_close_sunshade'))
          out.push({ rule: '005', message: `${where}: the sunshade ends at ${finalState.sunshade_position}% (below the sunroof's ${a.percentage}%) and was not opened in the same step` });
        if (!earlier.has('get_weather')) out.push({ rule: '009', message: `${where}: the weather was not checked (get_weather) in an earlier step` });
      }
      if (call.name === 'set_window_defrost' && a.on === true && (a.defrost_window === 'FRONT' || a.defrost_window === 'ALL')) {
        const checked = earlier.has('get_climate_settings') || (earlier.has('set_fan_speed') && earlier.has('set_fan_airflow_direction') && earlier.has('set_air_conditioning'));
        if (!checked) out.push({ rule: '010', message: `${where}: the climate settings were not checked or set in an earlier step` });
        if (finalState.fan_speed < 2 || !finalState.fan_airflow_direction.includes('WINDSHIELD') || !finalState.air_conditioning)
          out.push({ rule: '010', message: `${where}: final state fan_speed ${finalState.fan_speed}, airflow ${finalState.fan_airflow_direction}, AC ${finalState.air_conditioning}; defrost needs fan ≥ 2, WINDSHIELD airflow and AC on` });
      }
      if (call.name === 'set_air_conditioning' && a.on === true) {
        const missing =
          !earlier.has('get_climate_settings') &&
          !(earlier.has('open_close_window') && earlier.has('set_fan_speed')) &&
          (earlier.has('get_vehicle_window_positions') || earlier.has('open_close_window'));
        if (missing) out.push({ rule: '011', message: `${where}: windows and fan were not checked/handled in an earlier step` });
        const windows = [finalState.window_driver_position, finalState.window_passenger_position, finalState.window_driver_rear_position, finalState.window_passenger_rear_position];
        if (windows.some((w) => w > 20) || finalState.fan_speed === 0)
          out.push({ rule: '011', message: `${where}: final state windows ${windows.join('/')}%, fan_speed ${finalState.fan_speed}; AC needs windows ≤ 20% and the fan on` });
      }
      if (call.name === 'set_fog_lights' && a.on === true) {
        if (!(earlier.has('get_exterior_lights_status') || (earlier.has('set_head_lights_low_beams') && earlier.has('set_head_lights_high_beams'))))
          out.push({ rule: '013', message: `${where}: the headlights were not checked (get_exterior_lights_status) in an earlier step` });
        if (!finalState.head_lights_low_beams || finalState.head_lights_high_beams)
          out.push({ rule: '013', message: `${where}: final state low beams ${finalState.head_lights_low_beams}, high beams ${finalState.head_lights_high_beams}; fog lights need low on, high off` });
      }
      if (call.name === 'set_head_lights_high_beams' && a.on === true) {
        if (!(earlier.has('get_exterior_lights_status') || earlier.has('set_fog_lights')))
          out.push({ rule: '014', message: `${where}: the fog lights were not checked in an earlier step` });
        if (finalState.fog_lights) out.push({ rule: '014', message: `${where}: fog lights are on in the final state` });
      }
    }
    if (step.toolCalls.filter((c) => NAV_EDITS.has(c.name)).length > 1)
      out.push({ rule: '018', message: `step ${stepIndex + 1}: more than one navigation edit in the same step (TECH-AUT-POL:018)` });
    for (const name of here) earlier.add(name);
  });
  return out;
}

/** Which LLM-judged paragraphs apply to a trajectory (RC:208-299 gating); 008 carries the shared 008/009 line. */
export function applicableJudgedRules(messages: readonly TrajectoryMessage[], finalState: DynamicState): string[] {
  const called = new Set(toolSteps(messages).flatMap((s) => s.toolCalls.map((c) => c.name)));
  const out: string[] = ['002'];
  if (['send_email', 'open_close_trunk_door', 'set_head_lights_high_beams'].some((t) => called.has(t))) out.push('004');
  if (called.has('open_close_window')) out.push('007');
  if (called.has('open_close_sunroof') || called.has('set_fog_lights')) out.push('008');
  if (called.has('set_climate_temperature') && Math.abs(finalState.climate_temperature_driver - finalState.climate_temperature_passenger) > 3) out.push('012');
  if (called.has('get_routes_from_start_to_destination')) out.push('021', '022');
  return out;
}

/** The paragraph text the judge is given for a rule (tags kept, the extra sentence appended), scoring.md §2.5. */
export function judgedParagraph(ruleId: string): string {
  const rule = loadPolicyRules().find((r) => r.id === ruleId);
  if (!rule || rule.check !== 'llm') throw new Error(`policy rule ${ruleId} is not an LLM-judged rule`);
  return rule.raw_wiki_paragraph.replace(/^- /, '') + (rule.llm_judge?.appended_to_policy_text ?? '');
}
