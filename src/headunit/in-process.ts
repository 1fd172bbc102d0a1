import type { ContextVector } from '../domain/context.ts';
import { describeZodError } from '../domain/validation.ts';
import { AssistantReplySchema, type AssistantReply, type Capabilities } from '../protocol/bridge.ts';
import { SutError, type HeadUnitConnection, type HeadUnitHandler, type HeadUnitSession } from './types.ts';

/**
 * Calls a head-unit handler directly, without the bridge. Used by unit tests and by the
 * harness benchmark to measure the bench's own overhead; replies are validated exactly as
 * the bridge validates them.
 */
export class InProcessHeadUnit implements HeadUnitConnection {
  readonly describe: string;
  constructor(private readonly handler: HeadUnitHandler) {
    this.describe = `in-process:${handler.unit.name}`;
  }

  capabilities(): Capabilities {
    return this.handler.capabilities;
  }

  async openSession(sessionId: string, context: ContextVector): Promise<HeadUnitSession> {
    await this.handler.startSession(sessionId, context);
    const handler = this.handler;
    return {
      sessionId,
      async send(turn: number, text: string, turnContext: ContextVector): Promise<AssistantReply> {
        const body = await handler.handleTurn(sessionId, turn, text, turnContext);
        const parsed = AssistantReplySchema.safeParse({ ...body, sessionId, turn });
        if (!parsed.success) throw new SutError('malformed', `assistant_reply: ${describeZodError(parsed.error)}`);
        return parsed.data;
      },
      async close() {
        await handler.endSession(sessionId);
      },
    };
  }

  async close(): Promise<void> {}
}
