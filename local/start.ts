// The SDK warns that Node 20 support ends in 2027; Lambda runs Node 24. Locally the warning is noise.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { parseArgs } from 'node:util';
import { consoleOptionsFromEnv, createConsoleRoute } from './console/route.js';
import { JavaMissingError } from './dynamodb-local.js';
import { busyPortMessage } from './ports.js';
import { startLocalStack } from './stack.js';

/** `npm start [-- --data-dir DIR]`: the whole service on loopback, until Ctrl-C. */
const { values } = parseArgs({ options: { 'data-dir': { type: 'string' } } });

// Fixed ports so the operator CLI and curl find everything without configuration.
const ports = {
  api: Number(process.env.PORT ?? 3000),
  sim: Number(process.env.SIM_PORT ?? 4010),
  dynamodb: Number(process.env.DYNAMODB_PORT ?? 8000),
  sqs: Number(process.env.SQS_PORT ?? 4566),
};
const busy = await busyPortMessage([
  { port: ports.api, variable: 'PORT' },
  { port: ports.sim, variable: 'SIM_PORT' },
  { port: ports.dynamodb, variable: 'DYNAMODB_PORT' },
  { port: ports.sqs, variable: 'SQS_PORT' },
]);
if (busy) {
  process.stderr.write(`${busy}\n`);
  process.exit(2);
}

try {
  const stack = await startLocalStack({
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
    apiPort: ports.api,
    simPort: ports.sim,
    dynamodbPort: ports.dynamodb,
    sqsPort: ports.sqs,
    routes: [createConsoleRoute(consoleOptionsFromEnv(process.env))],
  });
  process.stdout.write(
    [
      '',
      'reset-notifier is running locally',
      `  API                 ${stack.apiUrl}   (POST/GET /v1/notifications)`,
      `  Operator console    ${stack.apiUrl}/console`,
      `  Provider simulator  ${stack.simUrl}   (GET /_sim/messages, POST /_sim/faults)`,
      `  DynamoDB Local      ${stack.dynamodbEndpoint}   table ${stack.tableName}${values['data-dir'] ? ` (data in ${values['data-dir']})` : ' (in memory)'}`,
      `  SQS (fauxqs)        ${stack.sqsEndpoint}   queue ${stack.queueUrl}`,
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping...\n`);
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
} catch (error) {
  if (error instanceof JavaMissingError) {
    process.stderr.write(`\n${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`\nfailed to start: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
}
