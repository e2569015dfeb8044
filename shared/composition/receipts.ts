import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { readSecretString } from '../adapters/secrets-manager-secret.js';
import type { ServiceConfig } from '../config.js';
import { CodedError, InvalidConfigurationError } from '../domain/errors.js';
import {
  type EumReceiptDeps,
  type EumReceiptReport,
  type KeepReceipts,
  type KeptReceipt,
  redriveKeptReceipts,
} from '../providers/eum/index.js';
import { SETTINGS } from '../settings.js';
import { ingestReceipt } from '../usecases/ingest-receipt.js';
import { clientConfig } from './clients.js';

/**
 * Auth tokens anyone can read in this repository: the simulator's, the settings table's local
 * default. The receipts handler refuses to verify with one outside the local stack.
 */
export const WELL_KNOWN_TWILIO_AUTH_TOKENS: readonly string[] = [String(SETTINGS.twilioAuthToken.local)];

/**
 * The Twilio auth token that keys status-callback signatures: from the Twilio secret in AWS (read on
 * first use, once per container; a failed read is retried by the next request), inline locally.
 */
export function twilioAuthTokenFor(config: ServiceConfig): () => Promise<string> {
  const arn = config.providerAuthTokenSecretArn;
  if (arn === undefined) return async () => config.providerAuthToken;
  let token: Promise<string> | undefined;
  return () => {
    token ??= readSecretString(new SecretsManagerClient({ region: config.region }), arn).catch(
      (error: unknown) => {
        token = undefined;
        throw error;
      },
    );
    return token;
  };
}

/** The kept-receipts queue did not take every copy: the keeper's invocation fails, and Lambda retries it. */
export class KeptReceiptsNotTakenError extends CodedError {
  readonly code = 'kept_receipts_not_taken';
  constructor(failed: number, of: number) {
    super(`kept receipts: the queue did not take ${failed} of ${of} copies`);
  }
}

/** SQS takes at most 10 messages per `SendMessageBatch`. */
const SQS_BATCH = 10;

/**
 * Where the receipts keeper puts kept receipts: the kept-receipts queue (`KEPT_RECEIPTS_QUEUE_URL`,
 * set on the keeper function only), one message per copy, each copy already without any number
 * (docs/providers/aws.md#kept-receipts-and-redrive). Undefined where the variable is unset: the
 * receipts function itself keeps nothing and refuses a failed-receipt record. A copy SQS did not
 * take is thrown, so the keeper's invocation fails and Lambda retries it (its errors alarm).
 */
export function keepReceiptsFor(config: ServiceConfig, sqs?: SQSClient): KeepReceipts | undefined {
  const queueUrl = config.keptReceiptsQueueUrl;
  if (!queueUrl) return undefined;
  const client = sqs ?? new SQSClient(clientConfig(config, config.sqsEndpoint));
  return async (kept) => {
    for (let start = 0; start < kept.length; start += SQS_BATCH) {
      const batch = kept.slice(start, start + SQS_BATCH);
      const out = await client.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((receipt, index) => ({
            Id: String(index),
            MessageBody: JSON.stringify(receipt),
          })),
        }),
      );
      const failed = out.Failed?.length ?? 0;
      if (failed > 0) throw new KeptReceiptsNotTakenError(failed, batch.length);
    }
  };
}

export type { EumReceiptReport, KeptReceipt } from '../providers/eum/index.js';

/** Re-delivers one kept receipt through the receipts use case; a store fault is thrown. */
export type RedriveKeptReceipt = (kept: KeptReceipt) => Promise<EumReceiptReport>;

/**
 * The redrive of `reset-notifier receipts redrive`: the receipts use case (idempotent) for copies
 * naming `topicArn`, the events topic of the stack (docs/providers/aws.md#kept-receipts-and-redrive).
 */
export function keptReceiptsRedrive(deps: Omit<EumReceiptDeps, 'ingest'>): RedriveKeptReceipt {
  return async (kept) => {
    const [report] = await redriveKeptReceipts({ ...deps, ingest: ingestReceipt }, [kept]);
    if (report === undefined)
      throw new InvalidConfigurationError('receipts redrive: no report for a kept receipt');
    return report;
  };
}
