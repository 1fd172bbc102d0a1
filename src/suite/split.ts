import { basename, dirname, extname, join } from 'node:path';
import { MAX_CONFIG_BYTES } from '../config/yaml.ts';
import { suiteToYaml, type SuiteFile } from './format.ts';

/**
 * An imported suite as the files that hold it, each small enough for `suite check` and a suite campaign to read
 * back (a suite file is read up to MAX_CONFIG_BYTES, 1 MiB): one file `out` when it fits, else `out` split into
 * NAME-1.yaml … NAME-N.yaml beside it, the conversations in order, each part a suite of its own (`suite` NAME-i).
 */
export function suiteFiles(suite: SuiteFile, out: string, comment: string, maxBytes: number = MAX_CONFIG_BYTES): Array<{ path: string; text: string; conversations: number }> {
  const whole = suiteToYaml(suite, comment);
  if (Buffer.byteLength(whole) <= maxBytes) return [{ path: out, text: whole, conversations: suite.conversations.length }];
  const stem = join(dirname(out), basename(out, extname(out)));
  // as many parts as the size asks for, then more until every part fits (a part's size follows its conversations')
  for (let parts = Math.ceil(Buffer.byteLength(whole) / (maxBytes * 0.9)); parts <= suite.conversations.length; parts++) {
    const size = Math.ceil(suite.conversations.length / parts);
    const files = Array.from({ length: Math.ceil(suite.conversations.length / size) }, (_, i) => {
      const conversations = suite.conversations.slice(i * size, (i + 1) * size);
      const text = suiteToYaml({ ...suite, suite: `${suite.suite}-${i + 1}`, conversations }, `${comment}\nPart ${i + 1}: conversations ${i * size + 1}–${i * size + conversations.length} of ${suite.conversations.length}.`);
      return { path: `${stem}-${i + 1}${extname(out) || '.yaml'}`, text, conversations: conversations.length };
    });
    if (files.every((f) => Buffer.byteLength(f.text) <= maxBytes)) return files;
  }
  throw new Error(`${out}: a single conversation of the suite is larger than ${maxBytes} bytes as YAML; it cannot be written as a suite file`);
}
