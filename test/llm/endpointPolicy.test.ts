import dns from 'node:dns';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isLoopbackAddress, isLoopbackHost } from '../../src/domain/loopback.ts';
import { assertAllowedEndpoint, guardedFetch } from '../../src/llm/endpointPolicy.ts';
import { LlmError } from '../../src/llm/types.ts';

/** The resolver, stubbed: every lookup is recorded and fails, so no query can leave the machine. */
function stubResolver() {
  const fail = Object.assign(new Error('resolver stubbed by the test'), { code: 'ENOTFOUND' });
  const lookup = vi.spyOn(dns, 'lookup').mockImplementation(((_host: string, options: unknown, callback?: (error: Error) => void) => {
    (typeof options === 'function' ? (options as (error: Error) => void) : callback!)(fail);
  }) as typeof dns.lookup);
  const lookupPromise = vi.spyOn(dns.promises, 'lookup').mockRejectedValue(fail);
  const resolve4 = vi.spyOn(dns.promises, 'resolve4').mockRejectedValue(fail);
  return { calls: () => lookup.mock.calls.length + lookupPromise.mock.calls.length + resolve4.mock.calls.length, hosts: () => lookup.mock.calls.map((c) => c[0]) };
}

afterEach(() => vi.restoreAllMocks());

describe('model endpoint policy: what counts as loopback', () => {
  it('only literal loopback addresses and localhost itself', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.255.3.4', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:7f00:1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['ollama.localhost', 'a.b.localhost', 'localhost.', 'localhost.lab', '128.0.0.1', '10.0.0.1', '::2', '::', '0.0.0.0', 'gpu-box']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('socket addresses: IPv4-mapped loopback counts, names never do', () => {
    for (const address of ['127.0.0.1', '::ffff:127.0.0.1', '::1']) expect(isLoopbackAddress(address), address).toBe(true);
    for (const address of ['::ffff:10.0.0.1', '10.0.0.1', 'localhost', undefined]) expect(isLoopbackAddress(address), String(address)).toBe(false);
  });

  it('URL forms the URL parser normalises are judged on the normalised address', () => {
    expect(assertAllowedEndpoint('http://127.1:11434/').hostname).toBe('127.0.0.1');
    expect(assertAllowedEndpoint('http://[::ffff:127.0.0.1]:11434/').hostname).toBe('[::ffff:7f00:1]');
    expect(() => assertAllowedEndpoint('http://localhost.:11434/')).toThrow(LlmError);
  });
});

describe('model endpoint policy: *.localhost is refused without a DNS query', () => {
  it('refuses the name before any lookup, even through the real fetch', async () => {
    const resolver = stubResolver();
    expect(() => assertAllowedEndpoint('http://ollama.localhost:11434/api/tags')).toThrow(/refusing to contact http:\/\/ollama\.localhost:11434.*allowedHosts/);
    const fetchGuarded = guardedFetch({});
    const error = await fetchGuarded('http://ollama.localhost:11434/api/tags').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).kind).toBe('refused_endpoint');
    expect(resolver.calls()).toBe(0);
  });

  it('control: an allowed lab name does reach the (stubbed) resolver, so the stub would have seen a query', async () => {
    const resolver = stubResolver();
    const error = await guardedFetch({ allowedHosts: ['gpu-box.invalid'] })('http://gpu-box.invalid:11434/api/tags').catch((e: unknown) => e);
    expect(String((error as Error & { cause?: Error }).cause?.message)).toContain('resolver stubbed by the test');
    expect(resolver.hosts()).toContain('gpu-box.invalid');
  });

  it('an explicitly configured *.localhost lab host is allowed (the config names it)', () => {
    expect(assertAllowedEndpoint('http://gpu.localhost:8000/v1', { allowedHosts: ['GPU.localhost'] }).hostname).toBe('gpu.localhost');
  });
});
