import { Logger } from '@aws-lambda-powertools/logger';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { composeReconciler } from '../composition/handlers.js';
import { providerHealthFor } from '../composition/provider-health.js';
import { keptReceiptsRedrive } from '../composition/receipts.js';
import { fingerprinterFor } from '../composition/secrets.js';
import { createServiceRuntime } from '../composition.js';
import { loadConfig } from '../config.js';
import { ALL_STATES } from '../domain/states.js';
import { SETTINGS, settingsEnv } from '../settings.js';
import { type GlobalOptions, queueUrlsFor, readLocalKeys } from './connection.js';
import { runDlqList, runDlqRedrive } from './dlq.js';
import { runExport } from './export/export.js';
import { silentProgress, streamProgress } from './export/progress.js';
import { createDynamoEvidenceSource } from './export/source.js';
import { runFingerprint } from './fingerprint.js';
import { UsageError } from './output.js';
import { runReceiptsRedrive } from './receipts.js';
import { runReconcile } from './reconcile.js';
import type { CommandContext, Session } from './session.js';
import { runStatus } from './status.js';

// One function per command group: each registers its commands on the program and wires each
// action to one `run*` function with injected dependencies.

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

/** `status [key] [--event-id] [--json]`. */
export function registerStatusCommand(program: Command, { io, exitCode, withSession }: CommandContext): void {
  program
    .command('status')
    .description('show a notification (public view) and its evidence timeline; read-only')
    .argument('[idempotency_key]', 'the notification to show')
    .option('--event-id <id>', 'show every notification of this business event instead')
    .option('--json', 'print JSON: {notification, evidence} (or {event_id, items} with --event-id)')
    .action(
      async (key: string | undefined, options: { eventId?: string; json?: boolean }, command: Command) => {
        exitCode.value = await withSession(command, (session) =>
          runStatus(
            {
              store: session.store(),
              out: io.out,
              err: io.err,
              clock: io.clock,
              // Observer: reads each provider's circuit, never takes a probe. One provider: the
              // senders keep no circuit (nothing to fail over to), so there is no line.
              ...(session.connection.config.providers.length > 1
                ? {
                    circuits: {
                      health: providerHealthFor(session.connection.config, {
                        role: 'observer',
                        client: session.dynamoClient,
                      }),
                      providers: session.connection.config.providers,
                    },
                  }
                : {}),
            },
            {
              ...(key === undefined ? {} : { key }),
              ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
              ...(options.json ? { json: true } : {}),
            },
          ),
        );
      },
    );
}

/** Options of `evidence export`, as commander parses them. */
interface ExportOptions {
  from: string;
  to: string;
  eventId?: string;
  state?: string;
  format: string;
  out: string;
  pageSize: number;
  chunkSize: number;
  quiet?: boolean;
}

/** `evidence export`. */
export function registerEvidenceCommands(
  program: Command,
  { io, exitCode, withSession }: CommandContext,
): void {
  const evidence = program.command('evidence').description('evidence records for auditors');
  evidence
    .command('export')
    .description(
      'export evidence records in time order (at, then key, then seq) with a trailing manifest; ' +
        'never phone numbers, params or tokens (schema: docs/operations.md)',
    )
    .requiredOption('--from <iso>', 'start of the time range, inclusive (ISO-8601)')
    .requiredOption('--to <iso>', 'end of the time range, exclusive (ISO-8601)')
    .option('--event-id <id>', 'only this business event (uses the by-event index, no scan)')
    .addOption(new Option('--state <state>', 'only records that moved into this state').choices(ALL_STATES))
    .addOption(
      new Option('--format <format>', 'output format').choices(['jsonl', 'csv']).makeOptionMandatory(),
    )
    .requiredOption('--out <file>', 'output file (CSV also writes <file>.manifest.json)')
    .option('--page-size <n>', 'items per DynamoDB request', positiveInt, 500)
    .option('--chunk-size <n>', 'records sorted in memory before spilling a run to disk', positiveInt, 50_000)
    .option('--quiet', 'no progress on stderr')
    .action(async (options: ExportOptions, command: Command) => {
      await withSession(command, async (session) => {
        const manifest = await runExport(
          {
            source: createDynamoEvidenceSource(session.dynamoClient, session.connection.config.tableName),
            clock: io.clock,
            progress: options.quiet ? silentProgress : streamProgress(io.err),
            retentionDays: session.connection.config.evidenceRetentionDays,
            tableName: session.connection.config.tableName,
          },
          {
            from: options.from,
            to: options.to,
            ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
            ...(options.state === undefined ? {} : { state: options.state }),
            format: options.format,
            out: options.out,
            pageSize: options.pageSize,
            chunkSize: options.chunkSize,
          },
        );
        io.out.write(`${JSON.stringify({ manifest })}\n`);
      });
      exitCode.value = 0;
    });
}

