/**
 * Fault injectors that plug into the local stack's hooks: sender crashes at each dispatch step
 * (`onDispatchStep`), DynamoDB throttling and answers lost after commit at the handlers' client
 * (`wrapDynamoClient`).
 */
import {
  type DynamoDBClient,
  ProvisionedThroughputExceededException,
  ThrottlingException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  type DispatchStep,
  type DispatchStepHook,
  InjectedCrashError,
} from '../../local/faults/dispatch-crash.js';
import { type LostAnswerShape, WRITE_OPERATIONS, withLostAnswers } from '../../local/faults/lost-answer.js';
import type { Cipher } from '../../shared/ports/cipher.js';
import { Rng } from './prng.js';
import { CRASH_STEPS, crashes } from './scenario.js';

/** Crashes injected so far, per step. */
export type CrashCounts = Record<DispatchStep, number>;

/**
 * Which injected faults touched which key (key -> fault names): the zero-SMS classification
 * (`lost-deliverable.ts`) tells a command hit by a fault from one lost to the service itself.
 */
export type FaultsByKey = Map<string, Set<string>>;

function note(faults: FaultsByKey, key: string | undefined, fault: string): void {
  if (key === undefined) return;
  const set = faults.get(key) ?? new Set<string>();
  set.add(fault);
  faults.set(key, set);
}

/** The command key a DynamoDB request is about (marshalled or not), if it names one. */
export function keyOfDynamoInput(input: unknown): string | undefined {
  const value = (v: unknown) =>
    typeof v === 'string'
      ? v
      : typeof (v as { S?: unknown })?.S === 'string'
        ? (v as { S: string }).S
        : undefined;
  const of = (item: unknown) => value((item as Record<string, unknown> | undefined)?.pk);
  const i = input as {
    Key?: unknown;
    Item?: unknown;
    TransactItems?: ReadonlyArray<Record<string, { Key?: unknown; Item?: unknown } | undefined>>;
  };
  const first = i.TransactItems?.[0];
  const part = first?.Update ?? first?.Put ?? first?.ConditionCheck ?? first?.Delete;
  return of(i.Key) ?? of(i.Item) ?? of(part?.Key) ?? of(part?.Item);
}

/** A step hook that crashes the sender with a seeded probability, and counts what it did. */
export function createCrashInjector(seed: number, probability: number, faults: FaultsByKey = new Map()) {
  const counts = Object.fromEntries(CRASH_STEPS.map((s) => [s, 0])) as CrashCounts;
  const occurrences = new Map<string, number>();
  const hook: DispatchStepHook = (step, key) => {
    const id = `${key}\u0000${step}`;
    const occurrence = (occurrences.get(id) ?? 0) + 1;
    occurrences.set(id, occurrence);
    if (crashes(seed, key, step, occurrence, probability)) {
      counts[step]++;
      note(faults, key, `crash_${step}`);
      throw new InjectedCrashError(`injected crash at ${step}`);
    }
  };
  return { hook, counts };
}

/** Throttling injected and observed at the handlers' DynamoDB client. */
export interface ThrottleCounts {
  /** Thrown outside the SDK's retry loop: the application sees each of them. */
  injectedSurfacing: number;
  /** Thrown inside the SDK's retry loop: the SDK retries throttling errors, some reach the application. */
  injectedRetried: number;
  /** Throttling errors that reached the application (after the SDK's retries). */
  surfaced: number;
  /** Per operation, everything injected. */
  byOperation: Record<string, number>;
  /** Per operation, every call the handlers made (for the load figures). */
  calls: Record<string, number>;
}

const THROTTLE_NAMES = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'TransactionCanceledException',
]);

function throttlingError(operation: string, rng: Rng): Error {
  const $metadata = { httpStatusCode: 400 };
  if (operation.startsWith('TransactWrite') && rng.chance(0.5)) {
    // How DynamoDB reports a throttled transaction: cancelled, with a ThrottlingError reason.
    return new TransactionCanceledException({
      message:
        'Transaction cancelled, please refer cancellation reasons for specific reasons [ThrottlingError, None]',
      $metadata,
      CancellationReasons: [
        {
          Code: 'ThrottlingError',
          Message: 'Throughput exceeds the current capacity for one or more global secondary indexes.',
        },
        { Code: 'None' },
      ],
    });
  }
  return rng.chance(0.5)
    ? new ProvisionedThroughputExceededException({
        message: 'The level of configured provisioned throughput for the table was exceeded.',
        $metadata,
      })
    : new ThrottlingException({
        message: 'Throughput exceeds the current capacity of your table or index.',
        $metadata,
      });
}

/**
 * Middleware that throws throttling errors before a request is sent (so nothing is written): at
 * `surfacingProbability` outside the SDK's retries, at `retriedProbability` inside them.
 */
