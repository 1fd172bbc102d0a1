import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { applyCampaignEvent, emptySnapshot } from '../../src/server/live-snapshot.ts';
import { compareRefusal } from '../../src/domain/comparable.ts';
import { campaignKind, comparedKindGroups } from '../../src/kinds/registry.ts';
import { ResumeButton, StopButton } from '../../src/ui/components/CampaignButtons.tsx';
import { itemHref, runHref } from '../../src/ui/routes.ts';
import { ActiveItem, RecentTable } from '../../src/ui/views/LiveView.tsx';

describe('the bench app follows every kind (rendered markup)', () => {
  it('links each run and item to the page its kind\'s view names', async () => {
    const page = async (kind: string) => (await campaignKind(kind)).view.page;
    expect(runHref('r1', await page('tool-agents'))).toBe('#/runs/r1/tool-agents');
    expect(runHref('r1', await page('manual-qa'))).toBe('#/runs/r1/manual');
    // suite and live runs are runs of conversations: the run report and its conversations
    expect(runHref('r1', await page('suite'))).toBe('#/runs/r1');
    expect(itemHref('r1', await page('live'), 'session')).toBe('#/runs/r1/conversations/session');
    expect(itemHref('r1', await page('dialogue'), 'c 1')).toBe('#/runs/r1/conversations/c%201');
    expect(itemHref('r1', await page('tool-agents'), 'base_0#1')).toBe('#/runs/r1/tool-agents/base_0%231');
    expect(itemHref('r1', await page('manual-qa'), 'det:q1')).toBe('#/runs/r1/manual/det%3Aq1');
    // a page the app does not have (a kind newer than the app): the generic run page, never the conversations'
    expect(runHref('r1', 'sightseeing')).toBe('#/runs/r1');
    expect(itemHref('r1', 'sightseeing', 'k')).toBe('#/runs/r1');
    expect(itemHref('r1', null, 'k')).toBe('#/runs/r1');
  });

  it('shows a task trial running and, once finished, its outcome, the kind\'s own word and a link to the trial', () => {
    const s = emptySnapshot();
    applyCampaignEvent(s, { type: 'run_started', runId: 'r1', name: 'carbench', kind: 'tool-agents', page: 'tool-agents', nouns: { item: 'task trial', items: 'task trials' }, planned: 2, remaining: 2, budgetMs: null });
    applyCampaignEvent(s, { type: 'item_started', runId: 'r1', key: 'base_0#0', label: 'base_0 (trial 1)' });
    expect(renderToStaticMarkup(<ActiveItem item={s.active[0]} />)).toBe('<li class="card live-item" data-testid="live-item"><strong>base_0#0</strong> <span class="muted">base_0 (trial 1)</span></li>');
    applyCampaignEvent(s, { type: 'item_finished', runId: 'r1', key: 'base_0#0', outcome: 'inconclusive', word: 'not_runnable' });
    applyCampaignEvent(s, { type: 'item_started', runId: 'r1', key: 'base_2#0', label: 'base_2 (trial 1)' });
    applyCampaignEvent(s, { type: 'item_finished', runId: 'r1', key: 'base_2#0', outcome: 'pass', word: 'pass' });
    const table = renderToStaticMarkup(<RecentTable snapshot={s} />);
    expect(table).toContain('<a href="#/runs/r1/tool-agents/base_2%230">base_2#0</a>');
    expect(table).toContain('<a href="#/runs/r1/tool-agents/base_0%230">base_0#0</a>');
    expect(table).toContain('<td colSpan="2">not_runnable</td>');
    // no score or turn count for an item, and no repeated word when it is the outcome
    expect(table).not.toContain('turns');
    expect(table).toContain('<td colSpan="2"></td>');
  });

  it('offers Resume only for a run with work left, disabled with the reason the server gave or while a campaign runs', () => {
    const idle = { state: 'idle' as const, runId: null };
    expect(renderToStaticMarkup(<ResumeButton run={{ id: 'r1', status: 'completed', resumeRefusal: null }} live={idle} />)).toBe('');
    const open = renderToStaticMarkup(<ResumeButton run={{ id: 'r1', status: 'interrupted', resumeRefusal: null }} live={idle} />);
    expect(open).toMatch(/<button class="primary" title="continue run r1 \(interrupted\) where it stopped" data-testid="resume-run">Resume<\/button>/);
    const refused = renderToStaticMarkup(<ResumeButton run={{ id: 'r1', status: 'interrupted', resumeRefusal: 'run r1: seeds: not allowed' }} live={idle} />);
    expect(refused).toContain('disabled=""');
    expect(refused).toContain('run r1: seeds: not allowed');
    const busy = renderToStaticMarkup(<ResumeButton run={{ id: 'r1', status: 'interrupted', resumeRefusal: null }} live={{ state: 'running', runId: 'r2' }} />);
    expect(busy).toContain('disabled=""');
    expect(busy).toContain('a campaign is running: stop it or wait for its end first');
    // the run that is running again is followed, not offered
    expect(renderToStaticMarkup(<ResumeButton run={{ id: 'r2', status: 'interrupted', resumeRefusal: null }} live={{ state: 'running', runId: 'r2' }} />)).toBe('');
    expect(renderToStaticMarkup(<StopButton live={{ state: 'idle' }} />)).toContain('disabled=""');
    expect(renderToStaticMarkup(<StopButton live={{ state: 'running' }} />)).not.toContain('disabled=""');
  });

  it('compares the pairs icabench compare takes and names why not for the others', async () => {
    const groups = await comparedKindGroups();
    expect(groups).toEqual([['dialogue', 'suite', 'live'], ['tool-agents']]);
    expect(compareRefusal('dialogue', groups, 'dialogue')).toBeNull();
    expect(compareRefusal('dialogue', groups, 'suite')).toBeNull();
    expect(compareRefusal('tool-agents', groups, null)).toBeNull();
    expect(compareRefusal('manual-qa', groups)).toBe('a manual-qa run is not compared (its summary and report hold the figures); the app compares two dialogue, suite or live runs, or two tool-agents runs');
    expect(compareRefusal('tool-agents', groups, 'dialogue')).toBe('a tool-agents run compares with another tool-agents run, not with a dialogue run');
  });
});
