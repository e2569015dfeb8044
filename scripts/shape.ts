/**
 * `npm run shape`: the figures of issue 21's "Done when", measured on the working tree and printed as
 * `FIGURE name=value` lines (one per figure, stable names, so two runs can be diffed):
 *
 * - `functions_over_{80,150,200}.<room>`: functions (declarations, methods, arrows, function
 *   expressions) whose span, from the first token to the closing brace, is over that many lines,
 *   nested closures included in their parent's span. `longest_function.<room>` is the longest span.
 * - `env_names_outside_settings` / `env_name_sites_outside_settings`: environment variable names
 *   (UPPER_SNAKE) read or written anywhere but `shared/settings.ts`, in product and tooling code
 *   (tests apart, as `env_names_in_test`; the client's caller examples apart, as
 *   `env_names_in_caller_examples`, with the reason printed).
 * - `provider_kind_branches.infra`: comparisons and `case` clauses on a provider's kind in `infra/`.
 * - `unused_exports` / `unused_types` / `unused_files`: knip's findings (`knip.json`).
 *
 * `--list` also prints the offenders under each figure. `--no-knip` skips knip (it takes a few seconds).
 * Then one `TARGET` line per "no more than" figure of issue 21; `--check` exits 1 when one is over.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ts } from 'ts-morph';

const ROOT = resolve(import.meta.dirname, '..');
const SETTINGS_FILE = 'shared/settings.ts';
const SOURCE_DIRS = ['shared', 'functions', 'infra', 'local', 'scripts', 'bench', 'test'];
const THRESHOLDS = [80, 150, 200] as const;
const TOOLING_ROOMS = ['local', 'scripts', 'bench'];
const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
/** The receiver of an environment read or write: `process.env`, `env`, `options.env`, `childEnv`... */
const ENV_RECEIVER = /(?:^|[.\s])[A-Za-z]*(?:env|Env|ENV|environment|Environment)$/;
const ENV_WRITERS = new Set(['addEnvironment']);
/**
 * Programs that show a caller of the client (README, docs/client.md, docs/deploy.md): a caller
 * configures itself as any program does (its own variable for the API URL, the SDK's `AWS_REGION`)
 * and cannot import our settings table, which the client package does not ship. Counted under
 * their own figure, with this reason printed, not in `env_names_outside_settings`.
 */
const CALLER_EXAMPLES = 'scripts/examples/';
const CALLER_EXAMPLES_REASON =
  'they show a caller of the client, which reads its own configuration and never imports shared/settings.ts (not in the client package)';

const args = new Set(process.argv.slice(2));
const list = args.has('--list');

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'results' || entry.name.startsWith('.')) continue;
      const path = join(abs, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(?:ts|mts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
    }
  };
  walk(join(ROOT, dir));
  return out.map((p) => relative(ROOT, p));
}

/** `shared/usecases/x.ts` -> `shared/usecases`; `shared/config.ts` -> `shared/(root)`; `infra/a/b.ts` -> `infra`. */
function roomOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'shared') return parts.length > 2 ? `shared/${parts[1]}` : 'shared/(root)';
  return parts[0] ?? file;
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
}

function lineOf(sf: ts.SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}

function functionName(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText();
  }
  if (ts.isCallExpression(parent)) return `<callback of ${parent.expression.getText().slice(0, 40)}>`;
  return '<anonymous>';
}

function isFunctionWithBody(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node)) &&
    node.body !== undefined
  );
}

interface FunctionSpan extends Finding {
  readonly room: string;
  readonly lines: number;
}

