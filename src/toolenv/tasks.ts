import { z } from 'zod';
import { FILE_LIMITS, readBoundedText } from '../domain/input-files.ts';
import { describeZodError, ValidationError } from '../domain/validation.ts';
import { checkStructure } from '../protocol/structure.ts';
import { carbenchPath } from './paths.ts';
import { DynamicStateSchema, FixedContextSchema } from './state.ts';

/**
 * CAR-bench tasks as data. The JSON format is CAR-bench's own (data/carbench/tasks_*.json): one object per task with
 * every field of its pydantic `Task` model; our own tasks use the same format (docs/tool-agents.md).
 */

export const TASK_TYPES = [
  'base',
  'hallucination_missing_tool',
  'hallucination_missing_tool_parameter',
  'hallucination_missing_tool_response',
  'disambiguation_internal',
  'disambiguation_user',
] as const;
export const TaskTypeSchema = z.enum(TASK_TYPES);
export type TaskType = z.infer<typeof TaskTypeSchema>;

/** The three families pass^k is reported for. */
export type TaskFamily = 'base' | 'hallucination' | 'disambiguation';
export function taskFamily(type: TaskType): TaskFamily {
  if (type === 'base') return 'base';
  return type.startsWith('hallucination') ? 'hallucination' : 'disambiguation';
}
export const isHallucination = (type: TaskType): boolean => taskFamily(type) === 'hallucination';

export const TaskActionSchema = z.object({
  name: z.string().min(1),
  kwargs: z.record(z.string(), z.unknown()),
  index: z.number().int().nonnegative(),
  dependent_on_action_index: z.number().int().nonnegative().nullable(),
});
export type TaskAction = z.infer<typeof TaskActionSchema>;

/** `context_init_config` sets both the fixed context and all 31 dynamic state fields (scoring.md §6); all are required. */
export const ContextInitConfigSchema = FixedContextSchema.extend(DynamicStateSchema.shape);
export type ContextInitConfig = z.infer<typeof ContextInitConfigSchema>;

export const TaskSchema = z
  .object({
    task_id: z.string().min(1),
    task_type: TaskTypeSchema,
    persona: z.string(),
    calendar_id: z.string().nullable(),
    instruction: z.string().min(1),
    context_init_config: ContextInitConfigSchema,
    actions: z.array(TaskActionSchema),
    disambiguation_element_internal: z.string().nullable(),
    disambiguation_element_user: z.string().nullable(),
    disambiguation_element_note: z.string().nullable(),
    removed_part: z.array(z.string().min(1)).nullable(),
  })
  .superRefine((task, ctx) => {
    if (isHallucination(task.task_type) && !task.removed_part?.length)
      ctx.addIssue({ code: 'custom', path: ['removed_part'], message: `a ${task.task_type} task needs a non-empty removed_part` });
    if (task.task_type === 'disambiguation_internal' && !task.disambiguation_element_internal)
      ctx.addIssue({ code: 'custom', path: ['disambiguation_element_internal'], message: 'a disambiguation_internal task needs it' });
    if (task.task_type === 'disambiguation_user' && !task.disambiguation_element_user)
      ctx.addIssue({ code: 'custom', path: ['disambiguation_element_user'], message: 'a disambiguation_user task needs it' });
  });
export type Task = z.infer<typeof TaskSchema>;

/** A task (or task file) that could not be loaded: where, which, why; a campaign records it and goes on. */
export const InvalidTaskSchema = z.object({ where: z.string(), taskId: z.string(), position: z.number().int(), reason: z.string() });
export type InvalidTask = z.infer<typeof InvalidTaskSchema>;

/** A task file nests a few levels (task → context → a list of objects); deeper is a broken or hostile file. */
export const MAX_TASK_NESTING = 64;
const NO_TASK_ID = '(no task_id)';

const taskIdOf = (item: unknown): string => (typeof item === 'object' && item && typeof (item as { task_id?: unknown }).task_id === 'string' ? (item as { task_id: string }).task_id : NO_TASK_ID);

