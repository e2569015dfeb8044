/**
 * Runnable simulator: `tsx local/simulator/main.ts`. Environment: SIM_PORT (default 4010),
 * SIM_HOST (default 127.0.0.1), SIM_SENT_DELAY_MS and SIM_DELIVERED_DELAY_MS (status schedule),
 * FINGERPRINT_KEY (optional: the service's key, so ledger fingerprints match the API's views;
 * with a ring of keys, FINGERPRINT_KEY_VERSION names the current one as for the service),
 * PROVIDER_AUTH_TOKEN (the auth token requests must carry; default the local configuration's),
 * SIM_EXTENSIONS=1 (adds the non-Twilio `status_callback` property to Message resources).
 * Stops on SIGINT/SIGTERM.
 */
import { inlineFingerprinter } from '../../shared/composition/secrets.js';
import { SETTINGS, settingsReader } from '../../shared/settings.js';
import { DEFAULT_AUTH_TOKEN, DEFAULT_STATUS_DELAYS, startSimulator } from './server.js';

// Read through the settings table: a malformed value stops here with the variable named.
const read = settingsReader(process.env);
let settings: {
  port: number;
  host: string;
  authToken: string;
  extensions: boolean;
  sent: number;
  delivered: number;
  fingerprintKey: string | undefined;
  fingerprintKeyVersion: number;
};
try {
  settings = {
    port: read(SETTINGS.simPort),
    host: read(SETTINGS.simHost),
    authToken: read(SETTINGS.twilioAuthToken, DEFAULT_AUTH_TOKEN),
    extensions: read(SETTINGS.simExtensions),
    sent: read(SETTINGS.simSentDelay, DEFAULT_STATUS_DELAYS.sent),
    delivered: read(SETTINGS.simDeliveredDelay, DEFAULT_STATUS_DELAYS.delivered),
    fingerprintKey: read(SETTINGS.fingerprintKey),
    fingerprintKeyVersion: read(SETTINGS.fingerprintKeyVersion),
  };
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}

const fingerprinter = settings.fingerprintKey
  ? inlineFingerprinter(settings.fingerprintKey, settings.fingerprintKeyVersion)
  : undefined;

const simulator = await startSimulator({
  port: settings.port,
  host: settings.host,
  authToken: settings.authToken,
  extensions: settings.extensions,
  statusDelaysMs: { sent: settings.sent, delivered: settings.delivered },
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
