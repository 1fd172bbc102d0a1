import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { CampaignConfigSchema } from '../../src/kinds/dialogue/config.ts';
import { FactAnnotationFormSchema } from '../../src/kinds/manual-qa/results.ts';
import { ManualQaConfigSchema } from '../../src/kinds/manual-qa/config.ts';
import { SuiteCampaignConfigSchema } from '../../src/kinds/suite/suite-kind.ts';
import { LiveSessionConfigSchema } from '../../src/kinds/live/config.ts';
import { CAMPAIGN_KINDS } from '../../src/kinds/registry.ts';
import { ToolAgentsConfigSchema } from '../../src/kinds/tool-agents/config.ts';
import { RatingFormSchema } from '../../src/kinds/dialogue/ratings.ts';
import {
  EndSessionBodySchema,
  PinBodySchema,
  ResumeCampaignBodySchema,
  SessionContextBodySchema,
  SessionTurnBodySchema,
  StartCampaignBodySchema,
  StartSessionBodySchema,
  StopCampaignBodySchema,
  ValidateConfigBodySchema,
} from '../../src/server/api-schemas.ts';
import { StartConformanceBodySchema } from '../../src/server/conformance-runs.ts';
import { RunPinnedSuiteBodySchema } from '../../src/server/pinned-suites.ts';
import { GenerateTestSetBodySchema } from '../../src/server/manual-testsets.ts';
import { stringFields } from '../helpers/string-fields.ts';
import { CONFIGS_DIR, startHarness, type Harness } from './helpers.ts';

/**
 * The bench app's one path policy (src/server/path-policy.ts), checked at every entry point. Both lists are
 * derived, so a new one cannot be missed: the routes from the server's route table, the fields from the zod
 * schemas of every campaign kind and of the live session (each text field is either a file, with an example
 * the app must refuse, or named below as not a file).
 */

/** Text fields that name no file: names, hosts, environment variables, audio devices (PulseAudio names), CAN interfaces, dates. */
const NOT_FILES = new Set([
  'name', 'description', 'assistantFamily', 'seedIds[]', 'taskIds[]', 'dates[]', 'timeWindow.from', 'timeWindow.to',
  'headUnit.acoustic.input', 'headUnit.acoustic.output', 'headUnit.apiKeyEnv', 'headUnit.baseUrl', 'headUnit.build', 'headUnit.host', 'headUnit.model', 'headUnit.systemPrompt', 'headUnit.tokenEnv',
  'headUnit.bus.transport.iface', 'vehicle.transport.iface', 'vehicle.observe.transport.iface',
  'llm.allowedHosts[]', 'llm.keepAlive', 'llm.ollamaHost',
  'voice.link.input', 'voice.link.output', 'voice.link.loopbackInput',
  'agent.host', 'agent.tokenEnv',
  'context.date', 'context.time', 'context.district', 'context.city',
]);

