/**
 * The AWS simulator alone: `npx tsx local/simulator/aws/main.ts`. Environment: SIM_PORT (4010),
 * SIM_HOST (127.0.0.1), SIM_SENT_DELAY_MS, SIM_DELIVERED_DELAY_MS, SIM_LOG_LAG_MS,
 * SIM_LOG_SAMPLING_RATE (0..1), SIM_EVENTS_URL (where End User Messaging events are posted).
 * Point the SDK clients at it with SNS_ENDPOINT, EUM_ENDPOINT and LOGS_ENDPOINT. Stops on SIGINT/SIGTERM.
 */
import { SETTINGS, settingsReader } from '../../../shared/settings.js';
import { DEFAULT_AWS_STATUS_DELAYS, startAwsSimulator } from './server.js';

// Read through the settings table: a malformed value stops here with the variable named.
const read = settingsReader(process.env);
let options: Omit<Parameters<typeof startAwsSimulator>[0], 'log'>;
try {
  const eventsUrl = read(SETTINGS.simEventsUrl);
  options = {
    port: read(SETTINGS.simPort),
    host: read(SETTINGS.simHost),
    statusDelaysMs: {
      sent: read(SETTINGS.simSentDelay, DEFAULT_AWS_STATUS_DELAYS.sent),
      delivered: read(SETTINGS.simDeliveredDelay, DEFAULT_AWS_STATUS_DELAYS.delivered),
    },
    logLagMs: read(SETTINGS.simLogLag),
    logSuccessSamplingRate: read(SETTINGS.simLogSamplingRate),
    ...(eventsUrl ? { eventsUrl } : {}),
  };
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}

const simulator = await startAwsSimulator({
  ...options,
  log: (line) => process.stdout.write(`${line}\n`),
});
process.stdout.write(
  `AWS simulator listening on ${simulator.url} (events topic ${simulator.eventsTopicArn}; log groups ${simulator.logGroups.success}, ${simulator.logGroups.failure})\n`,
);

let stopping = false;
const shutdown = (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${signal}: stopping AWS simulator\n`);
  void simulator.stop().then(() => process.exit(0));
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
