import { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsDispatchQueue } from '../adapters/sqs/dispatch-queue.js';
import type { ServiceConfig } from '../config.js';
import type { DispatchQueue } from '../ports/queue.js';
import { clientConfig } from './clients.js';

/** The SQS dispatch queue for this configuration. */
export function queueFor(config: ServiceConfig): DispatchQueue {
  return createSqsDispatchQueue(
    new SQSClient(clientConfig(config, config.sqsEndpoint)),
    config.dispatchQueueUrl,
  );
}
