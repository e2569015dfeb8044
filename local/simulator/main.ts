/**
 * Runnable simulator: `tsx local/simulator/main.ts`. Environment: SIM_PORT (default 4010),
 * SIM_HOST (default 127.0.0.1), SIM_SENT_DELAY_MS and SIM_DELIVERED_DELAY_MS (status schedule),
 * FINGERPRINT_KEY (optional: the service's key, so ledger fingerprints match the API's views),
 * PROVIDER_AUTH_TOKEN (the auth token requests must carry; default the local configuration's),
 * SIM_EXTENSIONS=1 (adds the non-Twilio `status_callback` property to Message resources).
 * Stops on SIGINT/SIGTERM.
 */
import { parseKey } from '../../shared/adapters/local-cipher.js';
import { createFingerprinter } from '../../shared/domain/fingerprint.js';
import { DEFAULT_AUTH_TOKEN, DEFAULT_STATUS_DELAYS, startSimulator } from './server.js';

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`${name} must be a non-negative integer, got "${raw}"\n`);
    process.exit(2);
  }
  return value;
}

const fingerprintKey = process.env.FINGERPRINT_KEY;
const fingerprinter = fingerprintKey ? createFingerprinter(parseKey(fingerprintKey)) : undefined;

const simulator = await startSimulator({
  port: intFromEnv('SIM_PORT', 4010),
  host: process.env.SIM_HOST ?? '127.0.0.1',
  authToken: process.env.PROVIDER_AUTH_TOKEN || DEFAULT_AUTH_TOKEN,
  extensions: process.env.SIM_EXTENSIONS === '1',
  statusDelaysMs: {
    sent: intFromEnv('SIM_SENT_DELAY_MS', DEFAULT_STATUS_DELAYS.sent),
    delivered: intFromEnv('SIM_DELIVERED_DELAY_MS', DEFAULT_STATUS_DELAYS.delivered),
  },
  ...(fingerprinter ? { fingerprint: (e164: string) => fingerprinter.destination(e164) } : {}),
  log: (line) => process.stdout.write(`${line}\n`),
});
process.stdout.write(`provider simulator listening on ${simulator.url}\n`);

let stopping = false;
const shutdown = (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`${signal}: stopping provider simulator\n`);
  void simulator.stop().then(() => process.exit(0));
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
