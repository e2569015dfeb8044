import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it, vi } from 'vitest';
import { defineApp } from '../../infra/main.js';
import { CONTEXT_KEYS } from '../../infra/stack.js';
import { EXAMPLE_ALLOW_LIST_CONTEXT, stubCode, testApp } from './support.js';

interface Report {
  readonly pluginReports: ReadonlyArray<{
    readonly pluginName: string;
    readonly violations?: ReadonlyArray<{ readonly ruleName: string }>;
  }>;
}

/** Every `Validations.of(...).acknowledge(...)` recorded in the app: id -> reasons. */
function acknowledgments(
  app: ReturnType<typeof testApp>,
): Array<{ path: string; id: string; reason: string }> {
  return app.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id,
          reason,
        })),
      ),
  );
}

describe('cdk-nag AwsSolutionsChecks', () => {
  it('synthesizes the deployable app with no unacknowledged finding', () => {
    // Prepare: the same app `npm run synth` builds, with stub handlers and no bundling.
    const app = testApp({ validation: true, context: EXAMPLE_ALLOW_LIST_CONTEXT });
    defineApp(app, { code: stubCode() });

    // Act: an unacknowledged finding makes synthesis throw.
    const assembly = app.synth();

    // Assess
    const report = JSON.parse(
      readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8'),
    ) as Report;
    expect(report.pluginReports.flatMap((p) => p.violations ?? [])).toEqual([]);
  }, 60_000);

  it('synthesizes with cross-account invokers, an alarm email and reserved concurrency, nag-clean', () => {
    // Prepare: the README's deploy command for a caller in another account.
    const app = testApp({
      validation: true,
      context: {
        ...EXAMPLE_ALLOW_LIST_CONTEXT,
        [CONTEXT_KEYS.apiInvokerPrincipals]: '111111111111,arn:aws:iam::222222222222:role/auth-service',
        [CONTEXT_KEYS.alarmEmail]: 'ops@example.com',
        [CONTEXT_KEYS.reconcilerReservedConcurrency]: '1',
      },
    });
    defineApp(app, { code: stubCode() });

    // Act
    const assembly = app.synth();

    // Assess
    const report = JSON.parse(
      readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8'),
    ) as Report;
    expect(report.pluginReports.flatMap((p) => p.violations ?? [])).toEqual([]);
  }, 60_000);

  it('gives every acknowledgment a specific finding id and a reason', () => {
    // Prepare
    const app = testApp({ validation: true, context: EXAMPLE_ALLOW_LIST_CONTEXT });
    defineApp(app, { code: stubCode() });

    // Act
    const acks = acknowledgments(app);

    // Assess
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.id, ack.path).toMatch(/AwsSolutions-[A-Z]+\d+/);
      expect(ack.reason.length, `${ack.path} ${ack.id}`).toBeGreaterThanOrEqual(20);
    }
    // No blanket acknowledgment at stack or app level: each sits on the resource it is about.
    expect(acks.filter((a) => a.path === 'ResetNotifier' || a.path === '')).toEqual([]);
  }, 60_000);

  it('fails synthesis on a finding nobody acknowledged', () => {
    // Prepare: the app plus a queue that violates AwsSolutions-SQS3/SQS4.
    const app = testApp({ validation: true, context: EXAMPLE_ALLOW_LIST_CONTEXT });
    const stack = defineApp(app, { code: stubCode() });
    new Queue(stack, 'UnacknowledgedQueue');
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);

    // Act
    let failure: unknown;
    try {
      app.synth();
    } catch (error) {
      failure = error;
    }
    // The report is in the error (in-memory synthesis) or printed (CLI-style); read both.
    const output = `${String(failure)}\n${printed.mock.calls.flat().join('\n')}`;
    printed.mockRestore();

    // Assess
    expect(failure).toBeInstanceOf(Error);
    expect(output).toContain('AwsSolutions-SQS4');
    expect(output).toContain('UnacknowledgedQueue');
    expect(output).not.toContain('Pipeline/DispatchQueue');
  }, 60_000);
});
