import { PAPERS } from '../../domain/method.ts';
import type { KindView } from '../../run/kind-view.ts';

/**
 * How the bench app shows a run of conversations (dialogue runs, and the suites and live sessions stored as them): the
 * run report page, the conversations, the raters' agreement; two runs compare by their summaries and conversation by
 * conversation, as `icabench compare` does. Its routes (./run-view.ts) load when the app first shows such a run.
 */
export const dialogueView: KindView = {
  paper: PAPERS.negi,
  page: 'report',
  links: [{ label: 'agreement', path: 'agreement' }],
  compared: true,
  open: async (context) => (await import('./run-view.ts')).conversationRunView(context),
};