export function createThrottleInjector(
  seed: number,
  surfacingProbability: number,
  retriedProbability: number,
  faults: FaultsByKey = new Map(),
) {
  const rng = new Rng(seed, 'throttle');
  const counts: ThrottleCounts = {
    injectedSurfacing: 0,
    injectedRetried: 0,
    surfaced: 0,
    byOperation: {},
    calls: {},
  };
  const operationOf = (context: { commandName?: string }) =>
    (context.commandName ?? 'unknown').replace(/Command$/, '');
  const bump = (operation: string) => {
    counts.byOperation[operation] = (counts.byOperation[operation] ?? 0) + 1;
  };
  const wrap = (client: DynamoDBClient) => {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = operationOf(context);
        counts.calls[operation] = (counts.calls[operation] ?? 0) + 1;
        if (surfacingProbability > 0 && rng.chance(surfacingProbability)) {
          counts.injectedSurfacing++;
          bump(operation);
          note(faults, keyOfDynamoInput(args.input), 'throttle');
          counts.surfaced++;
          throw throttlingError(operation, rng);
        }
        try {
          return await next(args);
        } catch (error) {
          if (THROTTLE_NAMES.has((error as Error).name) && isThrottle(error)) counts.surfaced++;
          throw error;
        }
      },
      { step: 'initialize', name: 'chaosThrottleSurfacing', priority: 'high' },
    );
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (retriedProbability > 0 && rng.chance(retriedProbability)) {
          const operation = operationOf(context);
          counts.injectedRetried++;
          bump(operation);
          note(faults, keyOfDynamoInput(args.input), 'throttle');
          throw throttlingError(operation, rng);
        }
        return next(args);
      },
      // The deserialize step runs inside the retry middleware (finalizeRequest) and before the send.
      { step: 'deserialize', name: 'chaosThrottleRetried', priority: 'high' },
    );
  };
  return { wrap, counts };
}

function isThrottle(error: unknown): boolean {
  if (error instanceof TransactionCanceledException) {
    return (error.CancellationReasons ?? []).some((r) => r.Code === 'ThrottlingError');
  }
  return true;
}

/** Writes whose answer was lost after DynamoDB applied them ("fault after commit"). */
export interface LostAnswerCounts {
  /** Lost outside the SDK's retry loop: the application saw a timeout or a reset. */
  surfacing: number;
  /** Lost inside it: the SDK sent the write again, and the retry met the applied write. */
  retried: number;
  /** Per operation (`PutItem`, `UpdateItem`, `TransactWriteItems`), both kinds. */
  byOperation: Record<string, number>;
  /** Per shape (`timeout`, `reset`), both kinds. */
  byShape: Record<string, number>;
}

/**
 * Loses the answer of a seeded share of the handlers' DynamoDB writes after the write was
 * applied (`local/faults/lost-answer.ts`): at `surfacingProbability` outside the SDK's retries,
 * at `retriedProbability` per try inside them. Reads are left alone: they commit nothing.
 */
export function createLostAnswerInjector(
  seed: number,
  surfacingProbability: number,
  retriedProbability: number,
  faults: FaultsByKey = new Map(),
) {
  const rng = new Rng(seed, 'lost-answer');
  const counts: LostAnswerCounts = { surfacing: 0, retried: 0, byOperation: {}, byShape: {} };
  const decide =
    (kind: 'surfacing' | 'retried', probability: number) =>
    (operation: string, input: unknown): LostAnswerShape | undefined => {
      if (probability <= 0 || !WRITE_OPERATIONS.has(operation) || !rng.chance(probability)) return undefined;
      const shape: LostAnswerShape = rng.chance(0.5) ? 'timeout' : 'reset';
      counts[kind]++;
      note(faults, keyOfDynamoInput(input), `lost_answer_${kind}`);
      counts.byOperation[operation] = (counts.byOperation[operation] ?? 0) + 1;
      counts.byShape[shape] = (counts.byShape[shape] ?? 0) + 1;
      return shape;
    };
  const wrap = (client: DynamoDBClient) =>
    withLostAnswers(client, {
      surfacing: decide('surfacing', surfacingProbability),
      retried: decide('retried', retriedProbability),
    });
  return { wrap, counts };
}

/** Decryptions the cipher injector failed, and how many it let through. */
export interface CipherFaultCounts {
  failed: number;
  passed: number;
}

/**
 * Wraps the handlers' cipher so a seeded share of decryptions fails the way KMS does when the key
 * is disabled (`DisabledException`): the sender must then not claim, the reconciler must still
 * expire on time. Encryption (admission) is untouched.
 */
export function createCipherFaultInjector(
  seed: number,
  probability: number,
  faults: FaultsByKey = new Map(),
) {
  const rng = new Rng(seed, 'cipher-faults');
  const counts: CipherFaultCounts = { failed: 0, passed: 0 };
  const wrap = (cipher: Cipher): Cipher => ({
    encrypt: (plaintext, context) => cipher.encrypt(plaintext, context),
    async decrypt(sealed, context) {
      if (probability > 0 && rng.next() < probability) {
        counts.failed++;
        note(faults, context.idempotency_key, 'decrypt_failure');
        const error = new Error('injected: the KMS key is disabled');
        error.name = 'DisabledException';
        throw error;
      }
      counts.passed++;
      return cipher.decrypt(sealed, context);
    },
  });
  return { wrap, counts };
}