const OUT = '/etc/icabench-outside';
const SCENARIO = { scenario: 'urban' };
/** For each field that names a file: a config change that points it outside the allowed folders, and the field the refusal names. */
type FileExamples = Record<string, { change: Record<string, unknown>; refused: string }>;
const BUS_FILES: FileExamples = {
  'headUnit.bus.transport': { change: { headUnit: { type: 'reference', bus: { transport: 'candump:/tmp/outside-frames.log' } } }, refused: 'headUnit.bus.transport' },
  'headUnit.bus.transport.path': { change: { headUnit: { type: 'reference', bus: { transport: { kind: 'candump', path: '/tmp/outside-frames.log' } } } }, refused: 'headUnit.bus.transport' },
  'headUnit.bus.mapping': { change: { headUnit: { type: 'reference', bus: { transport: 'socketcan:vcan0', mapping: `${OUT}.yaml` } } }, refused: 'headUnit.bus.mapping' },
};
const JUDGE_FILES: FileExamples = {
  'judges[]': { change: { judges: ['oracle', `gguf:${OUT}.gguf`] }, refused: 'judges.1' },
  'judges[].model': { change: { judges: [{ technique: 'sc-5', model: `gguf:${OUT}.gguf` }] }, refused: 'judges.0' },
  'judges[].models[]': { change: { judges: [{ technique: 'ar', models: ['gguf:../models/a.gguf', `gguf:${OUT}.gguf`] }] }, refused: 'judges.0' },
};
const VEHICLE_FILES: FileExamples = {
  'vehicle.scenario': { change: { vehicle: { scenario: `${OUT}.yaml` } }, refused: 'vehicle.scenario' },
  'vehicle.mapping': { change: { vehicle: { ...SCENARIO, mapping: `${OUT}.yaml` } }, refused: 'vehicle.mapping' },
  'vehicle.transport': { change: { vehicle: { ...SCENARIO, transport: 'candump:/tmp/outside-frames.log' } }, refused: 'vehicle.transport' },
  'vehicle.transport.path': { change: { vehicle: { ...SCENARIO, transport: { kind: 'slcan', path: '/etc/passwd' } } }, refused: 'vehicle.transport' },
  'vehicle.observe.transport': { change: { vehicle: { ...SCENARIO, observe: { transport: `replay:${OUT}.log` } } }, refused: 'vehicle.observe.transport' },
  'vehicle.observe.transport.path': { change: { vehicle: { ...SCENARIO, observe: { transport: { kind: 'candump', path: `${OUT}.log` } } } }, refused: 'vehicle.observe.transport' },
  'vehicle.observe.mapping': { change: { vehicle: { ...SCENARIO, observe: { transport: 'socketcan:vcan0', mapping: `${OUT}.yaml` } } }, refused: 'vehicle.observe.mapping' },
};
const CACHE: FileExamples = { 'llm.cacheDir': { change: { llm: { cacheDir: '/tmp/outside-cache' } }, refused: 'llm.cacheDir' } };

/** Every campaign kind: its schema, the shipped config the examples change, and its file fields. */
const KINDS: Array<{ kind: string; schema: z.ZodType; config: string; files: FileExamples }> = [
  {
    kind: 'dialogue',
    schema: CampaignConfigSchema,
    config: 'quickstart.yaml',
    files: {
      seeds: { change: { seeds: `${OUT}.yaml` }, refused: 'seeds' },
      world: { change: { world: `${OUT}.yaml` }, refused: 'world' },
      simulator: { change: { simulator: `gguf:${OUT}.gguf` }, refused: 'simulator' },
      'voice.acoustics.noise.wav': { change: { voice: { acoustics: { noise: { wav: `${OUT}.wav` } } } }, refused: 'voice.acoustics.noise.wav' },
      'voice.library': { change: { voice: { library: OUT } }, refused: 'voice.library' },
      'voice.replyRecognizer.modelDir': { change: { voice: { replyRecognizer: { engine: 'whisper', modelDir: OUT } } }, refused: 'voice.replyRecognizer.modelDir' },
      'diversity.embeddingModel': { change: { diversity: { embeddingModel: OUT } }, refused: 'diversity.embeddingModel' },
      ...BUS_FILES,
      ...JUDGE_FILES,
      ...VEHICLE_FILES,
      ...CACHE,
    },
  },
  {
    kind: 'manual-qa',
    schema: ManualQaConfigSchema,
    config: 'manual-qa.yaml',
    files: {
      'manual[]': { change: { manual: [`${OUT}.md`] }, refused: 'manual.0' },
      testSet: { change: { testSet: `${OUT}.jsonl` }, refused: 'testSet' },
      embeddingModel: { change: { embeddingModel: OUT }, refused: 'embeddingModel' },
      'generate.model': { change: { generate: { model: `gguf:${OUT}.gguf` } }, refused: 'generate.model' },
      'judges[]': JUDGE_FILES['judges[]'],
      ...BUS_FILES,
      ...CACHE,
    },
  },
  {
    kind: 'tool-agents',
    schema: ToolAgentsConfigSchema,
    config: 'carbench-train.yaml',
    files: {
      'tasks[]': { change: { tasks: [`${OUT}.json`] }, refused: 'tasks.0' },
      simulator: { change: { simulator: `gguf:${OUT}.gguf` }, refused: 'simulator' },
      'judges[]': { change: { judges: ['rule', `gguf:${OUT}.gguf`] }, refused: 'judges.1' },
      'agent.model': { change: { agent: { type: 'endpoint', model: `gguf:${OUT}.gguf` } }, refused: 'agent.model' },
      ...CACHE,
    },
  },
  {
    kind: 'suite',
    schema: SuiteCampaignConfigSchema,
    config: 'suite-basics.yaml',
    files: { 'suites[]': { change: { suites: [`${OUT}.yaml`] }, refused: 'suites.0' }, ...BUS_FILES, ...JUDGE_FILES, ...CACHE },
  },
];
const LIVE_FILES: FileExamples = { ...BUS_FILES, ...JUDGE_FILES, ...VEHICLE_FILES, ...CACHE };

