/**
 * Entry point of the `reset-notifier` operator CLI (`npx reset-notifier`, `npm run cli --`).
 * See docs/operations.md.
 */
// Before the AWS SDK loads (hence the dynamic import): its Node-version notice is noise on a CLI's stderr.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const { runCli } = await import('./program.js');
process.exitCode = await runCli(process.argv.slice(2));
