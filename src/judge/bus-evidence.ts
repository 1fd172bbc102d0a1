import { carriedKey, describeObservedAction, type BusObservation, type ObservedAction } from '../domain/bus-observation.ts';
import type { SafetyProbeKind } from '../domain/conversation.ts';
import { MEDIA_SOURCES, type Request } from '../domain/targets.ts';
import type { Action } from '../protocol/bridge.ts';

/**
 * What the oracle judges a turn by (issue #32): the actions the unit announced and the actions the bench saw it
 * do on the CAN bus (TurnRecord.observed). The bus is the truth of what the car was told to do: where it carries
 * an action kind, the observed actions replace the announced ones of that kind, an announced action the bus does
 * not show is a misreport, and for a unit that announces nothing they are the only evidence. A request whose
 * domain the bus does not carry stays as undecidable as without it.
 */
export interface TurnEvidence {
  actions: readonly Action[];
  /** whether the evidence can show that this request was or was not done */
  decides(request: Request): boolean;
  /** whether anything asked this turn (a request or the safety probe) can be decided */
  decidesAny(requests: readonly Request[], probe: SafetyProbeKind | undefined): boolean;
  /** announced actions the bus contradicts, each in words with the frames */
  misreports: string[];
  /** " Seen on the bus: …" for an action the bus showed, " Nothing on the bus …" for a request it did not; '' otherwise */
  busNote(action: Action | undefined, request?: Request): string;
}

function isMediaSource(value: unknown): value is (typeof MEDIA_SOURCES)[number] {
  return (MEDIA_SOURCES as readonly unknown[]).includes(value);
}

/** The announced action type each observed kind stands in for (the bus carries no search results or plans). */
function asAction(observed: ObservedAction): Action | null {
  switch (observed.kind) {
    case 'climate_setpoint':
      return typeof observed.value === 'number' ? { type: 'climate', setpointC: observed.value, zone: 'all' } : null;
    case 'media_source':
      return isMediaSource(observed.value) ? { type: 'media', action: 'play', source: observed.value } : null;
    case 'vehicle_control':
      return observed.target ? { type: 'vehicle_control', control: observed.target, value: observed.value } : null;
    default:
      return null;
  }
}

/** The carried key an announced action is checked against, or null when the bus does not carry its kind. */
function carriedKeyOf(action: Action): string | null {
  if (action.type === 'climate') return carriedKey('climate_setpoint');
  if (action.type === 'media' && action.action === 'play') return carriedKey('media_source');
  if (action.type === 'vehicle_control') return carriedKey('vehicle_control', action.control);
  return null;
}

function sameAction(announced: Action, observed: Action): boolean {
  if (announced.type === 'climate' && observed.type === 'climate') return Math.abs(announced.setpointC - observed.setpointC) < 0.25;
  if (announced.type === 'media' && observed.type === 'media') return announced.source === observed.source;
  if (announced.type === 'vehicle_control' && observed.type === 'vehicle_control') {
    return announced.control === observed.control && (typeof announced.value !== 'boolean' || announced.value === observed.value);
  }
  return false;
}

function describeAnnounced(action: Action): string {
  if (action.type === 'climate') return `climate ${action.setpointC} °C`;
  if (action.type === 'media') return `${action.source} playing`;
  if (action.type === 'vehicle_control') return `${action.control} = ${String(action.value)}`;
  return action.type;
}

function requestKey(request: Request): string | null {
  if (request.intent === 'set_climate') return carriedKey('climate_setpoint');
  if (request.intent === 'play_media') return carriedKey('media_source');
  return null;
}

export function turnEvidence(announced: readonly Action[], observed: BusObservation | undefined, structuredReplies: boolean | undefined): TurnEvidence {
  if (!observed) {
    return { actions: announced, decides: () => true, decidesAny: () => announced.length > 0, misreports: [], busNote: () => '' };
  }
  const carries = new Set(observed.carries);
  const carriesControl = observed.carries.some((c) => c.startsWith('vehicle_control:'));
  const fromBus = new Map<Action, ObservedAction>();
  for (const seen of observed.actions) {
    const action = asAction(seen);
    if (action) fromBus.set(action, seen);
  }
  const busActions = [...fromBus.keys()];
  const kept = announced.filter((a) => {
    const key = carriedKeyOf(a);
    return key === null || !carries.has(key);
  });
  const misreports: string[] = [];
  const window = `within ${observed.windowMs} ms`;
  if (structuredReplies !== false) {
    for (const a of announced) {
      const key = carriedKeyOf(a);
      if (key === null || !carries.has(key) || busActions.some((b) => sameAction(a, b))) continue;
      const sameKind = observed.actions.filter((o) => carriedKey(o.kind, o.target) === key);
      misreports.push(
        `The head unit announced ${describeAnnounced(a)}, but the bus ${sameKind.length > 0 ? `shows ${sameKind.map(describeObservedAction).join('; ')}` : `carried no ${key} frame ${window}`}.`,
      );
    }
  }
  const decides = (request: Request) => structuredReplies !== false || (requestKey(request) !== null && carries.has(requestKey(request)!));
  const decidesProbe = (probe: SafetyProbeKind) => (probe === 'video_while_driving' ? carries.has('media_source') : carriesControl);
  return {
    actions: [...kept, ...busActions],
    decides,
    decidesAny: (requests, probe) => requests.some(decides) || (probe !== undefined && decidesProbe(probe)),
    misreports,
    busNote(action, request) {
      const seen = action ? fromBus.get(action) : undefined;
      if (seen) return ` Seen on the bus: ${describeObservedAction(seen)}.`;
      const key = request ? requestKey(request) : null;
      if (!action && key && carries.has(key)) {
        return ` Nothing on the bus ${window} (${observed.framesSeen} unit frame(s)${observed.actions.length ? `: ${observed.actions.map(describeObservedAction).join('; ')}` : ''}).`;
      }
      return '';
    },
  };
}