/** `dlq list` and `dlq redrive`. */
export function registerDlqCommands(program: Command, { io, exitCode, withSession }: CommandContext): void {
  const dlq = program.command('dlq').description("the dispatch queue's dead-letter queue");
  const dlqDeps = async (session: Session) => {
    const urls = await queueUrlsFor(session.connection, session.sqs);
    return { sqs: session.sqs, ...urls, out: io.out, clock: io.clock, store: session.store() };
  };
  dlq
    .command('list')
    .description('show the messages in the DLQ with their keys and current states; removes nothing')
    .option('--json', 'print JSON')
    .option('--max <n>', 'look at most at this many messages', positiveInt, 1000)
    .action(async (options: { json?: boolean; max: number }, command: Command) => {
      await withSession(command, async (session) =>
        runDlqList(await dlqDeps(session), { max: options.max, ...(options.json ? { json: true } : {}) }),
      );
      exitCode.value = 0;
    });
  dlq
    .command('redrive')
    .description(
      'send DLQ messages back to the dispatch queue (the normal path), then delete them from the DLQ; ' +
        'safe because the sender is idempotent: a key that was already sent is not sent again',
    )
    .option('--dry-run', 'only print what would move')
    .option('--json', 'print JSON')
    .option('--max <n>', 'move at most this many messages', positiveInt, 1000)
    .action(async (options: { dryRun?: boolean; json?: boolean; max: number }, command: Command) => {
      const report = await withSession(command, async (session) =>
        runDlqRedrive(await dlqDeps(session), {
          max: options.max,
          ...(options.dryRun ? { dryRun: true } : {}),
          ...(options.json ? { json: true } : {}),
        }),
      );
      exitCode.value = report.failed.length ? 1 : 0;
    });
}

/** Options of `receipts redrive`, as commander parses them. */
interface ReceiptsRedriveOptions {
  keptUrl?: string;
  topicArn?: string;
  dryRun?: boolean;
  json?: boolean;
  max: number;
}

/** `receipts redrive`: the kept End User Messaging receipts back through the receipts use case. */
export function registerReceiptsCommands(
  program: Command,
  { io, exitCode, withSession }: CommandContext,
): void {
  const receipts = program
    .command('receipts')
    .description('End User Messaging receipts that failed every attempt, kept without numbers');
  receipts
    .command('redrive')
    .description(
      're-deliver the kept receipts through the receipts use case, then delete each from the kept queue; ' +
        'safe to repeat: the use case is idempotent, so a receipt redriven twice changes nothing twice',
    )
    .option(
      '--kept-url <url>',
      `the kept-receipts queue (env ${SETTINGS.keptReceiptsQueueUrl.env}; the stack output KeptReceiptsQueueUrl)`,
    )
    .option(
      '--topic-arn <arn>',
      `the events topic the receipts must name (env ${SETTINGS.eumEventsTopicArn.env}; the stack output whose key contains EumEventsTopicArn)`,
    )
    .option('--dry-run', 'only print what would be redriven')
    .option('--json', 'print JSON')
    .option('--max <n>', 'redrive at most this many receipts', positiveInt, 1000)
    .action(async (options: ReceiptsRedriveOptions, command: Command) => {
      const report = await withSession(command, async (session) => {
        const { config } = session.connection;
        const keptUrl = options.keptUrl ?? config.keptReceiptsQueueUrl;
        const topicArn = options.topicArn ?? config.eumEventsTopicArn;
        if (!keptUrl)
          throw new UsageError(
            `receipts redrive needs the kept-receipts queue: --kept-url or ${SETTINGS.keptReceiptsQueueUrl.env} (the stack output KeptReceiptsQueueUrl)`,
          );
        if (!topicArn)
          throw new UsageError(
            `receipts redrive needs the End User Messaging events topic: --topic-arn or ${SETTINGS.eumEventsTopicArn.env} (the stack output whose key contains EumEventsTopicArn)`,
          );
        return runReceiptsRedrive(
          {
            sqs: session.sqs,
            keptUrl,
            topicArn,
            redrive: keptReceiptsRedrive({
              topicArn,
              store: session.store(),
              clock: io.clock,
              policy: config.policy,
            }),
            out: io.out,
          },
          {
            max: options.max,
            ...(options.dryRun ? { dryRun: true } : {}),
            ...(options.json ? { json: true } : {}),
          },
        );
      });
      exitCode.value = report.failed.length ? 1 : 0;
    });
}

