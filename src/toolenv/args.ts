import type { JsonSchemaNode } from './catalog.ts';

/**
 * Checks tool-call arguments against a tool's JSON schema (the subset tools.json uses). Two kinds of problem, as in
 * CAR-bench: a structural one (wrong type, missing required, unknown enum value, unknown property) is what pydantic
 * rejects before the tool runs: an "Error: ..." text that is not a tool execution error; a range one (minimum,
 * maximum, multipleOf) is the tool rejecting the value in its own code, which IS a tool execution error.
 */
export interface ArgProblems {
  structural: string[];
  range: string[];
}

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
    case 'float':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      return true;
  }
}

function check(node: JsonSchemaNode, value: unknown, path: string, out: ArgProblems): void {
  const types = node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
  if (types.length && !types.some((t) => typeMatches(t, value))) {
    out.structural.push(`${path || '(arguments)'}: expected ${types.join(' or ')}, got ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}`);
    return;
  }
  if (node.enum && !node.enum.some((e) => e === value)) out.structural.push(`${path}: expected one of ${node.enum.map((e) => JSON.stringify(e)).join(', ')}, got ${JSON.stringify(value)}`);
  if (typeof value === 'number') {
    if (node.minimum !== undefined && value < node.minimum) out.range.push(`${path}: ${value} is below the minimum ${node.minimum}`);
    if (node.maximum !== undefined && value > node.maximum) out.range.push(`${path}: ${value} is above the maximum ${node.maximum}`);
    if (node.multipleOf !== undefined && Math.abs(value / node.multipleOf - Math.round(value / node.multipleOf)) > 1e-9) out.range.push(`${path}: ${value} is not a multiple of ${node.multipleOf}`);
  }
  if (Array.isArray(value) && node.items) value.forEach((item, i) => check(node.items!, item, `${path}[${i}]`, out));
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && node.properties) {
    const record = value as Record<string, unknown>;
    for (const req of node.required ?? []) if (!(req in record) || record[req] === undefined) out.structural.push(`${path ? `${path}.` : ''}${req}: required`);
    for (const [key, child] of Object.entries(record)) {
      const sub = node.properties[key];
      if (typeof sub === 'boolean') continue;
      if (!sub) {
        // CAR-bench's nested pydantic models are lenient about extra keys except where additionalProperties is false
        if (node.additionalProperties === false || !path) out.structural.push(`${path ? `${path}.` : ''}${key}: unknown parameter`);
        continue;
      }
      if (child === null && !(Array.isArray(sub.type) && sub.type.includes('null')) && !(node.required ?? []).includes(key)) continue;
      check(sub, child, path ? `${path}.${key}` : key, out);
    }
  }
}

export function checkArguments(schema: JsonSchemaNode, args: unknown): ArgProblems {
  const out: ArgProblems = { structural: [], range: [] };
  check(schema, args, '', out);
  return out;
}
