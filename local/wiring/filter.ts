/**
 * Lambda's event filtering for the local event sources: a record is delivered when it matches
 * one of the mapping's patterns, and discarded otherwise ("If none of your filters are satisfied,
 * Lambda discards the record", docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering).
 * A pattern is an object whose keys must all match (nested objects descend into the record) and
 * whose leaves are arrays of alternatives: a literal equals the value, or a comparison operator.
 * An operator this matcher does not implement fails the start, so no filter is ever read as
 * kinder than Lambda's.
 */

const OPERATORS = ['prefix', 'suffix', 'anything-but', 'exists', 'numeric', 'equals-ignore-case'] as const;

/** Throws when `pattern` uses a rule the local matcher does not implement. */
export function checkPattern(pattern: unknown, path = ''): void {
  if (typeof pattern !== 'object' || pattern === null || Array.isArray(pattern)) {
    throw new Error(`event filter: ${path || 'the pattern'} must be an object`);
  }
  for (const [key, rule] of Object.entries(pattern)) {
    const at = path ? `${path}.${key}` : key;
    if (Array.isArray(rule)) {
      for (const alternative of rule) {
        if (typeof alternative !== 'object' || alternative === null) continue;
        const [operator, ...more] = Object.keys(alternative);
        if (more.length > 0 || !OPERATORS.includes(operator as (typeof OPERATORS)[number])) {
          throw new Error(`event filter: ${at} uses ${JSON.stringify(alternative)}, not run locally`);
        }
      }
    } else checkPattern(rule, at);
  }
}

/** Whether `record` matches one of `patterns` (no patterns: every record matches). */
export function matchesAny(patterns: readonly unknown[], record: unknown): boolean {
  return patterns.length === 0 || patterns.some((pattern) => matches(pattern, record));
}

function matches(pattern: unknown, value: unknown): boolean {
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  return Object.entries(pattern as Record<string, unknown>).every(([key, rule]) =>
    Array.isArray(rule)
      ? rule.some((alternative) => matchesRule(alternative, key in record, record[key]))
      : matches(rule, record[key]),
  );
}

function matchesRule(rule: unknown, present: boolean, value: unknown): boolean {
  if (typeof rule !== 'object' || rule === null) return present && value === rule;
  const [[operator, operand]] = Object.entries(rule) as [[string, unknown]];
  switch (operator) {
    case 'exists':
      return operand === present;
    case 'prefix':
      return typeof value === 'string' && value.startsWith(String(operand));
    case 'suffix':
      return typeof value === 'string' && value.endsWith(String(operand));
    case 'equals-ignore-case':
      return typeof value === 'string' && value.toLowerCase() === String(operand).toLowerCase();
    case 'anything-but': {
      const excluded = Array.isArray(operand) ? operand : [operand];
      return present && !excluded.includes(value);
    }
    case 'numeric':
      return typeof value === 'number' && numericMatches(operand as unknown[], value);
    default:
      return false;
  }
}

function numericMatches(conditions: readonly unknown[], value: number): boolean {
  for (let i = 0; i + 1 < conditions.length; i += 2) {
    const bound = Number(conditions[i + 1]);
    const ok = {
      '=': value === bound,
      '<': value < bound,
      '<=': value <= bound,
      '>': value > bound,
      '>=': value >= bound,
    }[String(conditions[i])];
    if (!ok) return false;
  }
  return true;
}
