import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ConversationResult, TurnRecord } from '../../src/domain/conversation.ts';
import type { Target } from '../../src/domain/targets.ts';
import type { LiveConversation } from '../../src/server/live-snapshot.ts';
import { TargetTable } from '../../src/ui/components/common.tsx';
import { Targets } from '../../src/ui/views/ConversationView.tsx';
import { ActiveConversation } from '../../src/ui/views/LiveView.tsx';

const targets: Target[] = [
  { id: 't1', request: { intent: 'set_climate', setpointC: 21 }, status: 1, introducedTurn: 0, completedTurn: 2 },
  { id: 't2', request: { intent: 'vehicle_info', field: 'range' }, status: 0, introducedTurn: 1, completedTurn: null },
  { id: 't3', request: { intent: 'play_media', source: 'radio', item: 'Bayern 3' }, status: -1, introducedTurn: null, completedTurn: null },
];

/** the cells of each row, tags stripped */
function rows(html: string): string[][] {
  return [...html.matchAll(/<tr>(.*?)<\/tr>/g)].map((row) => [...row[1].matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((cell) => cell[1].replace(/<[^>]+>/g, '').replaceAll('&quot;', '"')));
}

describe('TargetTable', () => {
  it('lists each target with its request and status', () => {
    const html = renderToStaticMarkup(<TargetTable targets={targets} className="targets" />);
    expect(html).toContain('<table class="targets" data-testid="target-table">');
    expect(rows(html)).toEqual([
      ['t1', 'set climate to 21 °C', 'completed'],
      ['t2', 'vehicle info: range', 'incomplete'],
      ['t3', 'play radio "Bayern 3"', 'dropped'],
    ]);
    expect(html).toContain('<span class="pill pill-ok">completed</span>');
    expect(html).toContain('<span class="pill pill-warn">incomplete</span>');
    expect(html).toContain('<span class="pill pill-muted">dropped</span>');
  });

  it('adds the introducing and completing turns when asked, numbered from 1 as the report and the turn list number them', () => {
    const html = renderToStaticMarkup(<TargetTable targets={targets} className="table" turns />);
    expect(rows(html).map((r) => r[3])).toEqual([
      'introduced turn 1, completed turn 3',
      'introduced turn 2, completed turn —',
      'introduced turn —, completed turn —',
    ]);
  });

  it('is the table both the conversation view and the live view show', () => {
    const conversation = renderToStaticMarkup(<Targets result={{ targets } as unknown as ConversationResult} />);
    expect(conversation).toContain(renderToStaticMarkup(<TargetTable targets={targets} className="table" turns />));

    const turn = { index: 0, utterance: { text: 'hi' }, reply: null, verdicts: [], targetsAfter: targets, context: {} } as unknown as TurnRecord;
    const live: LiveConversation = { key: 'c1', seedText: 'hi', persona: 'polite', mode: 'guided', turns: [turn], activeStrategies: [], rig: null, shape: 'conversation' };
    const liveHtml = renderToStaticMarkup(<ActiveConversation conversation={live} />);
    // a fleet run names the rig running the conversation; a local one does not
    expect(liveHtml).not.toContain('live-conversation-rig');
    expect(renderToStaticMarkup(<ActiveConversation conversation={{ ...live, rig: 'rig-a' }} />)).toMatch(/data-testid="live-conversation-rig"><span class="pill pill-muted">rig rig-a<\/span>/);
    expect(liveHtml).toContain(renderToStaticMarkup(<TargetTable targets={targets} className="targets" />));
  });
});
