import { useCallback, useEffect, useState } from 'react';
import { io } from 'socket.io-client';
import type { CampaignEvent } from '../run/events.ts';
import { applyCampaignEvent, emptySnapshot, type LiveSnapshot } from '../server/live-snapshot.ts';
import { api, token, tokenRefused } from './api.ts';

/** The current hash route, split into segments: "#/runs/abc" → ["runs", "abc"]. */
export function useRoute(): string[] {
  const read = () =>
    window.location.hash
      .replace(/^#\/?/, '')
      .split('?')[0]
      .split('/')
      .filter(Boolean)
      .map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function navigate(...segments: string[]): void {
  window.location.hash = '/' + segments.map(encodeURIComponent).join('/');
}

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** GETs a path whenever it changes; `null` skips. */
export function useApi<T>(path: string | null): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({ data: null, error: null, loading: path !== null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (path === null) return;
    let cancelled = false;
    setState((s) => ({ ...s, loading: true }));
    api.get<T>(path).then(
      (data) => !cancelled && setState({ data, error: null, loading: false }),
      (error: Error) => !cancelled && setState({ data: null, error: error.message, loading: false }),
    );
    return () => {
      cancelled = true;
    };
  }, [path, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** The live campaign state: the server's snapshot on connect, then every event folded in. */
export function useLiveCampaign(): { snapshot: LiveSnapshot; connected: boolean; lastEvent: CampaignEvent | null } {
  const [snapshot, setSnapshot] = useState<LiveSnapshot>(emptySnapshot);
  const [connected, setConnected] = useState(false);
  const [lastEvent, setLastEvent] = useState<CampaignEvent | null>(null);
  useEffect(() => {
    const socket = io({ auth: { token: token() ?? '' }, transports: ['websocket'] });
    socket.on('connect', () => setConnected(true));
    socket.on('disconnect', () => setConnected(false));
    // without the right token the feed never connects: the app says how to get in instead of waiting
    socket.on('connect_error', (error: Error) => tokenRefused(error.message));
    socket.on('campaign', (event: CampaignEvent | { type: 'control'; snapshot: LiveSnapshot }) => {
      if (event.type === 'control') {
        setSnapshot(event.snapshot);
        return;
      }
      setLastEvent(event);
      setSnapshot((current) => {
        const next = structuredClone(current);
        if (next.state === 'idle' || next.state === 'finished' || next.state === 'failed') next.state = 'running';
        applyCampaignEvent(next, event);
        return next;
      });
    });
    return () => {
      socket.close();
    };
  }, []);
  return { snapshot, connected, lastEvent };
}
