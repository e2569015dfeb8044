import { createServiceRuntime } from '../shared/composition.js';
import { loadConfig } from '../shared/config.js';
import { createApiHandler } from '../shared/handlers/api-handler.js';

const runtime = await createServiceRuntime(loadConfig());

/** API Gateway HTTP API (payload v2) entry point. */
export const handler = createApiHandler({
  ...runtime,
  policy: runtime.config.policy,
  providerName: runtime.provider.name,
  maxExpiryMs: runtime.config.maxExpiryHours * 3_600_000,
  allowedDestinationPrefixes: runtime.config.allowedDestinationPrefixes,
  logError: (error) => runtime.logger.error('unhandled error', error as Error),
});
