import { MAX_DRIVE_MIN, RULE_CATEGORIES, isOpenAt, ratingSatisfies, type Pair, type Preferences, type RuleCategory } from './dataset.ts';
import { canonicalCuisine, readPreferences } from './lexicon.ts';

export interface OracleVerdict {
  /** true when no rule is violated */
  fits: boolean;
  violations: RuleCategory[];
  /** rules the oracle could not check because the utterance did not yield that preference */
  unchecked: RuleCategory[];
  /** where the preferences came from */
  source: 'preferences' | 'utterance';
}

/**
 * The deterministic rule oracle: the five rules of the paper's judge prompt.
 * location: more than 15 minutes' drive; time: closed at the request time on the request's weekday;
 * cuisine: a different cuisine; cost: a different cost level; rating: the stated relation fails
 * ("around" = within ±0.2). Uses the structured preferences when present, else reads the utterance.
 */
export function oracleVerdict(pair: Pair): OracleVerdict {
  const prefs: Partial<Preferences> = pair.user.preferences ?? readPreferences(pair.user.utterance);
  const { system } = pair;
  const checks: Record<RuleCategory, boolean | null> = {
    location: system.duration_min > MAX_DRIVE_MIN,
    time: !isOpenAt(system.opening_hours, pair.user.date, pair.user.time),
    cuisine: prefs.cuisine === undefined ? null : canonicalCuisine(system.cuisine_type).toLowerCase() !== canonicalCuisine(prefs.cuisine).toLowerCase(),
    cost: prefs.cost === undefined ? null : system.cost !== prefs.cost,
    rating: prefs.rating === undefined ? null : !ratingSatisfies(system.rating, prefs.rating.relation, prefs.rating.value),
  };
  const violations = RULE_CATEGORIES.filter((c) => checks[c] === true);
  const unchecked = RULE_CATEGORIES.filter((c) => checks[c] === null);
  return { fits: violations.length === 0, violations, unchecked, source: pair.user.preferences ? 'preferences' : 'utterance' };
}

/** One sentence per violated rule, used as the worked reasoning in the CoT examples. */
export function explainVerdict(pair: Pair, verdict: OracleVerdict): string {
  const prefs: Partial<Preferences> = pair.user.preferences ?? readPreferences(pair.user.utterance);
  const s = pair.system;
  const parts = [
    `The drive takes ${s.duration_min} minutes, ${s.duration_min > MAX_DRIVE_MIN ? 'more' : 'not more'} than ${MAX_DRIVE_MIN}.`,
    `At ${pair.user.time} on ${pair.user.date} the place is ${verdict.violations.includes('time') ? 'closed' : 'open'}.`,
    prefs.cuisine ? `The user wants ${prefs.cuisine} food and the place serves ${s.cuisine_type}.` : '',
    prefs.cost ? `The user wants a ${prefs.cost} cost level and the place is ${s.cost}.` : '',
    prefs.rating ? `The user wants a rating ${prefs.rating.relation.replace('_', ' ')} ${prefs.rating.value} and the place has ${s.rating}.` : '',
    verdict.fits ? 'Every constraint is met.' : `Violated: ${verdict.violations.join(', ')}.`,
  ];
  return parts.filter(Boolean).join(' ');
}
