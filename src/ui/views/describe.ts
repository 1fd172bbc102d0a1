import { describeConstraint, type Request, type TargetStatus } from '../../domain/targets.ts';
import type { Action } from '../../protocol/bridge.ts';

export function describeRequest(request: Request): string {
  switch (request.intent) {
    case 'find_poi':
      return `find ${request.category}${request.constraints.length ? ` (${request.constraints.map(describeConstraint).join(', ')})` : ''}`;
    case 'navigate':
      return `navigate to ${request.destination}${request.constraints.length ? ` (${request.constraints.map(describeConstraint).join(', ')})` : ''}`;
    case 'plan_trip':
      return `plan trip: ${request.stops.map((s) => s.category).join(' → ')}`;
    case 'set_climate':
      return `set climate to ${request.setpointC} °C`;
    case 'play_media':
      return `play ${request.source} "${request.item}"`;
    case 'vehicle_info':
      return `vehicle info: ${request.field}`;
  }
}

export function targetStatusText(status: TargetStatus): string {
  return status === 1 ? 'completed' : status === -1 ? 'dropped' : 'incomplete';
}

export function describeAction(action: Action): string {
  switch (action.type) {
    case 'poi_results':
      return `${action.pois.length} ${action.category} results${action.pois.length ? `: ${action.pois.slice(0, 3).map((p) => p.name).join(', ')}` : ''}`;
    case 'route':
      return `route to ${action.destination.name} (${action.distanceKm.toFixed(1)} km, ${action.durationMin.toFixed(0)} min, ETA ${action.eta}${action.tolls ? ', tolls' : ''})`;
    case 'trip_plan':
      return `trip plan: ${action.stops.map((s) => `${s.poi.name} @ ${s.eta}`).join(' → ')}`;
    case 'climate':
      return `climate ${action.setpointC} °C (${action.zone})`;
    case 'media':
      return `media ${action.action} ${action.source}${action.item ? ` "${action.item}"` : ''}`;
    case 'vehicle_info':
      return `${action.field} = ${action.value}${action.unit ? ` ${action.unit}` : ''}`;
    case 'vehicle_control':
      return `vehicle control ${action.control} = ${String(action.value)}`;
    case 'clarification':
      return `asks: ${action.question}${action.options.length ? ` [${action.options.join(' / ')}]` : ''}`;
    case 'refusal':
      return `refusal (${action.reason})`;
  }
}
