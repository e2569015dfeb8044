import { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DynamoNotificationStore } from '../adapters/dynamodb/store.js';
import { composeReconciler } from '../composition/handlers.js';
import { createServiceRuntime } from '../composition.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { ALL_STATES } from '../domain/states.js';
import { SETTINGS } from '../settings.js';
import {
  type Connection,
  dynamoClientFor,
  type GlobalOptions,
  LOCAL_DEFAULTS,
  queueUrlsFor,
  resolveConnection,
  sqsClientFor,
} from './connection.js';
import { runDlqList, runDlqRedrive } from './dlq.js';
import { runExport } from './export/export.js';
import { silentProgress, streamProgress } from './export/progress.js';
import { createDynamoEvidenceSource } from './export/source.js';
import { type TextOut, UsageError } from './output.js';
import { runReconcile } from './reconcile.js';
import { runStatus } from './status.js';

const REGION = SETTINGS.awsRegion.env;
const PROFILE = SETTINGS.awsProfile.env;

/** The process around the CLI, injectable so tests run it in-process. */
export interface CliIo {
  readonly out: TextOut;
  readonly err: TextOut;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
}

/** The real process: stdout, stderr, environment, wall clock. */
function processIo(): CliIo {
  return { out: process.stdout, err: process.stderr, env: process.env, clock: systemClock };
}

/** Clients opened for one command, closed when it ends. */
class Session {
  private dynamo: DynamoDBClient | undefined;
  private sqsClient: SQSClient | undefined;
  constructor(readonly connection: Connection) {}

  get dynamoClient(): DynamoDBClient {
    this.dynamo ??= dynamoClientFor(this.connection);
    return this.dynamo;
  }

  get sqs(): SQSClient {
    this.sqsClient ??= sqsClientFor(this.connection);
    return this.sqsClient;
  }

  store(): DynamoNotificationStore {
    return new DynamoNotificationStore({
      client: this.dynamoClient,
      tableName: this.connection.config.tableName,
      evidenceRetentionDays: this.connection.config.evidenceRetentionDays,
    });
  }

  close(): void {
    this.dynamo?.destroy();
    this.sqsClient?.destroy();
  }
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

function isConnectionRefused(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown }; message?: unknown; errors?: unknown[] };
  const text = `${String(e?.code)} ${String(e?.cause?.code)} ${String(e?.message)}`;
  return text.includes('ECONNREFUSED') || (e?.errors ?? []).some(isConnectionRefused);
}

/**
 * Builds the `reset-notifier` program. Every action resolves its connection (local stack or AWS),
 * opens clients, runs one `run*` function with injected dependencies and closes the clients.
 * `exitCode.value` receives the command's exit code.
 */
function createProgram(io: CliIo = processIo(), exitCode = { value: 0 }): Command {
  const program = new Command('reset-notifier');

  const withSession = async <T>(command: Command, work: (session: Session) => Promise<T>): Promise<T> => {
    const globals = command.optsWithGlobals() as GlobalOptions;
    const session = new Session(await resolveConnection(globals, io.env));
    try {
      return await work(session);
    } catch (error) {
      if (session.connection.mode === 'local' && isConnectionRefused(error)) {
        throw new Error(
          `cannot reach the local stack (DynamoDB ${session.connection.config.dynamodbEndpoint}, ` +
            `SQS ${session.connection.config.sqsEndpoint}). Is \`npm start\` running? Use --aws for AWS.`,
          { cause: error },
        );
      }
      throw error;
    } finally {
      session.close();
    }
  };

  program
    .description(
      'Operator and auditor tools for reset-notifier. Reads never trigger work.\n' +
        `Targets the local stack of \`npm start\` by default (DynamoDB ${LOCAL_DEFAULTS.dynamodbEndpoint}, ` +
        `SQS ${LOCAL_DEFAULTS.sqsEndpoint}, table ${LOCAL_DEFAULTS.tableName});\n` +
        `AWS with --aws, or when ${PROFILE} or ${REGION} is set and no endpoint is.`,
    )
    .version('0.1.0')
    .option('--aws', `use AWS with the default credential chain (${PROFILE}, ${REGION}, SSO, roles)`)
    .option('--local', `use the local stack even when ${PROFILE} or ${REGION} is set`)
    .option(
      '--table <name>',
      `DynamoDB table (env ${SETTINGS.tableName.env}; local default ${LOCAL_DEFAULTS.tableName})`,
    )
    .option('--region <region>', `AWS region (env ${REGION})`)
    .option(
      '--dynamodb-endpoint <url>',
      `DynamoDB endpoint (env ${SETTINGS.dynamodbEndpoint.env}; local default ${LOCAL_DEFAULTS.dynamodbEndpoint})`,
    )
    .option(
      '--sqs-endpoint <url>',
      `SQS endpoint (env ${SETTINGS.sqsEndpoint.env}; local default ${LOCAL_DEFAULTS.sqsEndpoint})`,
    )
    .option(
      '--queue-url <url>',
      `dispatch queue URL (env ${SETTINGS.dispatchQueueUrl.env}; else looked up as <table>-dispatch)`,
    )
    .option(
      '--dlq-url <url>',
      `dead-letter queue URL (env ${SETTINGS.cliDlqUrl.env}; else looked up as <table>-dispatch-dlq)`,
    )
    .option(
      '--data-dir <dir>',
      "the local stack's --data-dir: its local-keys.json gives reconcile --now the keys",
    )
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out.write(text),
      writeErr: (text) => io.err.write(text),
    });

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
            { store: session.store(), out: io.out, err: io.err, clock: io.clock },
            {
              ...(key === undefined ? {} : { key }),
              ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
              ...(options.json ? { json: true } : {}),
            },
          ),
        );
      },
    );

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
    .action(
      async (
        options: {
          from: string;
          to: string;
          eventId?: string;
          state?: string;
          format: string;
          out: string;
          pageSize: number;
          chunkSize: number;
          quiet?: boolean;
        },
        command: Command,
      ) => {
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
      },
    );

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
        const store = session.store();
        await runReconcile(
          {
            store,
            out: io.out,
            clock: io.clock,
            runPass: async () => {
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
              // The service's own scheduled pass, run inline (no reconcile queue), bounded by --limit.
              const pass = await composeReconciler(
                { ...config, reconcileMaxItemsPerPass: options.limit },
                runtime,
                { reconcileQueue: null },
              );
              return pass();
            },
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

  return program;
}

/** Runs the CLI with `argv` (user arguments only, without `node` and the script); returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const exitCode = { value: 0 };
  const program = createProgram(io, exitCode);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode.value;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof UsageError) {
      io.err.write(`error: ${error.message}\n`);
      return 2;
    }
    io.err.write(`error: ${(error as Error).message ?? String(error)}\n`);
    return 1;
  }
}
