/**
 * A child process of test/run/memory-bound.test.ts (run with `node --expose-gc --import tsx`): runs the offline
 * quickstart campaign with N conversations, C at once, in a fresh store, and counts how many of the run's
 * per-conversation objects are still reachable after a full garbage collection. Each object the run hands out in
 * its events (a conversation's spec when it starts, each turn record, the finished result), and each planned item
 * as the kind made it, is watched through a WeakRef; nothing here keeps one alive. Counted twice: in the middle of the run (when conversation N/2 has
 * finished, from a fresh task so no caller's stack holds one) and after the run has returned. Prints one JSON line.
 *
 *   node --expose-gc --import tsx test/helpers/retained-run.ts N C
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCampaignConfig } from '../../src/kinds/dialogue/config.ts';
import { ResultStore } from '../../src/store/store.ts';
import { dialogueKind } from '../../src/kinds/dialogue/kind.ts';
import { runCampaign } from './run-kinds.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('retained-run: run with node --expose-gc');
const [conversations, concurrency] = process.argv.slice(2).map(Number);

const watched = { planned: [] as WeakRef<object>[], spec: [] as WeakRef<object>[], turn: [] as WeakRef<object>[], result: [] as WeakRef<object>[] };
type Counts = Record<keyof typeof watched, number>;
const live = (): Counts => {
  gc();
  const count = (refs: WeakRef<object>[]) => refs.filter((ref) => ref.deref() !== undefined).length;
  return { planned: count(watched.planned), spec: count(watched.spec), turn: count(watched.turn), result: count(watched.result) };
};

const folder = mkdtempSync(join(tmpdir(), 'icabench-retained-'));
const store = ResultStore.open(join(folder, 'icabench.db'));
const campaign = loadCampaignConfig('bench-configs/quickstart.yaml');
campaign.config.conversations = conversations;
campaign.config.concurrency = concurrency;
let finished = 0;
let middle: Promise<Counts> | null = null;
let maxTurns = 0;
try {
  const run = await runCampaign(campaign, {
    store,
    // the plan as the kind makes it, before it is stored: the run lets it go once it is in the store
    kind: {
      ...dialogueKind,
      plan: async (loaded, log) => {
        const plan = await dialogueKind.plan(loaded, log);
        for (const { item } of plan) watched.planned.push(new WeakRef(item));
        return plan;
      },
    },
    onEvent: (event) => {
      if (event.type === 'conversation_started') watched.spec.push(new WeakRef(event.spec));
      if (event.type === 'turn') watched.turn.push(new WeakRef(event.turn));
      if (event.type === 'conversation_finished') {
        watched.result.push(new WeakRef(event.result));
        maxTurns = Math.max(maxTurns, event.result.turns.length);
        // a fresh task: this listener's arguments are out of reach by then
        if (++finished === Math.ceil(conversations / 2)) middle = new Promise((resolve) => setImmediate(() => resolve(live())));
      }
    },
  });
  const atMiddle = await middle;
  const afterRun = live();
  const sizes = Object.fromEntries(Object.entries(watched).map(([name, refs]) => [name, refs.length]));
  process.stdout.write(`${JSON.stringify({ done: run.done, watched: sizes, maxTurns, atMiddle, afterRun })}\n`);
} finally {
  store.close();
  rmSync(folder, { recursive: true, force: true });
}
