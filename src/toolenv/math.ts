/** A small arithmetic evaluator for calculate_math (+ - * / % ^, parentheses, unary minus); never uses eval. */
export function evaluateArithmetic(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/%^()]|\S/g) ?? [];
  let pos = 0;
  const peek = () => tokens[pos];
  const take = () => tokens[pos++];
  const primary = (): number => {
    const t = take();
    if (t === undefined) throw new Error('unexpected end');
    if (t === '(') {
      const v = sum();
      if (take() !== ')') throw new Error('missing )');
      return v;
    }
    if (t === '-') return -power();
    if (t === '+') return power();
    if (/^\d/.test(t)) return Number(t);
    throw new Error(`unexpected "${t}"`);
  };
  const power = (): number => {
    const base = primary();
    if (peek() === '^') {
      take();
      return base ** power();
    }
    return base;
  };
  const product = (): number => {
    let v = power();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = take();
      const r = power();
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (peek() === '+' || peek() === '-') v = take() === '+' ? v + product() : v - product();
    return v;
  };
  const value = sum();
  if (pos !== tokens.length) throw new Error(`unexpected "${tokens[pos]}"`);
  if (!Number.isFinite(value)) throw new Error('result is not a finite number');
  return Number(value.toFixed(10));
}
