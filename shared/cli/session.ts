import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import { DynamoNotificationStore } from '../adapters/dynamodb/store.js';
import type { Clock } from '../domain/clock.js';
import {
  type Connection,
  dynamoClientFor,
  type GlobalOptions,
  resolveConnection,
  sqsClientFor,
} from './connection.js';
import type { TextOut } from './output.js';

/** The process around the CLI, injectable so tests run it in-process. */
export interface CliIo {
  readonly out: TextOut;
  readonly err: TextOut;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  /** Standard input, line by line (`fingerprint` reads numbers there); none = empty. */
  readonly lines?: () => AsyncIterable<string>;
}

/** Clients opened for one command, closed when it ends. */
export class Session {
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

/** What a command's action gets: the process, where its exit code goes, and a session runner. */
export interface CommandContext {
  readonly io: CliIo;
  readonly exitCode: { value: number };
  /** Resolves the connection from the command's options, runs `work`, closes the clients. */
  withSession<T>(command: Command, work: (session: Session) => Promise<T>): Promise<T>;
}

/** The context of one program run. */
export function commandContext(io: CliIo, exitCode: { value: number }): CommandContext {
  return {
    io,
    exitCode,
    withSession: async (command, work) => {
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
    },
  };
}

function isConnectionRefused(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown }; message?: unknown; errors?: unknown[] };
  const text = `${String(e?.code)} ${String(e?.cause?.code)} ${String(e?.message)}`;
  return text.includes('ECONNREFUSED') || (e?.errors ?? []).some(isConnectionRefused);
}
