import { createInterface } from 'node:readline';
import { Command, CommanderError } from 'commander';
import { systemClock } from '../domain/clock.js';
import { SETTINGS } from '../settings.js';
import {
  registerDlqCommands,
  registerEvidenceCommands,
  registerFingerprintCommand,
  registerReceiptsCommands,
  registerReconcileCommand,
  registerStatusCommand,
} from './commands.js';
import { LOCAL_DEFAULTS } from './connection.js';
import { UsageError } from './output.js';
import { type CliIo, commandContext } from './session.js';

export type { CliIo } from './session.js';

const REGION = SETTINGS.awsRegion.env;
const PROFILE = SETTINGS.awsProfile.env;

/** The real process: stdout, stderr, environment, wall clock. */
function processIo(): CliIo {
  return {
    out: process.stdout,
    err: process.stderr,
    env: process.env,
    clock: systemClock,
    lines: () => createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }),
  };
}

/**
 * Builds the `reset-notifier` program. Every action resolves its connection (local stack or AWS),
 * opens clients, runs one `run*` function with injected dependencies and closes the clients.
 * `exitCode.value` receives the command's exit code.
 */
function createProgram(io: CliIo = processIo(), exitCode = { value: 0 }): Command {
  const program = new Command('reset-notifier');
  addGlobalOptions(program, io);
  const context = commandContext(io, exitCode);
  registerStatusCommand(program, context);
  registerEvidenceCommands(program, context);
  registerDlqCommands(program, context);
  registerReceiptsCommands(program, context);
  registerReconcileCommand(program, context);
  registerFingerprintCommand(program, context);
  return program;
}

/** The description, the connection options every command shares, and the output and exit overrides. */
function addGlobalOptions(program: Command, io: CliIo): void {
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
