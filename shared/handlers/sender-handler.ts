import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseDispatchBody } from '../messages/dispatch-body.js';
import {
  type DispatchDeps,
  type DispatchReport,
  dispatchNotification,
} from '../usecases/dispatch-notification.js';

export interface SenderDeps extends DispatchDeps {
  readonly onReport?: (key: string, report: DispatchReport) => void;
  readonly onError?: (key: string, error: unknown) => void;
}

/**
 * SQS batch -> one dispatch per message, in parallel. A message whose dispatch threw is reported
 * as a batch item failure and comes back after the visibility timeout; the rest are deleted.
 */
export function createSenderHandler(deps: SenderDeps) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const results = await Promise.all(
      event.Records.map(async (record) => {
        const body = parseDispatchBody(record.body);
        // A message that is not ours can never succeed: drop it rather than poison the queue.
        if (!body) return undefined;
        try {
          const report = await dispatchNotification(deps, body.idempotency_key);
          deps.onReport?.(body.idempotency_key, report);
          return undefined;
        } catch (error) {
          deps.onError?.(body.idempotency_key, error);
          return record.messageId;
        }
      }),
    );
    return {
      batchItemFailures: results
        .filter((id): id is string => id !== undefined)
        .map((itemIdentifier) => ({ itemIdentifier })),
    };
  };
}
