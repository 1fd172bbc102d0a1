import { describe, expect, it } from 'vitest';
import type { RigCheck } from '../../src/server/rig-status.ts';
import { sortedChecks } from '../../src/ui/views/RigStatusView.tsx';

describe('the rig status table', () => {
  it('lists failures first, then warnings, then what is fine, each by area and check', () => {
    const checks: RigCheck[] = [
      { area: 'system', title: 'Node', status: 'ok', detail: '' },
      { area: 'models', title: 'Ollama', status: 'warn', detail: '' },
      { area: 'audio', title: 'sox', status: 'fail', detail: '' },
      { area: 'disk', title: 'Disk', status: 'ok', detail: '' },
      { area: 'audio', title: 'espeak-ng', status: 'warn', detail: '' },
    ];
    expect(sortedChecks(checks).map((c) => `${c.status} ${c.title}`)).toEqual(['fail sox', 'warn espeak-ng', 'warn Ollama', 'ok Disk', 'ok Node']);
  });
});
