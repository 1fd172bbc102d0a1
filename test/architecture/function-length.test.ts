import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { API } from 'typescript/unstable/sync';
import { isFunctionLikeDeclaration, SyntaxKind, type Node, type SourceFile } from 'typescript/unstable/ast';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/repoData.ts';

/**
 * No function in src/ is longer than MAX_LINES (the team's guide: a long function is split into named steps). Every
 * function, method, accessor, constructor and arrow function is measured on the TypeScript compiler's own syntax tree
 * (the project of tsconfig.json), from the first to the last line of its body. There is no exception list.
 */
const MAX_LINES = 100;


interface Measured {
  where: string;
  name: string;
  lines: number;
}

/** The length of every function body of a parsed source file (nested functions each count on their own). */
function functionLengths(file: SourceFile, where: string): Measured[] {
  const found: Measured[] = [];
  const line = (position: number) => file.getLineAndCharacterOfPosition(position).line;
  const visit = (node: Node): undefined => {
    if (isFunctionLikeDeclaration(node) && node.body) {
      const first = line(node.body.getStart(file));
      const named = 'name' in node ? (node.name as { text?: unknown } | undefined) : undefined;
      const name = typeof named?.text === 'string' ? named.text : SyntaxKind[node.kind];
      found.push({ where: `${where}:${first + 1}`, name, lines: line(node.body.end) - first + 1 });
    }
    node.forEachChild(visit);
    return undefined;
  };
  visit(file);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('function length in src/', () => {
  it(`no function body is longer than ${MAX_LINES} lines`, { timeout: 120_000 }, () => {
    const api = new API({ cwd: REPO_ROOT });
    try {
      const project = api.updateSnapshot({ openProject: join(REPO_ROOT, 'tsconfig.json') }).getProjects()[0];
      const src = sourceFiles(join(REPO_ROOT, 'src'));
      // every file of src/ is in the project: a file left out would never be measured
      const inProject = new Set(project.program.getSourceFileNames());
      expect(src.filter((path) => !inProject.has(path)).map((path) => relative(REPO_ROOT, path))).toEqual([]);
      const measured = src.flatMap((path) => functionLengths(project.program.getSourceFile(path)!, relative(REPO_ROOT, path)));
      // the walk sees what it should: thousands of functions, arrow functions and methods among them
      expect(measured.length).toBeGreaterThan(2000);
      const long = measured.filter((m) => m.lines > MAX_LINES).map((m) => `${m.where} ${m.name}: ${m.lines} lines`);
      expect(long, 'split these into named steps').toEqual([]);
    } finally {
      api.close();
    }
  });
});
