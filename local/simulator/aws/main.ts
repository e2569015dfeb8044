/**
 * The AWS simulator alone: `npx tsx local/simulator/aws/main.ts`. Environment: SIM_PORT (4010),
 * SIM_HOST (127.0.0.1), SIM_SENT_DELAY_MS, SIM_DELIVERED_DELAY_MS, SIM_LOG_LAG_MS,
 * SIM_LOG_SAMPLING_RATE (0..1), SIM_EVENTS_URL (where End User Messaging events are posted).
 * Point the SDK clients at it with SNS_ENDPOINT, EUM_ENDPOINT and LOGS_ENDPOINT. Stops on SIGINT/SIGTERM.
 */
import { DEFAULT_AWS_STATUS_DELAYS, startAwsSimulator } from './server.js';

function numberFromEnv(name: string, fallback: number, max = Number.POSITIVE_INFINITY): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > max) {
    process.stderr.write(`${name} must be a number from 0 to ${max}, got "${raw}"\n`);
    process.exit(2);
  }
  return value;
}

const simulator = await startAwsSimulator({
  port: numberFromEnv('SIM_PORT', 4010),
  host: process.env.SIM_HOST ?? '127.0.0.1',
  statusDelaysMs: {
    sent: numberFromEnv('SIM_SENT_DELAY_MS', DEFAULT_AWS_STATUS_DELAYS.sent),
    delivered: numberFromEnv('SIM_DELIVERED_DELAY_MS', DEFAULT_AWS_STATUS_DELAYS.delivered),
  },
  logLagMs: numberFromEnv('SIM_LOG_LAG_MS', 2_000),
  logSuccessSamplingRate: numberFromEnv('SIM_LOG_SAMPLING_RATE', 1, 1),
  ...(process.env.SIM_EVENTS_URL ? { eventsUrl: process.env.SIM_EVENTS_URL } : {}),
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