function merged(base: unknown, change: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(change)) return change;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(change)) out[key] = key in base ? merged(base[key], value) : value;
  return out;
}
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every field of `schema` that takes text is classified: a file (with an example) or not a file. */
function expectClassified(schema: z.ZodType, files: FileExamples): void {
  const fields = stringFields(schema);
  expect(fields.filter((f) => !NOT_FILES.has(f) && !(f in files)), 'text fields neither a file with an example nor named as not a file').toEqual([]);
  expect(Object.keys(files).filter((f) => !fields.includes(f)), 'examples of fields the schema does not have').toEqual([]);
}

let h: Harness;
const launched: string[] = [];
beforeAll(async () => {
  // a config the policy lets through would be launched: recorded, and the test fails on it
  h = await startHarness({
    launcher: async ({ loaded }) => {
      launched.push(loaded.config.name);
      throw new Error('launched');
    },
  });
});
afterAll(() => h.close());

describe('every config field that names a file obeys the path policy', () => {
  for (const { kind, schema, config, files } of KINDS) {
    it(`${kind}: each file field outside the allowed folders is refused at campaign start with path_not_allowed, naming the field`, async () => {
      expectClassified(schema, files);
      const base = parse(readFileSync(join(CONFIGS_DIR, config), 'utf8')) as unknown;
      for (const [field, { change, refused }] of Object.entries(files)) {
        const text = JSON.stringify(merged(base, change));
        const res = await h.api('/api/campaign/start', { body: { configName: config, text } });
        expect([field, res.status, res.json.error?.code]).toEqual([field, 400, 'path_not_allowed']);
        expect(res.json.error.fields.map((f: { path: string }) => f.path), field).toEqual([refused]);
      }
      expect(launched).toEqual([]);
    });
  }

  it('covers every campaign kind of the registry (a live session\'s config is checked where sessions start)', () => {
    expect([...KINDS.map((k) => k.kind), 'live'].sort()).toEqual([...CAMPAIGN_KINDS].sort());
  });

  it('a live session: each file field outside the allowed folders is refused with the same answer before the session starts', async () => {
    expectClassified(LiveSessionConfigSchema, LIVE_FILES);
    for (const [field, { change, refused }] of Object.entries(LIVE_FILES)) {
      const res = await h.api('/api/session/start', { body: { config: change } });
      expect([field, res.status, res.json.error?.code]).toEqual([field, 400, 'path_not_allowed']);
      expect(res.json.error.fields.map((f: { path: string }) => f.path), field).toEqual([refused]);
    }
    expect((await h.api('/api/session')).json.active).toBe(false);
    expect(launched).toEqual([]);
  });
});

