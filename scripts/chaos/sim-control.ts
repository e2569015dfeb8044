/** The chaos driver's calls to the simulator's control API (local/simulator/kernel.ts). */
import type { EventSpec } from './scenario.js';

/** Registers an event's secrets with the AWS simulator's SNS oracle, which attributes a body to its key by them. */
export async function registerSecrets(simUrl: string, spec: EventSpec): Promise<void> {
  const entries = [spec.params, spec.conflictParams]
    .filter((params) => params !== undefined)
    .map((params) => ({
      secret: 'code' in params ? params.code : params.reset_url,
      key: spec.idempotencyKey,
    }));
  await fetch(`${simUrl}/_sim/oracle`, { method: 'POST', body: JSON.stringify({ entries }) });
}

/**
 * Replaces the simulator's fault plans (one per lane; none = DELETE). False when the simulator
 * refused them with a 400 (an unknown mode); any other failure throws.
 */
export async function setFaults(simUrl: string, plans: readonly object[]): Promise<boolean> {
  const response = await fetch(`${simUrl}/_sim/faults`, {
    method: plans.length === 0 ? 'DELETE' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(plans.length === 0 ? {} : { body: JSON.stringify(plans) }),
  });
  await response.arrayBuffer();
  if (response.status === 400) return false;
  if (!response.ok) throw new Error(`simulator refused the fault plan: ${response.status}`);
  return true;
}

export async function simList<T>(simUrl: string, what: 'messages' | 'requests'): Promise<T[]> {
  const response = await fetch(`${simUrl}/_sim/${what}`);
  const body = (await response.json()) as Record<string, T[]>;
  return body[what] ?? [];
}
