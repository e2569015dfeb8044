import { randomUUID } from 'node:crypto';
import { createServiceRuntime } from '../shared/composition.js';
import { loadConfig } from '../shared/config.js';
import { createSenderHandler } from '../shared/handlers/sender-handler.js';

const runtime = await createServiceRuntime(loadConfig());

/** SQS event source entry point (partial batch responses). */
export const handler = createSenderHandler({
  ...runtime,
  policy: runtime.config.policy,
  owner: `sender-${randomUUID()}`,
  onReport: (key, report) => runtime.logger.info('dispatch', { idempotency_key: key, ...report }),
  onError: (key, error) =>
    runtime.logger.error('dispatch failed', { idempotency_key: key, error: error as Error }),
});
