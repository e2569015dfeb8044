import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
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
 * SQS batch -> one dispatch per message, in parallel (Powertools' `BatchProcessor`). A message whose
 * dispatch threw is reported as a batch item failure and comes back after the visibility timeout;
 * the rest are deleted, also when every message failed (no `FullBatchFailureError`: the answer
 * names them all).
 */
export function createSenderHandler(deps: SenderDeps) {
  const dispatchOne = async (record: SQSRecord): Promise<void> => {
    const body = parseDispatchBody(record.body);
    // A message that is not ours can never succeed: drop it rather than poison the queue.
    if (!body) return;
    try {
      const report = await dispatchNotification(deps, body.idempotency_key);
      deps.onReport?.(body.idempotency_key, report);
    } catch (error) {
      deps.onError?.(body.idempotency_key, error);
      throw error;
    }
  };
  return async (event: SQSEvent): Promise<SQSBatchResponse> =>
    // One processor per invocation: it holds the batch's state, and the local runtime may overlap calls.
    processPartialResponse(event, dispatchOne, new BatchProcessor(EventType.SQS), {
      throwOnFullBatchFailure: false,
    });
}
