import type { AnyCampaignKind } from '../kinds/registry.ts';
import type { LoadedKindConfig } from '../run/kind.ts';
import type { CampaignEvent } from '../run/events.ts';
import { ApiError } from './http-util.ts';
import { applyCampaignEvent, emptySnapshot, type LiveSnapshot } from './live-snapshot.ts';

/** What the server needs from the campaign runner: run one campaign to the end, reporting every event. */
export type CampaignLauncher = (request: {
  kind: AnyCampaignKind;
  loaded: LoadedKindConfig;
  resumeRunId?: string;
  signal: AbortSignal;
  onEvent: (event: CampaignEvent) => void;
}) => Promise<{ runId: string; status: string }>;

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
  async start(request: { kind: AnyCampaignKind; loaded: LoadedKindConfig; configName: string; resumeRunId?: string }): Promise<{ runId: string }> {
    if (this.running) throw new ApiError(409, 'campaign_running', `campaign "${this.snapshot.name ?? this.snapshot.configName}" is already running; stop it first`);
    const abort = new AbortController();
    this.abort = abort;
    this.snapshot = { ...emptySnapshot(), state: 'running', kind: request.kind.name, page: request.kind.view.page, nouns: request.kind.nouns, configName: request.configName, runId: request.resumeRunId ?? null };
    this.notifyControl();
    let announceRun: (runId: string) => void = () => {};
    const runIdKnown = new Promise<string>((resolve) => (announceRun = resolve));
    const finished = this.launch({
      kind: request.kind,
      loaded: request.loaded,
      resumeRunId: request.resumeRunId,
      signal: abort.signal,
      onEvent: (event) => {
        applyCampaignEvent(this.snapshot, event);
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
}