/** `reconcile [--now] [--json] [--limit]`. */
export function registerReconcileCommand(program: Command, context: CommandContext): void {
  const { io, exitCode, withSession } = context;
  program
    .command('reconcile')
    .description(
      'without --now: list what the reconciler would look at now (read-only); ' +
        'with --now: run one reconciler pass (reads provider status, never sends)',
    )
    .option('--now', 'run one reconciler pass now')
    .option('--json', 'print JSON')
    .option('--limit <n>', 'at most this many items', positiveInt, 500)
    .action(async (options: { now?: boolean; json?: boolean; limit: number }, command: Command) => {
      await withSession(command, async (session) => {
        await runReconcile(
          {
            store: session.store(),
            out: io.out,
            clock: io.clock,
            runPass: () => runReconcilerPass(session, context, options.limit),
          },
          {
            limit: options.limit,
            ...(options.now ? { now: true } : {}),
            ...(options.json ? { json: true } : {}),
          },
        );
      });
      exitCode.value = 0;
    });
}

/** `reconcile --now`: the service's own scheduled pass, run inline (no reconcile queue), bounded by `limit`. */
async function runReconcilerPass(session: Session, { io }: CommandContext, limit: number) {
  const { queueUrl } = await queueUrlsFor(session.connection, session.sqs);
  const config = { ...session.connection.config, dispatchQueueUrl: queueUrl };
  const runtime = await createServiceRuntime(config, {
    clock: io.clock,
    dynamoClient: session.dynamoClient,
    logger: new Logger({ serviceName: 'reset-notifier-cli', logLevel: 'SILENT' }),
  }).catch((error: Error) => {
    throw new UsageError(
      `${error.message}. reconcile --now needs the keys the service uses: against \`npm start\`, ` +
        `start it with --data-dir DIR and pass the same --data-dir DIR here (or set ${SETTINGS.localDataKey.env} ` +
        `and ${SETTINGS.fingerprintKey.env}); in AWS, set the reconciler function environment (${SETTINGS.cipher.env}=kms, ` +
        `${SETTINGS.kmsKey.env}, ${SETTINGS.fingerprintKeySecret.env} or ${SETTINGS.fingerprintKeyParameter.env}, ${SETTINGS.provider.env}...)`,
    );
  });
  const pass = await composeReconciler({ ...config, reconcileMaxItemsPerPass: limit }, runtime, {
    reconcileQueue: null,
  });
  return pass();
}

/**
 * `fingerprint [--json]`: numbers on standard input, their destination fingerprints under every
 * key the configuration holds (docs/security.md#fingerprint-key-rotation). Needs only the
 * fingerprint key (no table, no queue): `FINGERPRINT_KEY` or `--data-dir` locally; in AWS
 * `FINGERPRINT_KEY_SECRET_ARN` or `FINGERPRINT_KEY_PARAMETER` and `FINGERPRINT_KEY_VERSION`.
 */
export function registerFingerprintCommand(program: Command, { io, exitCode }: CommandContext): void {
  program
    .command('fingerprint')
    .description(
      'print the destination fingerprints (under every key held, the current first) of the numbers ' +
        'read from standard input, one per line, to relate evidence across a key rotation; never prints a number',
    )
    .option('--json', 'print JSON: {current_version, entries: [{line, destination_fingerprints}]}')
    .action(async (options: { json?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals() as GlobalOptions;
      const keys = globals.dataDir ? await readLocalKeys(globals.dataDir) : undefined;
      const config = loadConfig({ ...io.env, ...settingsEnv({ fingerprintKey: keys?.fingerprintKey }) });
      const fingerprinter = await fingerprinterFor(config, io.clock).catch((error: Error) => {
        throw new UsageError(
          `${error.message}. fingerprint needs the service's fingerprint key: against \`npm start\`, ` +
            `pass its --data-dir DIR (or set ${SETTINGS.fingerprintKey.env}); in AWS, set ` +
            `${SETTINGS.fingerprintKeySecret.env} or ${SETTINGS.fingerprintKeyParameter.env}, and ${SETTINGS.fingerprintKeyVersion.env}`,
        );
      });
      exitCode.value = await runFingerprint(
        { fingerprinter, lines: io.lines?.() ?? emptyLines(), out: io.out, err: io.err },
        options.json ? { json: true } : {},
      );
    });
}

async function* emptyLines(): AsyncIterable<string> {}