/** A task file's JSON as its array of items: JSON, an array, nested at most MAX_TASK_NESTING deep (checked without recursion). */
function taskArray(text: string, where: string): unknown[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(where, `not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(raw)) throw new ValidationError(where, 'expected a JSON array of tasks');
  const violation = checkStructure(raw, { maxDepth: MAX_TASK_NESTING, maxEntries: Number.MAX_SAFE_INTEGER, maxStringChars: Number.MAX_SAFE_INTEGER });
  if (violation) throw new ValidationError(where, `${violation.message} (a task file is an array of task objects a few levels deep; limit ${MAX_TASK_NESTING})`);
  return raw;
}

/**
 * Like parseTasks, but a task that does not validate does not stop the others: it is returned in `invalid` with the
 * reason (a campaign records it and goes on). A file that is not a JSON array is one invalid entry at position -1.
 * A task_id that appears twice is not such a task: two tasks under one id cannot both be run, scored and resumed by
 * that id, so the file is refused (a ValidationError naming both positions), not one of them dropped.
 */
export function parseTasksLenient(text: string, where: string): { tasks: Task[]; invalid: InvalidTask[] } {
  let raw: unknown[];
  try {
    raw = taskArray(text, where);
  } catch (error) {
    return { tasks: [], invalid: [{ where, taskId: '(file)', position: -1, reason: (error as ValidationError).details }] };
  }
  const tasks: Task[] = [];
  const invalid: InvalidTask[] = [];
  const seen = new Map<string, number>();
  raw.forEach((item, position) => {
    const id = taskIdOf(item);
    if (seen.has(id) && id !== NO_TASK_ID) throw duplicateId(where, id, position, seen.get(id)!);
    seen.set(id, position);
    const parsed = TaskSchema.safeParse(item);
    if (parsed.success) tasks.push(parsed.data);
    else invalid.push({ where, taskId: id, position, reason: `${taskLabel(where, id, position)}: ${describeZodError(parsed.error)}` });
  });
  return { tasks, invalid };
}

/** How a task is named in errors: `file: task ID (#position)`. */
const taskLabel = (where: string, id: string, position: number) => `${where}: task ${id} (#${position})`;

const duplicateId = (where: string, id: string, position: number, first: number) =>
  new ValidationError(taskLabel(where, id, position), `task_id: duplicate id (task #${first} has it too); each task_id must be unique`);

/**
 * Parses a task file's JSON text. Every task is validated on its own so the error names the file, the task id (or
 * position when the id itself is missing) and the field: `tasks_base.json: task base_3 (#3): actions.0.kwargs: ...`.
 */
export function parseTasks(text: string, where: string): Task[] {
  const raw = taskArray(text, where);
  const tasks: Task[] = [];
  const seen = new Map<string, number>();
  raw.forEach((item, position) => {
    const id = taskIdOf(item);
    const parsed = TaskSchema.safeParse(item);
    if (!parsed.success) throw new ValidationError(taskLabel(where, id, position), describeZodError(parsed.error));
    if (seen.has(parsed.data.task_id)) throw duplicateId(where, id, position, seen.get(parsed.data.task_id)!);
    seen.set(parsed.data.task_id, position);
    tasks.push(parsed.data);
  });
  return tasks;
}

/** The text of a task file, read through the one bounded reader (FILE_LIMITS.taskFile: CAR-bench's largest split is under 1 MB; UTF-8 only; errors name the file). */
export function readTaskFileText(path: string): string {
  return readBoundedText(path, 'task file', FILE_LIMITS.taskFile);
}

export function loadTaskFile(path: string): Task[] {
  return parseTasks(readTaskFileText(path), path);
}

/** The vendored CAR-bench train split (data/carbench): base, hallucination, disambiguation. */
export const VENDORED_TASK_FILES = ['tasks_base.json', 'tasks_hallucination.json', 'tasks_disambiguation.json'].map(carbenchPath);

export function loadVendoredTasks(): Task[] {
  return VENDORED_TASK_FILES.flatMap((file) => loadTaskFile(file));
}
