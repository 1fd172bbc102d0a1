import { describe, expect, it } from 'vitest';
import { loadTaskFile, type Task } from '../../../src/toolenv/tasks.ts';
import { loadToolCatalog } from '../../../src/toolenv/catalog.ts';
import { ToolEnvironment } from '../../../src/toolenv/env.ts';
import { STATE_FIELDS } from '../../../src/toolenv/state.ts';
import { dataPath } from '../../helpers/repoData.ts';

const all = (): Task[] => ['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].flatMap((f) => loadTaskFile(dataPath(`carbench/${f}`)));
const byId = (id: string): Task => all().find((t) => t.task_id === id)!;

describe('tool environment', () => {
  it('has the 57 tools and the 31 state fields', () => {
    expect(loadToolCatalog()).toHaveLength(57);
    expect(STATE_FIELDS).toHaveLength(31);
    expect(STATE_FIELDS[0]).toBe('sunroof_position');
    expect(STATE_FIELDS.at(-1)).toBe('phone_numbers_called');
  });

  it('every one of the 57 tools executes successfully against the environment', () => {
    const ok = new Set<string>();
    for (const task of all()) {
      const env = ToolEnvironment.forTask(task, { applyRemovals: false });
      for (const a of task.actions) if (env.execute(a.name, a.kwargs).status === 'success') ok.add(a.name);
    }
    // tools no reference action uses, on a task with active navigation (base_34) and a charging stop (base_74)
    const nav = ToolEnvironment.forTask(byId('base_34'));
    const extra: Array<[string, unknown]> = [
      ['get_user_preferences', { preference_categories: { vehicle_settings: { climate_control: true } } }],
      ['calculate_math', { expression: '(3 + 4) * 2 ^ 2 / 7' }],
      ['calculate_datetime', { original_datetime: { year: 2025, month: 12, day: 31, hour: 23, minute: 30 }, times_to_add: [{ hours: 1, minutes: 45 }] }],
      ['think', { thought: 'plan' }],
      ['planning_tool', { command: 'create', plan_id: 'p', steps: [{ step_description: 'a', step_dependent_on: [] }] }],
      ['planning_tool', { command: 'mark_steps', plan_id: 'p', step_updates: [{ step_index: 0, step_status: 'completed' }] }],
      ['get_ambient_light_status_and_color', {}],
      ['get_car_color', {}],
      ['get_reading_lights_status', {}],
      ['get_steering_wheel_heating_level', {}],
      ['get_trunk_door_position', {}],
      ['set_reading_light', { position: 'ALL', on: false }],
      ['convert_route_distance_and_time', { route_id: 'rll_bel_buc_632742', time_minutes: 30 }],
      ['navigation_add_one_waypoint', { waypoint_id_to_add: 'loc_fra_178468', waypoint_id_before_new_waypoint: 'loc_rom_294918', route_id_leading_to_new_waypoint: nav.nav.routesBetween('loc_rom_294918', 'loc_fra_178468')![0].route_id }],
      ['delete_current_navigation', {}],
    ];
    for (const [name, args] of extra) {
      const out = nav.execute(name, args);
      expect(out.status, `${name}: ${out.output}`).toBe('success');
      ok.add(name);
    }
    const charging = ToolEnvironment.forTask(byId('base_74'));
    expect(charging.execute('calculate_charging_soc_by_time', { charging_station_id: 'poi_cha_127836', charging_station_plug_id: 'plg_cha_143855', start_state_of_charge: 20, charging_time: 30 }).status).toBe('success');
    ok.add('calculate_charging_soc_by_time');
    expect([...ok].sort()).toEqual(loadToolCatalog().map((t) => t.name).sort());
    expect(JSON.parse(nav.execute('calculate_math', { expression: '(3 + 4) * 2 ^ 2 / 7' }).output).result.result).toBe(4);
    expect(JSON.parse(nav.execute('calculate_datetime', { original_datetime: { year: 2025, month: 12, day: 31, hour: 23, minute: 30 }, times_to_add: [{ hours: 1, minutes: 45 }] }).output).result.new_datetime).toEqual({ year: 2026, month: 1, day: 1, hour: 1, minute: 15 });
  });

  it('sets state fields and rejects like CAR-bench: range errors count, structural errors do not', () => {
    const env = ToolEnvironment.forTask(byId('base_0'));
    expect(env.execute('open_close_window', { window: 'ALL', percentage: 40 }).status).toBe('success');
    expect([env.state.window_driver_position, env.state.window_passenger_rear_position]).toEqual([40, 40]);
    const range = env.execute('set_fan_speed', { level: 9 });
    expect(range.status).toBe('rejected');
    expect(range.executionError).toMatch(/^SetFanSpeed_000: value out of range: level: 9 is above the maximum 5/);
    const structural = env.execute('set_fan_speed', { speed: 2 });
    expect(structural.output).toMatch(/^Error: invalid arguments for set_fan_speed: .*level: required/);
    expect(env.execute('no_such_tool', {}).status).toBe('unknown_tool');
    expect(env.executionErrors).toHaveLength(1);
    expect(env.state.fan_speed).toBe(0);
  });

  it('records the runtime policy errors 024, 017, 019 and 016', () => {
    const env = ToolEnvironment.forTask(byId('base_0'));
    const wrongDay = env.execute('get_weather', { location_or_poi_id: 'loc_lux_222378', month: 2, day: 27, time_hour_24hformat: 12 });
    expect(wrongDay.executionError).toMatch(/AUT-POL:024/);
    expect(env.execute('navigation_delete_destination', { destination_id_to_delete: 'loc_x' }).executionError).toMatch(/AUT-POL:017/);
    expect(env.policyErrors.map((p) => p.rule)).toEqual(['024', '017']);
    const two = ToolEnvironment.forTask(byId('base_22'));
    expect(two.execute('navigation_delete_destination', { destination_id_to_delete: 'loc_col_464166' }).executionError).toMatch(/AUT-POL:019/);
    const fresh = ToolEnvironment.forTask(byId('base_72'));
    const route = fresh.nav.routesBetween('loc_fra_178468', 'loc_bon_490528')![0].route_id;
    expect(fresh.execute('set_new_navigation', { route_ids: [route] }).status).toBe('success');
    expect(fresh.policyErrors.map((p) => p.rule)).toEqual(['016']);
  });

  it('applies removed_part: tools hidden, parameters deleted, result fields "unknown"', () => {
    const tool = ToolEnvironment.forTask(byId('hallucination_0'));
    expect(tool.tools().map((t) => t.function.name)).not.toContain('open_close_sunshade');
    expect(tool.tools()).toHaveLength(56);
    const param = ToolEnvironment.forTask(byId('hallucination_6'));
    const ambient = param.tools().find((t) => t.function.name === 'set_ambient_lights')!.function.parameters;
    expect(Object.keys(ambient.properties!)).toEqual(['on']);
    expect(ambient.required).toEqual(['on']);
    const result = ToolEnvironment.forTask(byId('hallucination_16'));
    const positions = JSON.parse(result.execute('get_vehicle_window_positions', {}).output).result;
    expect(positions.window_driver_position).toBe('unknown');
    expect(positions.window_passenger_position).toBe('unknown');
    expect(typeof positions.window_driver_rear_position).toBe('number');
    const list = ToolEnvironment.forTask(byId('hallucination_36'));
    expect(JSON.parse(list.execute('get_routes_from_start_to_destination', { start_id: 'loc_mil_253463', destination_id: 'loc_pra_198238' }).output).result.routes).toBe('unknown');
  });

  it('the synthetic navigation db holds every referenced entity, deterministically', () => {
    const task = byId('base_84');
    const a = ToolEnvironment.forTask(task);
    const b = ToolEnvironment.forTask(task);
    const routes = a.nav.routesBetween('loc_war_429257', 'poi_cha_948882')!;
    expect(routes[0].route_id).toBe('rlp_war_cha_224861');
    expect(routes).toHaveLength(3);
    expect(routes).toEqual(b.nav.routesBetween('loc_war_429257', 'poi_cha_948882'));
    const found = JSON.parse(a.execute('search_poi_at_location', { location_id: 'loc_war_429257', category_poi: 'charging_stations' }).output).result.pois_found;
    expect(found.map((p: { id: string }) => p.id)).toContain('poi_cha_948882');
    expect(found.find((p: { id: string }) => p.id === 'poi_cha_948882').charging_plugs.map((p: { plug_id: string }) => p.plug_id)).toContain('plg_cha_947862');
    expect(JSON.parse(a.execute('get_location_id_by_location_name', { location: 'Ordino' }).output).status).toBe('FAILURE');
    expect(a.executionErrors).toEqual([]); // "not found" is an answer, not an execution error
  });

  it('gives referenced routes the roads, position and figures the instruction names', () => {
    const b84 = ToolEnvironment.forTask(byId('base_84'));
    const toHamburg = b84.nav.routesBetween('poi_cha_948882', 'loc_ham_166665')!;
    // "choose the second route option (the one via B432, B132)"
    expect(toHamburg[1]).toMatchObject({ route_id: 'rpl_cha_ham_429250', alias: ['second', 'fastest', 'shortest'] });
    expect(toHamburg[1].name_via).toMatch(/via B432, B132$/);
    const d48 = ToolEnvironment.forTask(byId('disambiguation_48'));
    expect(d48.nav.routesBetween('loc_bud_247915', 'loc_col_464166')![0]).toMatchObject({ route_id: 'rll_bud_col_288550', includes_toll: false, alias: ['first', 'fastest', 'shortest'] });
    expect(d48.nav.routes.get('rll_col_lux_460833')!.name_via).toMatch(/via L397, L496, L686$/);
    // "(810km, 10h via L135)" about the starting navigation
    expect(ToolEnvironment.forTask(byId('base_66')).nav.routes.get('rll_and_par_719022')).toMatchObject({ distance_km: 810, duration_hours: 10, duration_minutes: 0 });
  });

  it('never throws: odd arguments to every tool give a recorded status and a text output', () => {
    const env = ToolEnvironment.forTask(byId('base_34'));
    const odd: unknown[] = [{}, null, 'text', [], { percentage: -1 }, { route_ids: [] }, { location_id: 'poi_x', category_poi: 'bakery' }, { contact_ids: ['con_nobody'] }, { expression: '1/0' }, { command: 'get' }];
    for (const tool of loadToolCatalog()) {
      for (const args of odd) {
        const out = env.execute(tool.name, args);
        expect(['success', 'rejected', 'invalid']).toContain(out.status);
        expect(typeof out.output).toBe('string');
      }
    }
    expect(env.execute('calculate_math', { expression: '1/0' }).executionError).toMatch(/CalculateMath_001: cannot evaluate/);
  });
});
