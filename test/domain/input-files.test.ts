import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FILE_LIMITS, limitBytes, readBoundedLines, readBoundedText, type FileLimit } from '../../src/domain/input-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-input-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
/** A test-only kind of file: 4,096 bytes by default, raised by ICABENCH_TEST_FILE_MIB. */
const SMALL: FileLimit = { defaultMiB: 4096 / (1024 * 1024), env: 'ICABENCH_TEST_FILE_MIB' };
afterEach(() => {
  delete process.env.ICABENCH_TEST_FILE_MIB;
});
const lines = (path: string, limit: FileLimit = SMALL) => [...readBoundedLines(path, 'test file', limit)].map((l) => `${l.number}:${l.text}`);

describe('the bounded reader', () => {
  it('refuses a regular file over the cap by its size, naming the file, the size, the cap and the variable that raises it', () => {
    const path = write('big.txt', 'x'.repeat(5_000));
    expect(() => readBoundedText(path, 'test file', SMALL)).toThrow(
      `${path}: the test file is 5,000 bytes, larger than the limit of 4,096 bytes (docs/configuration.md, "Limits"); to read it anyway set ICABENCH_TEST_FILE_MIB=1`,
    );
    process.env.ICABENCH_TEST_FILE_MIB = '0.005';
    expect(readBoundedText(path, 'test file', SMALL)).toHaveLength(5_000);
  });

  it('refuses a sparse file of the manual cap + 1 byte without reading it, with its size in MiB', () => {
    const path = join(dir, 'huge.md');
    writeFileSync(path, '');
    truncateSync(path, limitBytes(FILE_LIMITS.manual) + 1);
    expect(() => readBoundedText(path, 'manual file', FILE_LIMITS.manual)).toThrow(/huge\.md: the manual file is 16\.0 MiB \(16,777,217 bytes\), larger than the limit of 16 MiB .*set ICABENCH_MAX_MANUAL_MIB=17$/);
  });

  it('reads a stream (/dev/zero) only up to the cap and says so', () => {
    expect(() => readBoundedText('/dev/zero', 'test file', SMALL)).toThrow('/dev/zero: the test file is more than 4,096 bytes (read up to the cap and stopped), larger than the limit of 4,096 bytes');
    expect(() => [...readBoundedLines('/dev/zero', 'test file', SMALL)]).toThrow(/more than 4,096 bytes \(read up to the cap and stopped\)/);
  });

  it('refuses a limit variable that is not a size, by name', () => {
    process.env.ICABENCH_TEST_FILE_MIB = 'lots';
    expect(() => limitBytes(SMALL)).toThrow('ICABENCH_TEST_FILE_MIB: expected a size in MiB above 0 (e.g. 0.015625), got "lots"');
    process.env.ICABENCH_TEST_FILE_MIB = '-1';
    expect(() => limitBytes(SMALL)).toThrow(/ICABENCH_TEST_FILE_MIB: expected a size in MiB above 0/);
  });
});

describe('readBoundedLines', () => {
  it('yields numbered lines without their breaks (LF and CRLF), a last line without a break too, and drops a byte-order mark', () => {
    expect(lines(write('a.txt', '\uFEFFone\r\ntwo\n\nfour'))).toEqual(['1:one', '2:two', '3:', '4:four']);
    expect(lines(write('b.txt', 'one\n'))).toEqual(['1:one']);
    expect(lines(write('empty.txt', ''))).toEqual([]);
  });

  it('keeps multi-byte characters whole across its 64 KiB chunks', () => {
    const text = `${'a'.repeat(65_535)}é€\n${'😀'.repeat(40_000)}\n`;
    const read = [...readBoundedLines(write('wide.txt', text), 'test file', FILE_LIMITS.testSet)].map((l) => l.text);
    expect(read).toEqual(text.split('\n').slice(0, 2));
  });

  it('refuses UTF-16 and names the first byte that is not UTF-8 with its offset in the file', () => {
    expect(() => lines(write('u16.txt', Buffer.from('\uFEFFhello', 'utf16le')))).toThrow(/u16\.txt: the test file is UTF-16 text/);
    expect(() => lines(write('latin.txt', Buffer.concat([Buffer.from('ok\nca'), Buffer.from([0xe9]), Buffer.from('\n')])))).toThrow(/latin\.txt: the test file is not UTF-8 text \(invalid byte 0xe9 at byte 5\)/);
  });
});
