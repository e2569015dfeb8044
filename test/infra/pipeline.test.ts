import { Duration } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import {
  functionByDescription,
  onlyResource,
  referencedId,
  SYNTH_TIMEOUT_MS,
  synthTemplate,
} from './support.js';

type Props = Record<string, unknown>;

describe('pipeline: queues, functions, event sources and schedule', () => {
  let template: Template;
  let resources: Record<string, { Type: string; Properties: Props }>;
  const ids = { forwarder: '', sender: '', reconciler: '', api: '' };

  beforeAll(() => {
    ({ template } = synthTemplate());
    resources = template.toJSON().Resources;
    ids.forwarder = functionByDescription(template, 'table stream -> dispatch queue').logicalId;
    ids.sender = functionByDescription(template, 'calls the SMS provider once').logicalId;
    ids.reconciler = functionByDescription(template, 'reconciles unknown outcomes').logicalId;
    ids.api = functionByDescription(template, 'HTTP API').logicalId;
  }, SYNTH_TIMEOUT_MS);

  const props = (logicalId: string) => (resources[logicalId] as { Properties: Props }).Properties;
  const queueIdOf = (value: unknown) => referencedId(value) as string;

  describe('every function (the project-wide NodejsFunction)', () => {
    it('runs Node.js 24 on ARM64 without X-Ray tracing (the default), JSON logs into its own log group, ESM handler', () => {
      for (const id of Object.values(ids)) {
        const fn = props(id);
        expect(fn).toMatchObject({
          Runtime: 'nodejs24.x',
          Architectures: ['arm64'],
          Handler: 'index.handler',
          LoggingConfig: { LogFormat: 'JSON' },
        });
        expect(fn.TracingConfig).toBeUndefined();
        const logGroupId = referencedId((fn.LoggingConfig as { LogGroup: unknown }).LogGroup);
        // Kept when the stack goes; removed if the first create rolls back.
        expect(resources[logGroupId as string]).toMatchObject({
          Type: 'AWS::Logs::LogGroup',
          Properties: { RetentionInDays: 90 },
          DeletionPolicy: 'RetainExceptOnCreate',
        });
      }
    });

    it('enables source maps and reads the configuration names of shared/config.ts', () => {
      for (const id of Object.values(ids)) {
        const env = (props(id).Environment as { Variables: Record<string, unknown> }).Variables;
        expect(env).toMatchObject({
          NODE_OPTIONS: '--enable-source-maps',
          PROVIDER: 'sns',
          CIPHER: 'kms',
          EVIDENCE_RETENTION_DAYS: '400',
        });
        for (const name of [
          'TABLE_NAME',
          'DISPATCH_QUEUE_URL',
          'KMS_KEY_ID',
          'SNS_DELIVERY_LOG_GROUPS',
          'FINGERPRINT_KEY_SECRET_ARN',
        ]) {
          expect(env[name], name).toBeDefined();
        }
      }
    });

    it('has a role of its own without managed policies', () => {
      const roles = new Set(Object.values(ids).map((id) => referencedId(props(id).Role)));
      expect(roles.size).toBe(4);
      for (const roleId of roles) {
        expect(props(roleId as string).ManagedPolicyArns).toBeUndefined();
      }
    });
  });

  describe('dispatch queue and dead-letter queue', () => {
    it('has a visibility timeout of at least 6x the sender timeout and a DLQ after >= 5 receives', () => {
      // Prepare
      const senderTimeout = props(ids.sender).Timeout as number;
      const mapping = onlyResource(template, 'AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: ids.sender },
      });
      const queueId = queueIdOf(mapping.properties.EventSourceArn);

      // Act
      const queue = props(queueId);
      const redrive = queue.RedrivePolicy as { maxReceiveCount: number; deadLetterTargetArn: unknown };

      // Assess
      expect(senderTimeout).toBe(30);
      expect(queue.VisibilityTimeout as number).toBeGreaterThanOrEqual(6 * senderTimeout);
      expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(5);
      expect(resources[queueIdOf(redrive.deadLetterTargetArn)]?.Type).toBe('AWS::SQS::Queue');
    });

    it('encrypts every queue and denies every request without TLS', () => {
      const queues = template.findResources('AWS::SQS::Queue');
      // dispatch + DLQ, forwarder failures, reconcile + status poll + their DLQ
      expect(Object.keys(queues)).toHaveLength(6);
      for (const [queueId, queue] of Object.entries(queues)) {
        expect((queue as { Properties: Props }).Properties.SqsManagedSseEnabled).toBe(true);
        template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: queueId }],
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({
                Effect: 'Deny',
                Action: 'sqs:*',
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              }),
            ]),
          },
        });
      }
    });
  });

  describe('forwarder: the table stream event source', () => {
    let mapping: Props;
    beforeAll(() => {
      mapping = onlyResource(template, 'AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: ids.forwarder },
      }).properties;
    }, SYNTH_TIMEOUT_MS);

    it('reads the table stream with partial batch failures, bisection and a record age under 24 h', () => {
      const tableId = onlyResource(template, 'AWS::DynamoDB::Table').logicalId;
      expect(mapping).toMatchObject({
        EventSourceArn: { 'Fn::GetAtt': [tableId, 'StreamArn'] },
        StartingPosition: 'TRIM_HORIZON',
        BisectBatchOnFunctionError: true,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      expect(mapping.MaximumRecordAgeInSeconds as number).toBeGreaterThan(0);
      expect(mapping.MaximumRecordAgeInSeconds as number).toBeLessThan(Duration.hours(24).toSeconds());
      expect(mapping.MaximumRetryAttempts as number).toBeGreaterThan(0);
    });

    it('sends records that keep failing to an on-failure queue (not the dispatch queue)', () => {
      const destination = (mapping.DestinationConfig as { OnFailure: { Destination: unknown } }).OnFailure
        .Destination;
      const failureQueueId = queueIdOf(destination);
      const dispatchQueueId = queueIdOf(
        onlyResource(template, 'AWS::Lambda::EventSourceMapping', { FunctionName: { Ref: ids.sender } })
          .properties.EventSourceArn,
      );
      expect(resources[failureQueueId]?.Type).toBe('AWS::SQS::Queue');
      expect(failureQueueId).not.toBe(dispatchQueueId);
    });

    it('filters on command items that are accepted after an INSERT or MODIFY', () => {
      // Prepare
      const filters = (mapping.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters;

      // Act
      const patterns = filters.map((f) => JSON.parse(f.Pattern) as Record<string, unknown>);

      // Assess
      expect(patterns).toEqual([
        {
          eventName: ['INSERT', 'MODIFY'],
          dynamodb: {
            Keys: { [TableSchema.sortKey]: { S: [TableSchema.commandSortKey] } },
            NewImage: { state: { S: ['accepted'] } },
          },
        },
      ]);
    });
  });

  describe('sender: the dispatch queue event source', () => {
    it('reports batch item failures, with a bounded batch and concurrency', () => {
      const mapping = onlyResource(template, 'AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: ids.sender },
      }).properties;
      expect(mapping).toMatchObject({
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BatchSize: 10,
        ScalingConfig: { MaximumConcurrency: 10 },
      });
    });
  });

  describe('reconcile worker: two queues, urgent before polls', () => {
    it('consumes the reconcile queue (4 at once) and the status-poll queue (2), and splits the lookup rate over both', () => {
      // Prepare
      const worker = functionByDescription(template, 'reconcile worker, one due key').logicalId;
      const mappings = Object.values(
        template.findResources('AWS::Lambda::EventSourceMapping', {
          Properties: { FunctionName: { Ref: worker } },
        }),
      ).map((m) => (m as { Properties: Props }).Properties);
      const byQueue = new Map(
        mappings.map((m) => [
          referencedId(m.EventSourceArn) as string,
          (m.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency,
        ]),
      );
      const reconcileEnv = (props(ids.reconciler).Environment as { Variables: Record<string, unknown> })
        .Variables;
      const workerEnv = (props(worker).Environment as { Variables: Record<string, unknown> }).Variables;
      // Assess: the pass knows both queues; each is one event source of the worker.
      const reconcileQueue = referencedId(reconcileEnv.RECONCILE_QUEUE_URL) as string;
      const pollQueue = referencedId(reconcileEnv.RECONCILE_POLL_QUEUE_URL) as string;
      expect(reconcileQueue).toMatch(/ReconcileQueue/);
      expect(pollQueue).toMatch(/StatusPollQueue/);
      expect(Object.fromEntries(byQueue)).toEqual({ [reconcileQueue]: 4, [pollQueue]: 2 });
      // SNS: 4 FilterLogEvents a second for the account, over the 6 containers that can run at once.
      expect(Number(workerEnv.PROVIDER_LOOKUP_RATE_PER_SECOND)).toBeCloseTo(4 / 6);
      // Both queues dead-letter to the reconcile DLQ.
      const dlqOf = (id: string) =>
        referencedId((props(id).RedrivePolicy as { deadLetterTargetArn: unknown }).deadLetterTargetArn);
      expect(dlqOf(pollQueue)).toBe(dlqOf(reconcileQueue));
    });
  });

  describe('reconciler: the schedule', () => {
    it('runs every minute by default, reserves no concurrency, and drops stale ticks', () => {
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(1 minute)',
        State: 'ENABLED',
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [ids.reconciler, 'Arn'] } })],
      });
      expect(props(ids.reconciler).ReservedConcurrentExecutions).toBeUndefined();
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: ids.reconciler },
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: 60,
      });
    });

    it('reserves concurrency only when the setting asks for it', () => {
      // Act
      const { template: reserved } = synthTemplate({ reconcilerReservedConcurrency: 2 });

      // Assess
      const fn = functionByDescription(reserved, 'reconciles unknown outcomes');
      expect(fn.properties.ReservedConcurrentExecutions).toBe(2);
      expect(() => synthTemplate({ reconcilerReservedConcurrency: 0 })).toThrow(
        /reconcilerReservedConcurrency must be a positive integer/,
      );
    });

    it('takes another rate from the props', () => {
      const { template: fiveMinutes } = synthTemplate({ reconcileSchedule: Duration.minutes(5) });
      fiveMinutes.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
      // Passes 10 s apart over the whole period, and room for the last one.
      const fn = functionByDescription(fiveMinutes, 'reconciles unknown outcomes').properties;
      expect((fn.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
        RECONCILE_PASSES_PER_RUN: '30',
      });
      expect(fn.Timeout).toBe(360);
    });

    it('runs a pass every 10 s within each scheduled minute (6 per invocation), inside its timeout', () => {
      const fn = props(ids.reconciler);
      expect((fn.Environment as { Variables: Record<string, unknown> }).Variables).toMatchObject({
        RECONCILE_PASSES_PER_RUN: '6',
      });
      expect(fn.Timeout).toBe(120);
    });
  });
});
