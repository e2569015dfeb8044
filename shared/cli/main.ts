/**
 * Entry point of the `reset-notifier` operator CLI (`npx reset-notifier`, `npm run cli --`).
 * See docs/operations.md.
 */
import { SETTINGS } from '../settings.js';

// Before the AWS SDK loads (hence the dynamic import): its Node-version notice is noise on a CLI's stderr.
process.env[SETTINGS.sdkNodeVersionWarningOff.env] ??= SETTINGS.sdkNodeVersionWarningOff.local;

const { runCli } = await import('./program.js');
process.exitCode = await runCli(process.argv.slice(2));
