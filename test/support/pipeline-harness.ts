import { Logger } from '@aws-lambda-powertools/logger';
import { expect, inject } from 'vitest';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/stack.js';
import { aFreshCode, aRequestBody, uniqueName } from './fixtures.js';

/** Fast timings so a fault plays out in a second or two instead of a minute. */
export const FAST_ENV = {
  PROVIDER_TIMEOUT_MS: '600',
  PROVIDER_LOOKUP_TIMEOUT_MS: '600',
  RECONCILE_SETTLE_SECONDS: '1.5',
  STATUS_POLL_SECONDS: '0.2',
  STATUS_HORIZON_SECONDS: '30',
  BACKOFF_BASE_MS: '200',
  BACKOFF_MAX_MS: '2000',
  LEASE_SLACK_MS: '1500',
  QUEUE_SAFETY_NET_SECONDS: '5',
  QUEUE_VISIBILITY_TIMEOUT_SECONDS: '2',
  DISPATCH_MARGIN_SECONDS: '5',
  // The pipeline suites send many resets to one test number; budgets have their own tests.
  DESTINATION_LIMITS: 'off',
  // These suites test the pull path (lookups, status polls): receipts would settle records first, so
  // the simulator's callbacks go to a closed port. test/integration/receipts.test.ts turns them on ('').
  PROVIDER_STATUS_CALLBACK_BASE: 'http://127.0.0.1:9/status',
  // No receipt comes, so the status poll is the path under test: at once, not after the grace time.
  RECEIPT_GRACE_SECONDS: '0',
} as const;

export interface SimMessage {
  readonly id: string;
  readonly client_reference: string | null;
  readonly destination_fingerprint: string;
  readonly accepted_at: string;
  readonly status: string;
}

export interface SimRequest {
  readonly received_at: string;
  readonly client_reference: string | null;
  readonly fault: string | null;
}

export interface View {
  readonly idempotency_key: string;
  readonly state: string;
  readonly attempts: number;
  readonly last_reason?: string;
  readonly expires_at: string;
  readonly destination_fingerprint: string;
  readonly provider: { readonly name: string; readonly message_id?: string };
}

export interface Transition {
  readonly seq: number;
  readonly from_state: string | null;
  readonly to_state: string;
  readonly reason: string;
  readonly actor: string;
  readonly attempt: number;
  readonly provider_message_id?: string;
}

/** The whole local stack on the suite's emulators, with random ports and fast timings. */
export async function startPipeline(options: Partial<LocalStackOptions> = {}) {
  const stack: LocalStack = await startLocalStack({
    dynamodbEndpoint: inject('dynamodbEndpoint'),
    sqsEndpoint: inject('sqsEndpoint'),
    tableName: uniqueName('pipe'),
    apiPort: 0,
    simPort: 0,
    reconcileIntervalMs: 250,
    simulatorStatusDelaysMs: { sent: 50, delivered: 300 },
    logger: new Logger({ serviceName: 'reset-notifier-test', logLevel: 'SILENT' }),
    ...options,
    env: { ...FAST_ENV, ...(options.env ?? {}) },
  });

  const json = async <T>(response: Response): Promise<T> => (await response.json()) as T;
  const pipeline = {
    stack,
    async post(body: Record<string, unknown> = aRequestBody(), headers: Record<string, string> = {}) {
      return fetch(`${stack.apiUrl}/v1/notifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    },
    async admit(overrides: Record<string, unknown> = {}): Promise<View> {
      // A fresh code per admission (see aFreshCode): content lookups tell keys apart by their secret.
      const response = await pipeline.post(aRequestBody({ params: { code: aFreshCode() }, ...overrides }));
      expect(response.status).toBe(202);
      return json<View>(response);
    },
    async view(key: string): Promise<View> {
      return json<View>(await fetch(`${stack.apiUrl}/v1/notifications/${encodeURIComponent(key)}`));
    },
    async evidence(key: string): Promise<Transition[]> {
      const body = await json<{ transitions: Transition[] }>(
        await fetch(`${stack.apiUrl}/v1/notifications/${encodeURIComponent(key)}/evidence`),
      );
      return body.transitions;
    },
    async messages(key: string): Promise<SimMessage[]> {
      const body = await json<{ messages: SimMessage[] }>(await fetch(`${stack.simUrl}/_sim/messages`));
      return body.messages.filter((m) => m.client_reference?.startsWith(`${key}#`));
    },
    async requests(key: string): Promise<SimRequest[]> {
      const body = await json<{ requests: SimRequest[] }>(await fetch(`${stack.simUrl}/_sim/requests`));
      return body.requests.filter((r) => r.client_reference?.startsWith(`${key}#`));
    },
    async fault(plan: Record<string, unknown> | Record<string, unknown>[]) {
      const response = await fetch(`${stack.simUrl}/_sim/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(plan),
      });
      expect(response.ok).toBe(true);
    },
    async clearFaults() {
      await fetch(`${stack.simUrl}/_sim/faults`, { method: 'DELETE' });
    },
    /**
     * Polls the view until its state is one of `states` (or fails with the trail so far). The
     * timeout is a hang guard, not a budget (docs/testing.md#hang-guards).
     */
    async waitFor(key: string, states: readonly string[], timeoutMs = 100_000): Promise<View> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const view = await pipeline.view(key);
        if (states.includes(view.state)) return view;
        if (Date.now() > deadline) {
          const trail = (await pipeline.evidence(key)).map(
            (t) => `${t.from_state}->${t.to_state}(${t.reason})`,
          );
          throw new Error(
            `${key} stayed ${view.state}, wanted ${states.join('|')}; trail: ${trail.join(', ')}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => stack.stop(),
  };
  return pipeline;
}

export type Pipeline = Awaited<ReturnType<typeof startPipeline>>;

/** Evidence must be gap-free, start at admission, and chain each to_state into the next from_state. */
export function expectConsistentTrail(trail: readonly Transition[], finalState: string): void {
  expect(trail.map((t) => t.seq)).toEqual(trail.map((_, i) => i + 1));
  expect(trail[0]).toMatchObject({ from_state: null, to_state: 'accepted', reason: 'admitted' });
  for (let i = 1; i < trail.length; i++) expect(trail[i]?.from_state).toBe(trail[i - 1]?.to_state);
  expect(trail.at(-1)?.to_state).toBe(finalState);
}
