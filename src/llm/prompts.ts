import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sep } from 'node:path';
import { packagePath } from '../domain/package-files.ts';

/**
 * Prompts live as versioned files under prompts/ (e.g. prompts/judge/turn-labels.v1.md), so a
 * prompt change is a new version and a run records which one it used. A file is split into
 * sections by lines "=== name ===" (e.g. system, user); "{{name}}" placeholders are filled at render time.
 */
export const PROMPTS_DIR = packagePath('prompts') + sep;

const cache = new Map<string, Record<string, string>>();

function readPromptFile(id: string): { file: string; text: string } {
  const file = `${PROMPTS_DIR}${id}.md`;
  try {
    return { file, text: readFileSync(file, 'utf8') };
  } catch {
    throw new Error(`prompt file ${file} not found (prompt id "${id}")`);
  }
}

/** @param id path under prompts/ without ".md", version included: "simulator/extract-targets.v1" */
export function loadPromptSections(id: string): Record<string, string> {
  const cached = cache.get(id);
  if (cached) return cached;
  const { file, text } = readPromptFile(id);
  const sections: Record<string, string> = {};
  let current: string | null = null;
  const lines: string[] = [];
  const flush = () => {
    if (current) sections[current] = lines.join('\n').trim();
    lines.length = 0;
  };
  for (const line of text.split('\n')) {
    const header = /^===\s*([\w-]+)\s*===\s*$/.exec(line);
    if (header) {
      flush();
      current = header[1];
    } else if (current) lines.push(line);
  }
  flush();
  if (Object.keys(sections).length === 0) throw new Error(`prompt file ${file} has no "=== section ===" headers`);
  cache.set(id, sections);
  return sections;
}

/** A prompt id with the first 16 hex digits of its file's SHA-256, as a run records it: an edit without a new version still shows. */
export function promptVersion(id: string): { id: string; sha256: string } {
  const { text } = readPromptFile(id);
  return { id, sha256: createHash('sha256').update(text).digest('hex').slice(0, 16) };
}

/** Fills {{placeholders}}; a placeholder without a value is an error, so a prompt never goes out half-filled. */
export function renderTemplate(template: string, values: Record<string, string>, where: string): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${where}: no value for placeholder {{${name}}}`);
    return value;
  });
}

/** The system and user messages of a prompt file, rendered. */
export function renderPrompt(id: string, values: Record<string, string>): { system: string; user: string } {
  const sections = loadPromptSections(id);
  if (sections.system === undefined || sections.user === undefined) throw new Error(`prompt "${id}" needs "=== system ===" and "=== user ===" sections`);
  return { system: renderTemplate(sections.system, values, id), user: renderTemplate(sections.user, values, id) };
}

/**
 * The prompt every role of a dialogue campaign sends (the simulator's steps, the turn judge, the rubric evaluators):
 * one system message for all of them, then the role's own file, whose `user` section shows the dialogue first and
 * ends with the task. One conversation's calls, whichever role makes them, so share the system message and the
 * dialogue so far: the prefix a model host's slot keeps for the conversation.
 */
export const DIALOGUE_SYSTEM_PROMPT = 'dialogue/system.v1';

/** A dialogue role's prompt: the shared system message (DIALOGUE_SYSTEM_PROMPT) and the `user` section of `id`, rendered. */
export function renderDialoguePrompt(id: string, values: Record<string, string>): { system: string; user: string } {
  const sections = loadPromptSections(id);
  if (sections.user === undefined) throw new Error(`prompt "${id}" needs a "=== user ===" section`);
  return { system: loadPromptSections(DIALOGUE_SYSTEM_PROMPT).system, user: renderTemplate(sections.user, values, id) };
}

/**
 * Data from the system under test (untrusted: its replies, answers, facts) as a delimited, escaped
 * block: the value as ONE line of JSON, with <, > and & (and the JSON-legal line separators) written
 * as \u escapes, between <tag> and </tag>. Nothing inside can close the block, open a tag, or start a
 * line of its own (a fake "System:" turn); every prompt that carries such a block says it is data.
 */
export function delimitUntrusted(tag: string, value: unknown): string {
  return `<${tag}>${untrustedJson(value)}</${tag}>`;
}

/** The value as one line of JSON with <, >, & and the line separators as \u escapes: inside any tag it can neither close the tag nor open one. */
export function untrustedJson(value: unknown): string {
  return JSON.stringify(value ?? null).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
