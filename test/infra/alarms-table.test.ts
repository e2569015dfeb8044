import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../infra/settings.js';
import { createLocalAlarms, LOCAL_HANDLER_FUNCTIONS } from '../../local/alarms/local-stack.js';
import { localTemplate, TEMPLATE_PROVIDERS } from '../../local/iam/template.js';
import { SETTINGS } from '../../shared/settings.js';

/**
 * docs/operations.md#alarms-on-the-local-stack against the synthesized templates: every alarm the
 * fault-class table names exists, its "Fires locally" column says what the local stack evaluates,
 * and the "Not evaluated locally" table gives each unevaluated alarm with the reason the stack prints.
 */
const SECTION = (() => {
  const doc = readFileSync(join(PACKAGE_ROOT, 'docs', 'operations.md'), 'utf8');
  const start = doc.indexOf('## Alarms on the local stack');
  return doc.slice(start, doc.indexOf('\n## ', start + 1));
})();

/** The body rows of the markdown table under `heading`, as cells. */
function tableUnder(heading: string): string[][] {
  const from = SECTION.indexOf(heading);
  expect(from, heading).toBeGreaterThan(-1);
  const lines = SECTION.slice(from).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

const names = (cell: string) => [...cell.matchAll(/`([A-Za-z0-9]+)`/g)].map((m) => m[1] as string);

/** Per alarm name: whether each provider's template has it evaluated locally, and why not. */
const seen = new Map<string, { evaluated: boolean[]; reasons: string[] }>();

beforeAll(async () => {
  for (const provider of TEMPLATE_PROVIDERS) {
    const { monitor } = createLocalAlarms({
      template: await localTemplate(provider),
      queueUrls: {
        [SETTINGS.dispatchQueueUrl.env]: 'http://127.0.0.1/dispatch',
        [SETTINGS.reconcileQueueUrl.env]: 'http://127.0.0.1/reconcile',
        [SETTINGS.reconcilePollQueueUrl.env]: 'http://127.0.0.1/poll',
      },
      invoked: Object.values(LOCAL_HANDLER_FUNCTIONS),
      // Never called: nothing is evaluated here.
      sqs: new SQSClient({ region: 'us-east-1' }),
      clock: { now: () => 0 },
    });
    for (const alarm of monitor.evaluated) {
      const entry = seen.get(alarm.name) ?? { evaluated: [], reasons: [] };
      entry.evaluated.push(true);
      seen.set(alarm.name, entry);
    }
    for (const { alarm, reason } of monitor.unevaluated) {
      const entry = seen.get(alarm) ?? { evaluated: [], reasons: [] };
      entry.evaluated.push(false);
      entry.reasons.push(reason);
      seen.set(alarm, entry);
    }
  }
}, 600_000);

describe('docs/operations.md: fault class -> alarm', () => {
  it('names only alarms of the synthesized templates', () => {
    const named = tableUnder('### Fault class -> alarm').flatMap((row) => names(row[2] ?? ''));
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((alarm) => !seen.has(alarm))).toEqual([]);
  });

  it('says which alarms the local stack evaluates', () => {
    for (const [faultClass, , alarmCell = '', firesCell = ''] of tableUnder('### Fault class -> alarm')) {
      const alarms = names(alarmCell);
      const expected = firesCell.startsWith('yes') ? alarms : firesCell === 'no' ? [] : names(firesCell);
      const evaluated = alarms.filter((alarm) => seen.get(alarm)?.evaluated.every(Boolean));
      expect(evaluated, faultClass).toEqual(expected);
    }
  });

  it('lists every alarm the local stack does not evaluate, with the reason it prints', () => {
    const table = new Map(
      tableUnder('### Not evaluated locally').map(([alarm = '', why = '']) => [names(alarm)[0], why]),
    );
    const unevaluated = [...seen].filter(([, e]) => e.reasons.length > 0);
    expect([...table.keys()].sort()).toEqual(unevaluated.map(([alarm]) => alarm).sort());
    for (const [alarm, { reasons }] of unevaluated)
      for (const reason of reasons) expect(table.get(alarm), alarm).toContain(reason);
  });
});
