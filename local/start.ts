// The SDK warns that Node 20 support ends in 2027; Lambda runs Node 24. Locally the warning is noise.
process.env[SETTINGS.sdkNodeVersionWarningOff.env] ??= SETTINGS.sdkNodeVersionWarningOff.local;

import { parseArgs } from 'node:util';
import { loadLocalConfig } from '../shared/config.js';
import { SETTINGS } from '../shared/settings.js';
import { formatBanner, formatChange, isAlarmTransition } from './alarms/monitor.js';
import { consoleOptionsFromEnv, createConsoleRoute } from './console/route.js';
import { JavaMissingError } from './dynamodb-local.js';
import { busyPortMessage } from './ports.js';
import { receiptsListenerPort } from './runtime/receipts-listener.js';
import { startLocalStack } from './stack.js';

/** `npm start [-- --data-dir DIR]`: the whole service on loopback, until Ctrl-C. */
const { values } = parseArgs({ options: { 'data-dir': { type: 'string' } } });

// Fixed ports so the operator CLI and curl find everything without configuration. A malformed
// local setting stops here, named, like a malformed service setting does.
let ports: ReturnType<typeof loadLocalConfig>['ports'];
let receiptsPort: number | undefined;
try {
  ports = loadLocalConfig(process.env).ports;
  receiptsPort = receiptsListenerPort(process.env);
} catch (error) {
  process.stderr.write(`\nfailed to start: ${(error as Error).message}\n`);
  process.exit(1);
}
const busy = await busyPortMessage([
  { port: ports.api, variable: SETTINGS.apiPort.env },
  { port: ports.sim, variable: SETTINGS.simPort.env },
  { port: ports.dynamodb, variable: SETTINGS.dynamodbPort.env },
  { port: ports.sqs, variable: SETTINGS.sqsPort.env },
  ...(receiptsPort ? [{ port: receiptsPort, variable: SETTINGS.receiptsPort.env }] : []),
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
      ...(stack.receiptsUrl
        ? [
            `  Receipts only       ${stack.receiptsUrl}   (POST /v1/receipts/twilio, nothing else: put a tunnel in front of this port only)`,
          ]
        : []),
      `  Provider simulator  ${stack.simUrl}   (GET /_sim/messages, POST /_sim/faults)`,
      `  DynamoDB Local      ${stack.dynamodbEndpoint}   table ${stack.tableName}${values['data-dir'] ? ` (data in ${values['data-dir']})` : ' (in memory)'}`,
      `  SQS (fauxqs)        ${stack.sqsEndpoint}   queue ${stack.queueUrl}`,
      ...formatBanner(stack.alarms),
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
  stack.alarms.onChange((change) => {
    if (isAlarmTransition(change)) process.stdout.write(`${formatChange(change)}\n`);
  });
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