/** What each route's request may name: `body` its schema; `files` how the files it names are checked. */
const ROUTES: Record<string, { body?: z.ZodType; files: 'none' | 'campaign config' | 'stored config' | 'live session config' }> = {
  'GET /api/health': { files: 'none' },
  'GET /api/rig': { files: 'none' },
  'GET /api/conformance': { files: 'none' },
  // the report goes to <workspace>/conformance/<timestamp>/: nothing in the request names a file
  'POST /api/conformance/start': { body: StartConformanceBodySchema, files: 'none' },
  'GET /api/conformance/:id': { files: 'none' },
  'GET /api/configs': { files: 'none' },
  'GET /api/configs/:name': { files: 'none' },
  'POST /api/configs/validate': { body: ValidateConfigBodySchema, files: 'campaign config' },
  'GET /api/campaign': { files: 'none' },
  'POST /api/campaign/start': { body: StartCampaignBodySchema, files: 'campaign config' },
  'POST /api/campaign/resume': { body: ResumeCampaignBodySchema, files: 'stored config' },
  'GET /api/session': { files: 'none' },
  'POST /api/session/start': { body: StartSessionBodySchema, files: 'live session config' },
  'POST /api/session/turn': { body: SessionTurnBodySchema, files: 'none' },
  'POST /api/session/context': { body: SessionContextBodySchema, files: 'none' },
  'POST /api/session/end': { body: EndSessionBodySchema, files: 'none' },
  'POST /api/campaign/stop': { body: StopCampaignBodySchema, files: 'none' },
  'GET /api/runs': { files: 'none' },
  'GET /api/runs/:id': { files: 'none' },
  'GET /api/runs/:id/summary\\.json': { files: 'none' },
  // the artifact's file is the one the run stored; the request only names it among the conversation's artifacts
  // the suite goes to <workspace>/suites/: nothing in the request names a file
  'POST /api/runs/:id/conversations/:key/pin': { body: PinBodySchema, files: 'none' },
  'GET /api/compare': { files: 'none' },
  'GET /api/runs/:id/outputs': { files: 'none' },
  // a kind's own routes (its view, src/run/kind-view.ts: the conversations, manual and tool-agents routes above) name no file
  'GET /api/runs/:id/(?<rest>.+)': { files: 'none' },
  'POST /api/runs/:id/(?<rest>.+)': { body: z.union([RatingFormSchema, FactAnnotationFormSchema]), files: 'none' },
  // the file is one of the run's outputs, looked up by name among them
  'GET /api/runs/:id/outputs/:name': { files: 'none' },
  // `suite` is a file name in the pinned suites' folder; the suite campaign built on it starts through the same policy
  'POST /api/suites/run': { body: RunPinnedSuiteBodySchema, files: 'campaign config' },
  // `configName` is a bench config read through the catalog (its files checked by the policy); the test set goes to <workspace>/testsets/
  'POST /api/manual/testsets': { body: GenerateTestSetBodySchema, files: 'campaign config' },
};
/** Text fields of request bodies that name no file (a config's text is checked as a config, above). */
const REQUEST_TEXT = new Set(['host', 'token', 'text', 'configName', 'runId', 'rater', 'comment', 'note', 'notes', 'itemId', 'factId']);

function routeName(method: string, pattern: RegExp): string {
  return `${method} ${pattern.source.replace(/^\^\\\/|\$$/g, '/').replace(/\\\//g, '/').replace(/\(\?<(\w+)>\[\^\/\]\+\)/g, ':$1').replace(/\/$/, '').replace(/^\//, '/')}`;
}

describe('every API route is checked against the path policy', () => {
  it('lists each route of the server with what its request may name, and its body schema names no other file', () => {
    const routes = h.server.routes.map((r) => routeName(r.method, r.pattern));
    expect(routes.filter((r) => !(r in ROUTES)), 'routes this test does not classify').toEqual([]);
    expect(Object.keys(ROUTES).filter((r) => !routes.includes(r)), 'classified routes the server no longer has').toEqual([]);
    for (const [route, { body, files }] of Object.entries(ROUTES)) {
      if (route.startsWith('POST')) expect(body, `${route}: its body schema`).toBeDefined();
      if (body && files === 'none') expect(stringFields(body).filter((f) => !REQUEST_TEXT.has(f.replace(/^.*\./, ''))), route).toEqual([]);
    }
  });

  it('answers 4xx, never a file, for a path parameter that walks out of its folder', async () => {
    const traversal = encodeURIComponent('../../../../etc/passwd');
    for (const { method, pattern } of h.server.routes) {
      if (!pattern.source.includes('(?<')) continue;
      const path = routeName(method, pattern).split(' ')[1].replace(/\\\./g, '.').replace(/:\w+/g, traversal);
      const res = await h.api(path, method === 'POST' ? { body: {} } : {});
      expect([path, res.status >= 400 && res.status < 500], path).toEqual([path, true]);
      expect(JSON.stringify(res.json)).not.toContain('root:x:0:0');
    }
  });
});
