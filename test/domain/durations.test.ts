import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS, maxTimerValue } from '../../src/domain/durations.ts';
import { HeadUnitConfigSchema } from '../../src/run/headunit-config.ts';
import { BridgeServerOptionsSchema } from '../../src/bridge/server.ts';
import { runCli } from '../helpers/cli.ts';

describe('durations that feed a timer are refused beyond what a timer can wait (2^31-1 ms, about 24.8 days)', () => {
  it('the limit in each unit is the whole value that still fits', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(maxTimerValue('ms')).toBe(2_147_483_647);
    expect(maxTimerValue('s')).toBe(2_147_483);
    expect(maxTimerValue('min')).toBe(35_791);
  });

  it('a bridge head unit with a grace or wait of 25 days is refused, naming the field and the accepted range', () => {
    const days25 = 25 * 24 * 3600;
    const grace = HeadUnitConfigSchema.safeParse({ type: 'bridge', reconnectGraceSeconds: days25 });
    expect(grace.success).toBe(false);
    expect(grace.error!.issues[0]).toMatchObject({ path: ['reconnectGraceSeconds'], message: 'at most 2147483 seconds (about 24.8 days, the longest a timer can wait)' });
    expect(HeadUnitConfigSchema.safeParse({ type: 'bridge', waitSeconds: days25 }).success).toBe(false);
    expect(HeadUnitConfigSchema.safeParse({ type: 'bridge', reconnectGraceSeconds: maxTimerValue('s') }).success).toBe(true);
    expect(BridgeServerOptionsSchema.safeParse({ token: 't', turnTimeoutMs: MAX_TIMER_MS + 1 }).success).toBe(false);
  });

  it('`icabench run --fleet-grace` above the limit exits 2 with the accepted range, before Redis is touched', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'icabench-durations-'));
    const result = await runCli(['run', 'bench-configs/quickstart.yaml', '--fleet', 'redis://127.0.0.1:1', '--fleet-grace', String(25 * 24 * 3600), '--workspace', join(dir, 'ws'), '--out', join(dir, 'out')]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')[0]).toBe('icabench: --fleet-grace: expected a number of seconds above 0 and at most 2147483 seconds (about 24.8 days, the longest a timer can wait), got "2160000"');
  });
});