function functionSpans(file: string, sf: ts.SourceFile): FunctionSpan[] {
  const spans: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionWithBody(node)) {
      const start = lineOf(sf, node.getStart(sf));
      const lines = lineOf(sf, node.getEnd()) - start + 1;
      spans.push({ file, line: start, what: functionName(node), room: roomOf(file), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return spans;
}

/** The names `shared/settings.ts` declares: every UPPER_SNAKE string literal and key in it. */
function declaredNames(sf: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) && UPPER_SNAKE.test(node.text)) {
      const parent = node.parent;
      const isEnvField = ts.isPropertyAssignment(parent) && parent.name.getText() === 'env';
      if (isEnvField || node.text.includes('_')) names.add(node.text);
    }
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && UPPER_SNAKE.test(node.name.text)) {
      if (node.name.text.includes('_')) names.add(node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return names;
}

/** Is this object literal an environment: `environment: {...}`, `env: {...}`, `const env = {...}`, `{ ...process.env }`? */
function isEnvironmentLiteral(node: ts.ObjectLiteralExpression): boolean {
  const parent = node.parent;
  const holder =
    ts.isPropertyAssignment(parent) || ts.isVariableDeclaration(parent) ? parent.name.getText() : undefined;
  if (holder !== undefined && /^(?:env|environment)$|Env$|Environment$/i.test(holder)) return true;
  return node.properties.some((p) => ts.isSpreadAssignment(p) && ENV_RECEIVER.test(p.expression.getText()));
}

/** Every place a file reads or writes an environment variable by name. */
function envSites(file: string, sf: ts.SourceFile, known: ReadonlySet<string>): Finding[] {
  const sites: Finding[] = [];
  const add = (node: ts.Node, name: string): void => {
    sites.push({ file, line: lineOf(sf, node.getStart(sf)), what: name });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && UPPER_SNAKE.test(node.name.text)) {
      if (ENV_RECEIVER.test(node.expression.getText()) || known.has(node.name.text))
        add(node, node.name.text);
    } else if (
      ts.isElementAccessExpression(node) &&
      ts.isStringLiteralLike(node.argumentExpression) &&
      UPPER_SNAKE.test(node.argumentExpression.text) &&
      ENV_RECEIVER.test(node.expression.getText())
    ) {
      add(node, node.argumentExpression.text);
      return;
    } else if (ts.isObjectLiteralExpression(node) && isEnvironmentLiteral(node)) {
      for (const p of node.properties) {
        if (
          (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) &&
          !ts.isComputedPropertyName(p.name)
        ) {
          const key = ts.isStringLiteralLike(p.name) ? p.name.text : p.name.getText();
          if (UPPER_SNAKE.test(key)) add(p, key);
        }
      }
    } else if (
      ts.isCallExpression(node) &&
      ENV_WRITERS.has(node.expression.getText().split('.').pop() ?? '')
    ) {
      const first = node.arguments[0];
      if (first !== undefined && ts.isStringLiteralLike(first)) add(first, first.text);
    } else if (ts.isStringLiteralLike(node) && known.has(node.text)) {
      const parent = node.parent;
      const counted =
        (ts.isElementAccessExpression(parent) && ENV_RECEIVER.test(parent.expression.getText())) ||
        (ts.isCallExpression(parent) && ENV_WRITERS.has(parent.expression.getText().split('.').pop() ?? ''));
      if (!counted) add(node, node.text);
    } else if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && known.has(node.name.text)) {
      if (!(ts.isObjectLiteralExpression(node.parent) && isEnvironmentLiteral(node.parent)))
        add(node, node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return sites;
}

/** A comparison with, or a `case` of, a provider kind: `provider.kind === 'sns'`, `kind !== 'twilio'`, `switch (p.kind)`. */
function isKindExpression(node: ts.Expression): boolean {
  const text = node.getText();
  if (ts.isPropertyAccessExpression(node) && node.name.text === 'kind') return /provider/i.test(text);
  return ts.isIdentifier(node) && /^(?:provider)?kind$/i.test(node.text);
}

function kindBranches(file: string, sf: ts.SourceFile): Finding[] {
  const sites: Finding[] = [];
  const equality = new Set([
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ]);
  const visit = (node: ts.Node): void => {
    if (
      ts.isBinaryExpression(node) &&
      equality.has(node.operatorToken.kind) &&
      (isKindExpression(node.left) || isKindExpression(node.right))
    ) {
      sites.push({ file, line: lineOf(sf, node.getStart(sf)), what: node.getText().slice(0, 60) });
    } else if (ts.isSwitchStatement(node) && isKindExpression(node.expression)) {
      for (const clause of node.caseBlock.clauses) {
        if (ts.isCaseClause(clause)) {
          sites.push({
            file,
            line: lineOf(sf, clause.getStart(sf)),
            what: `case ${clause.expression.getText()}`,
          });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return sites;
}

interface KnipFile {
  readonly file: string;
  readonly exports: readonly { name: string; line: number }[];
  readonly types: readonly { name: string; line: number }[];
  readonly files: readonly unknown[];
}

function knip(): { exports: Finding[]; types: Finding[]; files: string[] } | undefined {
  const run = spawnSync(join(ROOT, 'node_modules', '.bin', 'knip'), ['--reporter', 'json', '--no-progress'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const start = run.stdout.indexOf('{');
  if (start < 0) {
    process.stderr.write(`knip printed no report (exit ${run.status}): ${run.stderr.slice(0, 500)}\n`);
    return undefined;
  }
  const report = JSON.parse(run.stdout.slice(start)) as { issues: KnipFile[] };
  const pick = (key: 'exports' | 'types'): Finding[] =>
    report.issues.flatMap((f) => f[key].map((e) => ({ file: f.file, line: e.line, what: e.name })));
  return {
    exports: pick('exports'),
    types: pick('types'),
    files: report.issues.filter((f) => f.files.length > 0).map((f) => f.file),
  };
}

/** Issue 21's "no more than" figures. */
const TARGETS: Readonly<Record<string, number>> = {
  'functions_over_80.shared/usecases': 0,
  'functions_over_150.tooling': 0,
  'functions_over_200.product_and_tooling': 0,
  env_names_outside_settings: 0,
  'provider_kind_branches.infra': 0,
};
const measured = new Map<string, number>();

function figure(name: string, value: number, findings: readonly Finding[] = []): void {
  measured.set(name, value);
  console.log(`FIGURE ${name}=${value}`);
  if (list) for (const f of findings) console.log(`  ${f.file}:${f.line} ${f.what}`);
}

const files = SOURCE_DIRS.flatMap(sourceFiles).sort();
const parsed = new Map(files.map((f) => [f, parse(f)] as const));
const settings = parsed.get(SETTINGS_FILE);
const known = settings === undefined ? new Set<string>() : declaredNames(settings);

// Functions by room.
const spans = files.flatMap((f) => functionSpans(f, parsed.get(f) as ts.SourceFile));
const rooms = [...new Set(spans.map((s) => s.room))].sort();
const groups: [string, (s: FunctionSpan) => boolean][] = [
  ['shared', (s) => s.room.startsWith('shared/')],
  ...rooms
    .filter((r) => r.startsWith('shared/'))
    .map((r): [string, (s: FunctionSpan) => boolean] => [r, (s) => s.room === r]),
  ...['functions', 'infra', ...TOOLING_ROOMS].map((r): [string, (s: FunctionSpan) => boolean] => [
    r,
    (s) => s.room === r,
  ]),
  ['tooling', (s) => TOOLING_ROOMS.includes(s.room)],
  ['product_and_tooling', (s) => s.room !== 'test'],
  ['test', (s) => s.room === 'test'],
];
for (const [group, member] of groups) {
  const mine = spans.filter(member);
  for (const limit of THRESHOLDS) {
    const over = mine.filter((s) => s.lines > limit).sort((a, b) => b.lines - a.lines);
    figure(
      `functions_over_${limit}.${group}`,
      over.length,
      over.map((s) => ({ ...s, what: `${s.what} (${s.lines} lines)` })),
    );
  }
  figure(`longest_function.${group}`, Math.max(0, ...mine.map((s) => s.lines)));
}

// Environment variable names outside the settings table.
const envByFile = files
  .filter((f) => f !== SETTINGS_FILE)
  .flatMap((f) => envSites(f, parsed.get(f) as ts.SourceFile, known));
// The examples' plain-Node programs (.mjs) too: they are callers as much as the TypeScript ones.
const callerScripts = readdirSync(join(ROOT, CALLER_EXAMPLES))
  .filter((name) => /\.(?:mjs|js)$/.test(name))
  .map((name) => `${CALLER_EXAMPLES}${name}`);
const callerSites = [
  ...envByFile.filter((s) => s.file.startsWith(CALLER_EXAMPLES)),
  ...callerScripts.flatMap((f) => envSites(f, parse(f), known)),
];
const product = envByFile.filter((s) => !s.file.startsWith('test/') && !s.file.startsWith(CALLER_EXAMPLES));
const inTest = envByFile.filter((s) => s.file.startsWith('test/'));
figure('settings_table_names', known.size);
figure('env_names_outside_settings', new Set(product.map((s) => s.what)).size);
figure('env_name_sites_outside_settings', product.length, product);
for (const room of ['shared', 'functions', 'infra', 'local', 'scripts', 'bench']) {
  figure(
    `env_name_sites_outside_settings.${room}`,
    product.filter((s) => s.file.startsWith(`${room}/`)).length,
  );
}
figure('env_names_in_test', new Set(inTest.map((s) => s.what)).size);
figure('env_names_in_caller_examples', new Set(callerSites.map((s) => s.what)).size);
figure('env_name_sites_in_caller_examples', callerSites.length, callerSites);
console.log(
  `NOTE env_names_in_caller_examples: not counted outside the settings table because ${CALLER_EXAMPLES_REASON}`,
);

// Provider kind branches in infra/.
const branches = files
  .filter((f) => f.startsWith('infra/'))
  .flatMap((f) => kindBranches(f, parsed.get(f) as ts.SourceFile));
figure('provider_kind_branches.infra', branches.length, branches);
figure('provider_kind_branch_files.infra', new Set(branches.map((b) => b.file)).size);

// Unused exports.
if (!args.has('--no-knip')) {
  const found = knip();
  if (found !== undefined) {
    figure('unused_exports', found.exports.length, found.exports);
    figure('unused_types', found.types.length, found.types);
    figure(
      'unused_files',
      found.files.length,
      found.files.map((file) => ({ file, line: 1, what: 'unused file' })),
    );
  }
}

let over = 0;
for (const [name, limit] of Object.entries(TARGETS)) {
  const value = measured.get(name) ?? Number.NaN;
  const ok = value <= limit;
  if (!ok) over++;
  console.log(`TARGET ${name}<=${limit} ${ok ? 'met' : 'over'} (${value})`);
}
if (args.has('--check') && over > 0) process.exitCode = 1;
