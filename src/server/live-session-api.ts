import { LiveSessionConfigSchema, LiveSessionError, type LiveSessionConfig } from '../kinds/live/config.ts';
import { LiveSession } from '../kinds/live/session.ts';
import type { CampaignControl } from './campaign-control.ts';
import { ApiError, fieldErrorsOf } from './http-util.ts';

/**
 * The bench app's live session: at most one, and only while no campaign runs (the rig has one head unit). It
 * runs through the campaign control, so the live view, the demo screen and the runs list see it as they see
 * a campaign; this object only holds the technician's side (turns, car state, end).
 */
export class LiveSessionApi {
  private session: LiveSession | null = null;

  constructor(
    private readonly control: CampaignControl,
    private readonly fleet: boolean,
    /** the app's path policy: the config with its files checked (400 path_not_allowed) and made absolute */
    private readonly allowedPaths: (config: LiveSessionConfig) => LiveSessionConfig,
  ) {
    control.subscribe((event) => {
      if (event.type !== 'control') this.session?.onEvent(event);
    });
  }

  async start(config: unknown): Promise<{ runId: string; context: ReturnType<LiveSession['context']> }> {
    if (this.fleet) throw new ApiError(400, 'fleet', 'a live session talks to a unit on this bench; this app runs campaigns on a fleet (start it without --fleet for live sessions)');
    if (this.session && !this.session.stored() && this.control.isRunning()) throw new ApiError(409, 'session_running', 'a live session is running; end it first');
    const parsed = LiveSessionConfigSchema.safeParse(config);
    if (!parsed.success) {
      const fields = fieldErrorsOf(parsed.error);
      throw new ApiError(400, 'invalid_config', `live session: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`, fields);
    }
    // what it names: only under the allowed folders (400 path_not_allowed), made absolute
    const allowed = this.allowedPaths(parsed.data);
    // where it starts (an unknown district): a 400 naming the field and the accepted districts
    let session: LiveSession;
    try {
      session = new LiveSession(allowed);
    } catch (error) {
      throw asApiError(error, 400, 'invalid_config');
    }
    this.session = session;
    try {
      const { runId } = await this.control.start({ kind: session.kind, loaded: session.loaded, configName: parsed.data.name });
      return { runId, context: session.context() };
    } catch (error) {
      this.session = null;
      throw error;
    }
  }

  current(): { active: boolean; runId: string | null; context: ReturnType<LiveSession['context']> | null; turns: number; scenario: string | null } {
    const session = this.session;
    return {
      active: session !== null && session.stored() === null,
      runId: session?.runId ?? null,
      context: session?.context() ?? null,
      turns: session?.history().length ?? 0,
      scenario: session?.config.vehicle?.scenario ?? null,
    };
  }

  async say(text: string) {
    const session = this.active();
    try {
      const turn = await session.say(text);
      return { turn, context: session.context() };
    } catch (error) {
      throw asApiError(error, 409);
    }
  }

  setContext(change: unknown) {
    const session = this.active();
    try {
      return { context: session.setContext(change) };
    } catch (error) {
      throw asApiError(error, 400);
    }
  }

  async end(): Promise<{ runId: string | null }> {
    const session = this.active();
    session.end();
    await session.done;
    return { runId: session.runId };
  }

  private active(): LiveSession {
    if (!this.session || this.session.stored()) throw new ApiError(409, 'no_session', 'no live session is running; start one first');
    return this.session;
  }
}

function asApiError(error: unknown, status: number, code = 'session'): unknown {
  return error instanceof LiveSessionError ? new ApiError(status, code, error.message, error.fields) : error;
}
