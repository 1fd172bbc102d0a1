// Child process for the crash test: saves conversations as fast as it can until it is killed.
import { ResultStore } from '../../src/store/store.ts';
import { result } from './fixtures.ts';

const [dbPath, runId] = process.argv.slice(2);
const store = ResultStore.open(dbPath);
const text = 'x'.repeat(2_000);
for (const spec of store.remainingSpecs(runId)) {
  const turns = Array.from({ length: 40 }, (_, i) => ({
    strategy: i % 2 ? ('constraint_stacking' as const) : null,
    labels: i % 3 ? ['constraint_missed' as const] : [],
    utterance: `${spec.key} turn ${i} ${text}`,
  }));
  store.saveConversation(runId, result(spec.key, turns, { spec }));
  process.stdout.write(`saved ${spec.key}\n`);
}
