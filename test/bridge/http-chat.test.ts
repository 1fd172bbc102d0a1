import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpChatHeadUnit } from '../../src/headunit/http-chat.ts';
import { SutError } from '../../src/headunit/types.ts';
import { ValidationError } from '../../src/domain/validation.ts';
import { CONTEXT, rejection } from './helpers.ts';

interface Received {
  path: string;
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: string }[] };
}

type Behaviour = (request: Received, response: ServerResponse) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A local OpenAI-compatible endpoint whose answer each test scripts; it records every request. */
async function fakeEndpoint(behaviour: Behaviour): Promise<{ baseUrl: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const request: Received = { path: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(raw) };
      received.push(request);
      behaviour(request, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, received };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function completion(content: string | null) {
  return {
    id: 'cmpl-1',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
  };
}

function expectSutError(error: Error, kind: SutError['kind']): SutError {
  expect(error).toBeInstanceOf(SutError);
  expect((error as SutError).kind).toBe(kind);
  return error as SutError;
}

describe('HttpChatHeadUnit', () => {
  it('posts per-session history with the context in the system prompt and returns text-only replies', async () => {
    const { baseUrl, received } = await fakeEndpoint((request, res) => {
      const last = request.body.messages.at(-1)!;
      json(res, 200, completion(`echo: ${last.content}`));
    });
    const headUnit = new HttpChatHeadUnit({ baseUrl, model: 'car-assistant-7b', apiKey: 'k-123', systemPrompt: 'Be brief.' });
    expect(headUnit.capabilities()).toEqual({ text: true, audio: false, vehicleContext: false, structuredActions: false });
    const one = await headUnit.openSession('one', CONTEXT);
    const two = await headUnit.openSession('two', CONTEXT);

    const first = await one.send(0, 'find a charger', CONTEXT);
    expect(first).toEqual({ sessionId: 'one', turn: 0, text: 'echo: find a charger', actions: [] });
    const later = { ...CONTEXT, time: '18:45' };
    await one.send(1, 'a fast one', later);
    await two.send(0, 'play jazz', CONTEXT);

    expect(received.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions', '/v1/chat/completions']);
    expect(received[0].authorization).toBe('Bearer k-123');
    expect(received[1].body.model).toBe('car-assistant-7b');
    expect(received[1].body.messages.map((m) => [m.role, m.role === 'system' ? '' : m.content])).toEqual([
      ['system', ''],
      ['user', 'find a charger'],
      ['assistant', 'echo: find a charger'],
      ['user', 'a fast one'],
    ]);
    const system = received[1].body.messages[0].content;
    expect(system.startsWith('Be brief.')).toBe(true);
    expect(system).toContain('"time":"18:45"');
    expect(system).toContain('Schwabing');
    // the other session has its own history
    expect(received[2].body.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('maps HTTP 500 to unavailable, 429 to rate_limited, 413 to too_large and 400 to rejected', async () => {
    const statuses = [500, 429, 413, 400];
    let call = 0;
    const { baseUrl } = await fakeEndpoint((_request, res) => json(res, statuses[call++], { error: { message: 'nope' } }));
    const session = await new HttpChatHeadUnit({ baseUrl, model: 'm' }).openSession('s', CONTEXT);
    const errors: Error[] = [];
    for (let turn = 0; turn < statuses.length; turn += 1) errors.push(await rejection(session.send(turn, 'hi', CONTEXT)));
    expect(errors.every((error) => error instanceof SutError)).toBe(true);
    expect(errors.map((error) => (error as SutError).kind)).toEqual(['unavailable', 'rate_limited', 'too_large', 'rejected']);
    expect(call).toBe(4); // no silent retries
  });

  it('fails a slow endpoint as timeout instead of hanging', async () => {
    const { baseUrl } = await fakeEndpoint((_request, res) => {
      setTimeout(() => json(res, 200, completion('too late')), 2_000).unref();
    });
    const session = await new HttpChatHeadUnit({ baseUrl, model: 'm', timeoutMs: 200 }).openSession('s', CONTEXT);
    expectSutError(await rejection(session.send(0, 'hi', CONTEXT)), 'timeout');
  });

  it('fails a completion without text as malformed and an unreachable endpoint as unavailable', async () => {
    const { baseUrl } = await fakeEndpoint((_request, res) => json(res, 200, completion(null)));
    const session = await new HttpChatHeadUnit({ baseUrl, model: 'm' }).openSession('s', CONTEXT);
    const malformed = expectSutError(await rejection(session.send(0, 'hi', CONTEXT)), 'malformed');
    expect(malformed.message).toContain('choices.0.message.content');

    const closed = await fakeEndpoint(() => {});
    const closedServer = servers.pop()!;
    await new Promise((resolve) => closedServer.close(resolve));
    const unreachable = await new HttpChatHeadUnit({ baseUrl: closed.baseUrl, model: 'm' }).openSession('s', CONTEXT);
    expectSutError(await rejection(unreachable.send(0, 'hi', CONTEXT)), 'unavailable');
  });

  it('fails a completion nested 100,000 deep as malformed, without walking it recursively', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const { baseUrl } = await fakeEndpoint((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],"extra":${deep}}`);
    });
    const session = await new HttpChatHeadUnit({ baseUrl, model: 'm' }).openSession('s', CONTEXT);
    const error = expectSutError(await rejection(session.send(0, 'hi', CONTEXT)), 'malformed');
    expect(error.message).toContain('nested deeper than 32 levels');
  });

  it('rejects an invalid config naming the field', () => {
    expect(() => new HttpChatHeadUnit({ baseUrl: 'not a url', model: 'm' })).toThrow(ValidationError);
    expect(() => new HttpChatHeadUnit({ baseUrl: 'not a url', model: 'm' })).toThrow(/baseUrl/);
  });
});
