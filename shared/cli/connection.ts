import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { loadConfig, type ServiceConfig } from '../config.js';
import { SETTINGS, settingsEnv, settingsReader } from '../settings.js';

/** Where `npm start` puts the emulators (local/start.ts): fixed ports, fixed names. */
export const LOCAL_DEFAULTS = {
  dynamodbEndpoint: `http://127.0.0.1:${SETTINGS.dynamodbPort.local}`,
  sqsEndpoint: `http://127.0.0.1:${SETTINGS.sqsPort.local}`,
  tableName: SETTINGS.tableName.local,
} as const;

/** The options every command accepts (commander's global options). */
export interface GlobalOptions {
  readonly aws?: boolean;
  readonly local?: boolean;
  readonly table?: string;
  readonly region?: string;
  readonly dynamodbEndpoint?: string;
  readonly sqsEndpoint?: string;
  readonly queueUrl?: string;
  readonly dlqUrl?: string;
  readonly dataDir?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** What the CLI talks to, resolved once from flags and environment. */
export interface Connection {
  /** `local`: the emulators of `npm start`; `aws`: the default AWS credential chain. */
  readonly mode: 'local' | 'aws';
  /** The service configuration (same loader as the Lambdas), pointed at the chosen target. */
  readonly config: ServiceConfig;
  /** Queue URLs when known up front; otherwise they are looked up by name. */
  readonly queueUrl?: string;
  readonly dlqUrl?: string;
  readonly queueName: string;
  readonly dlqName: string;
}

/** Keys `npm start -- --data-dir DIR` persists, so the CLI can open payloads the stack sealed. */
export interface LocalKeys {
  readonly dataKey: string;
  readonly fingerprintKey: string;
}

/** Reads `<dataDir>/local-keys.json` as written by local/stack.ts. */
export async function readLocalKeys(dataDir: string): Promise<LocalKeys> {
  const file = join(dataDir, 'local-keys.json');
  let parsed: Partial<LocalKeys>;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<LocalKeys>;
  } catch (error) {
    throw new Error(`cannot read local keys from ${file}: ${(error as Error).message}`);
  }
  if (typeof parsed.dataKey !== 'string' || typeof parsed.fingerprintKey !== 'string') {
    throw new Error(`${file} does not hold dataKey and fingerprintKey`);
  }
  return { dataKey: parsed.dataKey, fingerprintKey: parsed.fingerprintKey };
}

/**
 * Chooses local or AWS. `--aws` and `--local` win; otherwise endpoints in the environment mean
 * local, AWS_PROFILE or AWS_REGION without endpoints mean AWS, and nothing at all means the local stack.
 */
export function chooseMode(options: GlobalOptions, env: Env): 'local' | 'aws' {
  if (options.aws && options.local) throw new Error('--aws and --local exclude each other');
  if (options.aws) return 'aws';
  if (options.local) return 'local';
  const read = settingsReader(env);
  if (
    options.dynamodbEndpoint ||
    options.sqsEndpoint ||
    read(SETTINGS.dynamodbEndpoint) ||
    read(SETTINGS.sqsEndpoint)
  )
    return 'local';
  if (read(SETTINGS.awsProfile) || read(SETTINGS.awsRegion)) return 'aws';
  return 'local';
}

/** Resolves flags and environment into a {@link Connection}; reads local keys when `--data-dir` is given. */
export async function resolveConnection(options: GlobalOptions, env: Env = process.env): Promise<Connection> {
  const mode = chooseMode(options, env);
  const read = settingsReader(env);
  // No default table against AWS: the stack names it.
  const tableName =
    options.table ?? env[SETTINGS.tableName.env] ?? (mode === 'local' ? LOCAL_DEFAULTS.tableName : undefined);
  if (!tableName) {
    throw new Error(
      `against AWS, pass --table or set ${SETTINGS.tableName.env} (the stack output TableName)`,
    );
  }
  const keys = options.dataDir ? await readLocalKeys(options.dataDir) : undefined;
  const queueUrl = options.queueUrl ?? read(SETTINGS.dispatchQueueUrl);
  const dlqUrl = options.dlqUrl ?? read(SETTINGS.cliDlqUrl);
  const queueName = read(SETTINGS.cliQueueName, `${tableName}-dispatch`);
  const overrides: Record<string, string | undefined> = settingsEnv({
    tableName,
    dispatchQueueUrl: queueUrl || undefined,
    awsRegion: options.region || undefined,
    localDataKey: keys?.dataKey,
    fingerprintKey: keys?.fingerprintKey,
  });
  if (mode === 'local') {
    Object.assign(
      overrides,
      settingsEnv({
        dynamodbEndpoint:
          options.dynamodbEndpoint ?? read(SETTINGS.dynamodbEndpoint, LOCAL_DEFAULTS.dynamodbEndpoint),
        sqsEndpoint: options.sqsEndpoint ?? read(SETTINGS.sqsEndpoint, LOCAL_DEFAULTS.sqsEndpoint),
      }),
    );
  } else {
    // Endpoints in the environment must not send an AWS run to the emulators.
    overrides[SETTINGS.dynamodbEndpoint.env] = undefined;
    overrides[SETTINGS.sqsEndpoint.env] = undefined;
  }
  const config = loadConfig({ ...env, ...overrides });
  return {
    mode,
    config,
    ...(queueUrl ? { queueUrl } : {}),
    ...(dlqUrl ? { dlqUrl } : {}),
    queueName,
    dlqName: read(SETTINGS.cliDlqName, `${queueName}-dlq`),
  };
}

/** Emulators accept any credentials; AWS uses the default chain (AWS_PROFILE, SSO, instance role...). */
function clientConfig(config: ServiceConfig, endpoint: string | undefined) {
  return endpoint
    ? { region: config.region, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
    : { region: config.region };
}

/** A DynamoDB client for the connection. */
export function dynamoClientFor(connection: Connection): DynamoDBClient {
  return new DynamoDBClient(clientConfig(connection.config, connection.config.dynamodbEndpoint));
}

/** An SQS client for the connection. */
export function sqsClientFor(connection: Connection): SQSClient {
  return new SQSClient(clientConfig(connection.config, connection.config.sqsEndpoint));
}

/** The dispatch queue and DLQ URLs: given ones first, otherwise looked up by name. */
export async function queueUrlsFor(
  connection: Connection,
  sqs: SQSClient,
): Promise<{ queueUrl: string; dlqUrl: string }> {
  const lookup = async (name: string) => {
    const out = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    if (!out.QueueUrl) throw new Error(`queue ${name} not found`);
    return out.QueueUrl;
  };
  return {
    queueUrl: connection.queueUrl ?? (await lookup(connection.queueName)),
    dlqUrl: connection.dlqUrl ?? (await lookup(connection.dlqName)),
  };
}
