import type { LoadedCampaign } from '../campaign/config.ts';
import type { CampaignEvent } from '../campaign/events.ts';
import type { ConversationResult, TurnRecord } from '../domain/conversation.ts';
import { ApiError } from './http-util.ts';

/** What the server needs from the campaign runner: run one campaign to the end, reporting every event. */
export type CampaignLauncher = (request: {
  campaign: LoadedCampaign;
  resumeRunId?: string;
  signal: AbortSignal;
  onEvent: (event: CampaignEvent) => void;
}) => Promise<{ runId: string; status: string }>;

/** A conversation that is running now, as the live view shows it. */
export interface LiveConversation {
  key: string;
  seedText: string;
  persona: string;
  mode: string;
  turns: TurnRecord[];
  activeStrategies: string[];
}

export interface LiveFinished {
  key: string;
  status: ConversationResult['status'];
  pass: boolean | null;
  score: number | null;
  turns: number;
}

/** Everything a live view needs to draw itself when it connects mid-run. */
export interface LiveSnapshot {
  state: 'idle' | 'running' | 'stopping' | 'finished' | 'failed';
  runId: string | null;
  name: string | null;
  configName: string | null;
  planned: number;
  done: number;
  elapsedMs: number;
  budgetMs: number | null;
  finalStatus: string | null;
  error: string | null;
  active: LiveConversation[];
  recent: LiveFinished[];
}

const RECENT_LIMIT = 50;

/**
 * Runs at most one campaign at a time (the rig has one head unit), keeps the live snapshot
 * and forwards every event to the listeners (the socket.io feed).
 */
export class CampaignControl {
  private snapshot: LiveSnapshot = emptySnapshot();
  private abort: AbortController | null = null;
  private running: Promise<void> | null = null;
  private readonly listeners = new Set<(event: CampaignEvent | { type: 'control'; snapshot: LiveSnapshot }) => void>();

  constructor(private readonly launch: CampaignLauncher) {}

  current(): LiveSnapshot {
    return structuredClone(this.snapshot);
  }

  isRunning(): boolean {
    return this.running !== null;
  }

  subscribe(listener: (event: CampaignEvent | { type: 'control'; snapshot: LiveSnapshot }) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts a campaign and resolves once its run id is known (first event) or it failed before starting. */
  async start(request: { campaign: LoadedCampaign; configName: string; resumeRunId?: string }): Promise<{ runId: string }> {
    if (this.running) throw new ApiError(409, 'campaign_running', `campaign "${this.snapshot.name ?? this.snapshot.configName}" is already running; stop it first`);
    const abort = new AbortController();
    this.abort = abort;
    this.snapshot = { ...emptySnapshot(), state: 'running', configName: request.configName, runId: request.resumeRunId ?? null };
    this.notifyControl();
    let announceRun: (runId: string) => void = () => {};
    const runIdKnown = new Promise<string>((resolve) => (announceRun = resolve));
    const finished = this.launch({
      campaign: request.campaign,
      resumeRunId: request.resumeRunId,
      signal: abort.signal,
      onEvent: (event) => {
        this.apply(event);
        announceRun(event.runId);
        for (const listener of this.listeners) listener(event);
      },
    });
    this.running = finished.then(
      (outcome) => {
        this.snapshot.state = 'finished';
        this.snapshot.runId = outcome.runId;
        this.snapshot.finalStatus ??= outcome.status;
      },
      (error: unknown) => {
        this.snapshot.state = 'failed';
        this.snapshot.error = error instanceof Error ? error.message : String(error);
      },
    ).finally(() => {
      this.running = null;
      this.abort = null;
      this.snapshot.active = [];
      this.notifyControl();
    });
    const first = await Promise.race([runIdKnown, finished.then((o) => o.runId, () => null)]);
    if (first === null) throw new ApiError(422, 'campaign_failed', this.snapshot.error ?? 'the campaign failed before it started');
    return { runId: first };
  }

  /** Asks the running campaign to stop after the conversations in flight; resolves when it has. */
  async stop(): Promise<LiveSnapshot> {
    if (!this.running || !this.abort) throw new ApiError(409, 'no_campaign', 'no campaign is running');
    this.snapshot.state = 'stopping';
    this.notifyControl();
    this.abort.abort();
    await this.running;
    return this.current();
  }

  /** Waits for the running campaign (if any) to end. */
  async settled(): Promise<void> {
    await this.running;
  }

  private notifyControl(): void {
    const event = { type: 'control' as const, snapshot: this.current() };
    for (const listener of this.listeners) listener(event);
  }

  private apply(event: CampaignEvent): void {
    const s = this.snapshot;
    s.runId = event.runId;
    switch (event.type) {
      case 'run_started':
        s.name = event.name;
        s.planned = event.planned;
        s.done = event.planned - event.remaining;
        s.budgetMs = event.budgetMs;
        break;
      case 'conversation_started':
        s.active.push({
          key: event.key,
          seedText: event.spec.seed.text,
          persona: event.spec.persona,
          mode: event.spec.mode,
          turns: [],
          activeStrategies: [...event.spec.strategies],
        });
        break;
      case 'turn': {
        const live = s.active.find((c) => c.key === event.key);
        if (live) {
          live.turns.push(event.turn);
          live.activeStrategies = event.activeStrategies;
        }
        break;
      }
      case 'conversation_finished': {
        s.active = s.active.filter((c) => c.key !== event.key);
        const verdict = event.result.verdicts[0];
        s.recent.unshift({
          key: event.key,
          status: event.result.status,
          pass: verdict?.pass ?? null,
          score: verdict?.score ?? null,
          turns: event.result.turns.length,
        });
        s.recent.length = Math.min(s.recent.length, RECENT_LIMIT);
        break;
      }
      case 'progress':
        s.done = event.done;
        s.planned = event.planned;
        s.elapsedMs = event.elapsedMs;
        s.budgetMs = event.budgetMs;
        break;
      case 'run_finished':
        s.done = event.done;
        s.planned = event.planned;
        s.finalStatus = event.status;
        break;
    }
  }
}

function emptySnapshot(): LiveSnapshot {
  return {
    state: 'idle',
    runId: null,
    name: null,
    configName: null,
    planned: 0,
    done: 0,
    elapsedMs: 0,
    budgetMs: null,
    finalStatus: null,
    error: null,
    active: [],
    recent: [],
  };
}
