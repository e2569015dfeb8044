/**
 * The part of CloudWatch metric math the template's alarms use, evaluated per timestamp
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html):
 * numbers, metric ids, `+ - * /`, comparisons `> < >= <= == !=` (1 or 0), `AND`/`&&`, `OR`/`||`,
 * parentheses, `FILL(m, value)` (a missing value replaced) and `IF(condition, a[, b])` (non-zero
 * condition: a; zero: b, or no value without b). An operation on a missing value has no value, as
 * a time series has no point at that timestamp. Any other function is refused (the alarm is listed
 * as not evaluated locally rather than evaluated wrongly).
 */
/** An alarm this evaluator cannot evaluate (a statistic or a math function it does not know). */
export class UnsupportedAlarmError extends Error {
  readonly code = 'unsupported_alarm';
  constructor(what: string) {
    super(`not evaluated locally: ${what}`);
    this.name = 'UnsupportedAlarmError';
  }
}

/** A parsed expression. */
export type Expression =
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'id'; readonly id: string }
  | { readonly kind: 'binary'; readonly op: string; readonly left: Expression; readonly right: Expression }
  | { readonly kind: 'negate'; readonly operand: Expression }
  | { readonly kind: 'call'; readonly name: 'FILL' | 'IF'; readonly args: readonly Expression[] };

const TOKEN = /\s*(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[A-Za-z_][A-Za-z0-9_]*|>=|<=|==|!=|&&|\|\||[-+*/(),<>])/y;

function tokenize(source: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < source.length) {
    if (/^\s*$/.test(source.slice(TOKEN.lastIndex))) break;
    const match = TOKEN.exec(source);
    if (!match) throw new UnsupportedAlarmError(`expression ${JSON.stringify(source)}`);
    tokens.push(match[1] as string);
  }
  return tokens;
}

/** Binary operators by precedence, loosest first. */
const LEVELS: ReadonlyArray<readonly string[]> = [
  ['OR', '||'],
  ['AND', '&&'],
  ['==', '!=', '>', '<', '>=', '<='],
  ['+', '-'],
  ['*', '/'],
];

/** Parses a metric-math expression; throws {@link UnsupportedAlarmError} on what it does not know. */
export function parseExpression(source: string): Expression {
  const tokens = tokenize(source);
  let at = 0;
  const peek = () => tokens[at];
  const expect = (token: string) => {
    if (tokens[at] !== token) throw new UnsupportedAlarmError(`expression ${JSON.stringify(source)}`);
    at++;
  };
  const level = (index: number): Expression => {
    if (index === LEVELS.length) return unary();
    let left = level(index + 1);
    for (;;) {
      const op = peek();
      if (op === undefined || !LEVELS[index]?.includes(op.toUpperCase())) return left;
      at++;
      left = { kind: 'binary', op: op.toUpperCase(), left, right: level(index + 1) };
    }
  };
  const unary = (): Expression => {
    if (peek() === '-') {
      at++;
      return { kind: 'negate', operand: unary() };
    }
    return primary();
  };
  const primary = (): Expression => {
    const token = tokens[at++];
    if (token === undefined) throw new UnsupportedAlarmError(`expression ${JSON.stringify(source)}`);
    if (token === '(') {
      const inner = level(0);
      expect(')');
      return inner;
    }
    if (/^\d/.test(token)) return { kind: 'number', value: Number(token) };
    if (!/^[A-Za-z_]/.test(token)) throw new UnsupportedAlarmError(`expression ${JSON.stringify(source)}`);
    if (peek() !== '(') return { kind: 'id', id: token };
    const name = token.toUpperCase();
    if (name !== 'FILL' && name !== 'IF') throw new UnsupportedAlarmError(`metric math function ${token}`);
    at++;
    const args: Expression[] = [level(0)];
    while (peek() === ',') {
      at++;
      args.push(level(0));
    }
    expect(')');
    const arity = name === 'FILL' ? [2] : [2, 3];
    if (!arity.includes(args.length))
      throw new UnsupportedAlarmError(`${name} with ${args.length} arguments`);
    return { kind: 'call', name, args };
  };
  const parsed = level(0);
  if (at !== tokens.length) throw new UnsupportedAlarmError(`expression ${JSON.stringify(source)}`);
  return parsed;
}

/** The expression's value at one timestamp, from each metric id's value there (undefined: missing). */
export function evaluateExpression(
  expression: Expression,
  values: Readonly<Record<string, number | undefined>>,
): number | undefined {
  const at = (e: Expression): number | undefined => evaluateExpression(e, values);
  switch (expression.kind) {
    case 'number':
      return expression.value;
    case 'id':
      if (!(expression.id in values)) throw new UnsupportedAlarmError(`unknown metric id ${expression.id}`);
      return values[expression.id];
    case 'negate': {
      const v = at(expression.operand);
      return v === undefined ? undefined : -v;
    }
    case 'call': {
      const [first, second, third] = expression.args as [Expression, Expression, Expression?];
      if (expression.name === 'FILL') return at(first) ?? at(second);
      const condition = at(first);
      if (condition === undefined) return undefined;
      if (condition !== 0) return at(second);
      return third === undefined ? undefined : at(third);
    }
    case 'binary': {
      const left = at(expression.left);
      const right = at(expression.right);
      if (left === undefined || right === undefined) return undefined;
      return binary(expression.op, left, right);
    }
  }
}

function binary(op: string, a: number, b: number): number | undefined {
  const bool = (v: boolean) => (v ? 1 : 0);
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      // CloudWatch has no point where a division has no finite result.
      return b === 0 ? undefined : a / b;
    case '>':
      return bool(a > b);
    case '<':
      return bool(a < b);
    case '>=':
      return bool(a >= b);
    case '<=':
      return bool(a <= b);
    case '==':
      return bool(a === b);
    case '!=':
      return bool(a !== b);
    case 'AND':
    case '&&':
      return bool(a !== 0 && b !== 0);
    default:
      return bool(a !== 0 || b !== 0);
  }
}
