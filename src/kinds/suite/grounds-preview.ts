import type { Target } from '../../domain/targets.ts';
import { turnGrounds } from '../../judge/grounds.ts';
import { scriptedUtterance } from '../../simulator/script.ts';
import type { LoadedSuite } from '../../suite/format.ts';

/**
 * How many of a suite's turns the oracle will have no grounds for (src/judge/grounds.ts), read before it runs
 * the way the scripted user reads them: turns whose words the bench does not recognise, with no `means` and no
 * expected actions. Unless the unit answers them with a fallback or their reference reply decides the answer
 * (src/judge/reference.ts, known only once the reply comes), such turns are undecided and their
 * conversations inconclusive (needs review) without a model judge; `icabench suite import` says so up front.
 */
export function turnsWithoutGrounds(suite: LoadedSuite): { turns: number; withoutGrounds: number } {
  let turns = 0;
  let withoutGrounds = 0;
  for (const { conversation, turns: script } of suite.scripts) {
    const targets: Target[] = conversation.targets.map((t) => ({ ...t, status: 0, introducedTurn: null, completedTurn: null }));
    for (const turn of script) {
      const utterance = scriptedUtterance(turn, targets);
      targets.push(...utterance.annotation.introduces.map((i): Target => ({ ...i, status: 0, introducedTurn: null, completedTurn: null })));
      turns += 1;
      if (turnGrounds({ utterance }).length === 0) withoutGrounds += 1;
    }
  }
  return { turns, withoutGrounds };
}
