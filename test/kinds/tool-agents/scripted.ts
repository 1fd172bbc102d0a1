import type { AgentReply, AgentTurnInput, ToolAgent } from '../../../src/kinds/tool-agents/loop.ts';

/** An agent that answers with `replies` in order (the last one again once they run out), recording every turn's input in `seen`. */
export function scripted(name: string, replies: AgentReply[], seen: AgentTurnInput[] = []): ToolAgent {
  let i = 0;
  return {
    name,
    next: async (input) => {
      seen.push(input);
      return replies[Math.min(i++, replies.length - 1)];
    },
  };
}
