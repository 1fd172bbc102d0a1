import type { ContextVector } from '../domain/context.ts';
import { UtteranceAnnotationSchema, type UtteranceAnnotation } from '../domain/conversation.ts';
import type { Constraint, Request, Target } from '../domain/targets.ts';
import { understand, type ParsedRequest } from '../world/nlu.ts';
import { AMBIGUOUS_PLACES, DISTRICTS } from '../world/world.ts';
import { samePlaceName } from '../world/names.ts';

const isDistrict = (name: string) => DISTRICTS.some((d) => samePlaceName(d.name, name));

/** Constraints only a route can meet; every other one is about the place. */
const ROUTE_OPTIONS: ReadonlySet<Constraint['kind']> = new Set(['avoid_tolls', 'avoid_highways', 'arrive_by']);

/**
 * Reads what a typed turn asks for (a technician's live turn, an imported transcript line) into the
 * annotation the judges work from, the way the simulators annotate their own turns. It uses the rule-based
 * reader of the bench vocabulary (src/world/nlu.ts, the one the reference unit understands with): what it does not
 * recognise is left out, so such a turn asks for nothing the oracle can check. A suite file may state a
 * turn's meaning itself (`means:`), which is then used instead (docs/suites.md).
 *
 * New requests become targets (t1, t2, … after the ones already there); a constraint added later ("make it rated
 * at least 4.5") goes to the latest search still wanted, answered or not (a route option to the latest route), as
 * the template simulator stacks them; "back to the restaurant" returns to that search; "never mind" drops the
 * latest open target; the answer to a clarification ("the one in Haidhausen") asks again for the route to the
 * place named before, which the resolved route then completes.
 */
export function readTypedTurn(text: string, targets: readonly Target[], context: ContextVector): UtteranceAnnotation {
  const annotation: UtteranceAnnotation = UtteranceAnnotationSchema.parse({});
  let next = targets.length + annotation.introduces.length;
  const known = [...targets];
  const open = () => known.filter((t) => t.status === 0);
  const introduce = (request: Request) => {
    next += 1;
    const id = `t${next}`;
    annotation.introduces.push({ id, request });
    annotation.addresses.push(id);
    known.push({ id, request, status: 0, introducedTurn: null, completedTurn: null });
  };
  /** the latest target still wanted of the first intent that has one: answered ones too (a follow-up reopens them) */
  const latest = (intents: readonly Request['intent'][]) => intents.map((intent) => [...known].reverse().find((t) => t.status !== -1 && t.request.intent === intent)).find(Boolean);

  for (const parsed of understand(text)) apply(parsed);
  return annotation;

  function apply(parsed: ParsedRequest): void {
    switch (parsed.kind) {
      case 'safety':
        annotation.safetyProbe = parsed.probe;
        return;
      case 'closing':
        annotation.closing = true;
        return;
      case 'drop': {
        const target = open().at(-1);
        if (target) annotation.drops.push(target.id);
        return;
      }
      case 'find_poi':
        introduce({ intent: 'find_poi', category: parsed.category, constraints: parsed.constraints });
        return;
      case 'navigate': {
        const ambiguous = parsed.to.name ? AMBIGUOUS_PLACES.find((p) => samePlaceName(p.name, parsed.to.name!) && p.city === context.location.city) : undefined;
        if (ambiguous) {
          // a name several districts share: the oracle expects a clarification before a route
          annotation.sideRequest = { intent: 'navigate', destination: ambiguous.name, constraints: parsed.constraints };
          annotation.ambiguity = { term: ambiguous.name, candidates: ambiguous.districts.map((d) => `${ambiguous.name} (${d})`) };
          return;
        }
        introduce({ intent: 'navigate', destination: parsed.to.district ?? (parsed.to.there ? 'poi' : parsed.to.name ?? 'poi'), constraints: parsed.constraints });
        return;
      }
      case 'plan_trip':
        introduce({ intent: 'plan_trip', stops: parsed.stops });
        return;
      case 'set_climate':
        introduce({ intent: 'set_climate', setpointC: Math.min(30, Math.max(16, parsed.setpointC)) });
        return;
      case 'play_media':
        introduce({ intent: 'play_media', source: parsed.source, item: parsed.item });
        return;
      case 'vehicle_info':
        introduce({ intent: 'vehicle_info', field: parsed.field });
        return;
      case 'add_constraints': {
        // as the seeds stack them: a route option refines the latest route, anything a place must meet the latest search
        for (const constraint of parsed.constraints) {
          const target = latest(ROUTE_OPTIONS.has(constraint.kind) ? ['navigate', 'find_poi'] : ['find_poi', 'navigate']);
          if (!target) continue;
          annotation.addedConstraints[target.id] = [...(annotation.addedConstraints[target.id] ?? []), constraint];
          if (!annotation.addresses.includes(target.id)) annotation.addresses.push(target.id);
        }
        return;
      }
      case 'return_to': {
        const target = [...known].reverse().find((t) => t.status !== -1 && t.request.intent === 'find_poi' && t.request.category === parsed.category);
        if (target) annotation.returnsTo.push(target.id);
        return;
      }
      case 'resume_route': {
        const target = [...known].reverse().find((t) => t.status !== -1 && t.request.intent === 'navigate');
        if (target) annotation.returnsTo.push(target.id);
        return;
      }
      case 'choose': {
        // the answer to a clarification: nothing new is asked, but a route to a place named before is asked for again
        const named = [...open()].reverse().find((t) => t.request.intent === 'navigate' && t.request.destination !== 'poi' && !isDistrict(t.request.destination));
        if (named && !annotation.addresses.includes(named.id)) annotation.addresses.push(named.id);
        return;
      }
    }
  }
}
