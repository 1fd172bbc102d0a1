import type { Task } from './tasks.ts';
import { checkArguments } from './args.ts';
import { maskResultPath, parseRemovedParts, toolByName, offeredTools, type OpenAiTool, type Removals } from './catalog.ts';
import { loadMockData, type MockData } from './mockdata.ts';
import { NavigationDb } from './navdb.ts';
import { pickDynamicState, pickFixedContext, stateKey, type DynamicState, type FixedContext } from './state.ts';
import { TOOL_IMPLEMENTATIONS, ToolRejection, type Plan, type ToolContext } from './tools.ts';

/** One tool call's outcome as the environment records it. */
export interface ToolOutcome {
  name: string;
  arguments: unknown;
  /** the text returned to the agent (JSON) */
  output: string;
  status: 'success' | 'rejected' | 'invalid' | 'unknown_tool';
  /** a CAR-bench tool execution error (counts for Δ_exec) */
  executionError?: string;
}

/**
 * The in-car tool environment for one task trial: the dynamic state and fixed context from `context_init_config`,
 * the vendored mock data, the task's synthetic navigation db, and the runtime error lists CAR-bench keeps
 * (tool execution errors, AUT policy errors written by tools).
 */
export class ToolEnvironment {
  state: DynamicState;
  readonly fixed: FixedContext;
  readonly executionErrors: string[] = [];
  readonly policyErrors: Array<{ rule: string; message: string }> = [];
  readonly removals: Removals;
  private readonly plans = new Map<string, Plan>();
  private activePlan: string | null = null;

  constructor(
    readonly task: Task,
    readonly nav: NavigationDb,
    readonly mock: MockData = loadMockData(),
    /** apply the task's removed_part (hallucination tasks); the ground-truth replay runs without it */
    applyRemovals = true,
  ) {
    this.state = pickDynamicState(task.context_init_config);
    this.fixed = pickFixedContext(task.context_init_config);
    this.removals = parseRemovedParts(applyRemovals ? task.removed_part : null);
  }

  static forTask(task: Task, options: { applyRemovals?: boolean; nav?: NavigationDb } = {}): ToolEnvironment {
    const mock = loadMockData();
    return new ToolEnvironment(task, options.nav ?? NavigationDb.forTask(task, mock), mock, options.applyRemovals ?? true);
  }

  /** The tool schemas offered to the agent (removed tools and parameters taken out). */
  tools(): OpenAiTool[] {
    return offeredTools(this.removals);
  }

  stateKey(): string {
    return stateKey(this.state);
  }

  snapshot(): DynamicState {
    return structuredClone(this.state);
  }

  /** Runs one tool call. Never throws: every problem becomes a recorded outcome with a readable reason. */
  execute(name: string, args: unknown): ToolOutcome {
    const tool = toolByName(name);
    const impl = TOOL_IMPLEMENTATIONS[name];
    if (!tool || !impl) return { name, arguments: args, status: 'unknown_tool', output: `Error: unknown tool "${name}"` };
    const problems = checkArguments(tool.openai_schema.function.parameters, args);
    if (problems.structural.length) return { name, arguments: args, status: 'invalid', output: `Error: invalid arguments for ${name}: ${problems.structural.join('; ')}` };
    const ctxState = structuredClone(this.state);
    const ctx: ToolContext = {
      state: ctxState,
      fixed: this.fixed,
      calendarId: this.task.calendar_id,
      mock: this.mock,
      nav: this.nav,
      plans: this.plans,
      activePlan: this.activePlan,
      className: tool.class_name,
      policyError: (rule, message) => this.policyErrors.push({ rule, message }),
    };
    try {
      if (problems.range.length) throw new ToolRejection(`${tool.class_name}_000`, `value out of range: ${problems.range.join('; ')}`);
      let result: unknown = impl(args as Record<string, unknown>, ctx);
      this.state = ctx.state;
      this.activePlan = ctx.activePlan;
      for (const path of this.removals.results.get(name) ?? []) result = maskResultPath(result, path);
      return { name, arguments: args, status: 'success', output: JSON.stringify({ status: 'SUCCESS', result }) };
    } catch (error) {
      if (!(error instanceof ToolRejection)) {
        return { name, arguments: args, status: 'invalid', output: `Error: ${name} failed: ${(error as Error).message}` };
      }
      const text = `${error.code}: ${error.message}`;
      if (error.counted) this.executionErrors.push(text);
      if (error.policyRule) this.policyErrors.push({ rule: error.policyRule, message: text });
      return { name, arguments: args, status: 'rejected', output: JSON.stringify({ status: 'FAILURE', error: text }), executionError: error.counted ? text : undefined };
    }
  }
}
