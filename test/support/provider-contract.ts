/**
 * The contract every SMS provider adapter keeps, run against each adapter with its own simulator
 * (over HTTP, through the real clients): what a send returns, that lookups never send, and that
 * nothing a provider shows after a send it accepted ever reads as "absent".
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LookupRef, SendCommand, SmsProvider } from '../../shared/ports/sms-provider.js';

/** One adapter wired to its simulator. */
export interface ProviderUnderTest {
  readonly provider: SmsProvider;
  /** The simulator's base URL (control API: `/_sim/faults`, `/_sim/messages`). */
  readonly simUrl: string;
  stop(): Promise<void>;
}

let sequence = 0;

/** A send command to a fresh number, with a secret only it carries. */
function aCommand(overrides: Partial<SendCommand> = {}): SendCommand {
  sequence += 1;
  const idempotencyKey = `contract-${process.pid}-${sequence}`;
  const code = String(100_000 + ((sequence * 7_919) % 900_000));
  return {
    idempotencyKey,
    attempt: 1,
    clientReference: `${idempotencyKey}#1`,
    to: `+1415555${String(1_000 + (sequence % 9_000)).padStart(4, '0')}`,
    body: `Your code is ${code}`,
    validityPeriodSeconds: 300,
    deadline: Date.now() + 3_000,
    ...overrides,
  };
}

/** The lookup the reconciler would make for `command` (without an id unless given). */
function aRef(command: SendCommand, messageId?: string): LookupRef {
  const secret = command.body.replace(/\D/g, '');
  return {
    ...(messageId === undefined ? {} : { messageId }),
    idempotencyKey: command.idempotencyKey,
    attempt: command.attempt,
    clientReference: command.clientReference,
    to: command.to,
    secret,
    attemptStartedAt: Date.now() - 2_000,
    callDeadline: Date.now() - 1,
  };
}

async function control(simUrl: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${simUrl}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return response.json();
}

const ledger = async (simUrl: string) =>
  ((await control(simUrl, 'GET', '/_sim/messages')) as { messages: unknown[] }).messages;
const requests = async (simUrl: string) =>
  ((await control(simUrl, 'GET', '/_sim/requests')) as { requests: unknown[] }).requests;

/** Declares the provider contract suite for one adapter. */
export function describeProviderContract(name: string, start: () => Promise<ProviderUnderTest>): void {
  describe(`provider contract: ${name}`, () => {
    let subject: ProviderUnderTest;
    beforeEach(async () => {
      subject = await start();
    });
    afterEach(async () => {
      await subject.stop();
    });

    it('an accepted send returns an id, and the provider holds exactly that one message', async () => {
      // Act
      const outcome = await subject.provider.send(aCommand());
      // Assess
      expect(outcome.kind).toBe('accepted');
      expect(outcome.kind === 'accepted' ? outcome.messageId : '').not.toBe('');
      expect(await ledger(subject.simUrl)).toHaveLength(1);
    });

    it('a lookup by the returned id is found with that id, never absent', async () => {
      // Prepare
      const command = aCommand();
      const sent = await subject.provider.send(command);
      if (sent.kind !== 'accepted') throw new Error(`send was ${sent.kind}`);
      // Act
      const looked = await subject.provider.lookup(aRef(command, sent.messageId));
      // Assess
      expect(looked).toMatchObject({ kind: 'found', messageId: sent.messageId });
    });

    it('a send that timed out after the provider accepted it is unknown, and no lookup calls it absent', async () => {
      // Prepare: the provider accepts the next message and never answers
      await control(subject.simUrl, 'POST', '/_sim/faults', { mode: 'timeout_after_accept', count: 1 });
      const command = aCommand({ deadline: Date.now() + 300 });
      // Act
      const outcome = await subject.provider.send(command);
      const looked = [
        await subject.provider.lookup(aRef(command)),
        await subject.provider.lookup(aRef(command)),
      ];
      // Assess: the message exists; whatever the adapter can see of it, "absent" would be a lie
      expect(outcome).toMatchObject({ kind: 'unknown', timedOut: true });
      expect(await ledger(subject.simUrl)).toHaveLength(1);
      for (const read of looked) expect(read.kind).not.toBe('absent');
    });

    it('a permanent refusal is not_sent_permanent and leaves no message', async () => {
      // Prepare
      await control(subject.simUrl, 'POST', '/_sim/faults', { mode: 'reject_permanent', count: 1 });
      // Act
      const outcome = await subject.provider.send(aCommand());
      // Assess
      expect(outcome.kind).toBe('not_sent_permanent');
      expect(await ledger(subject.simUrl)).toHaveLength(0);
    });

    it('a 5xx is never taken for an acceptance, nor for a refusal it cannot prove', async () => {
      // Prepare
      await control(subject.simUrl, 'POST', '/_sim/faults', { mode: 'error_5xx_after_accept', count: 1 });
      // Act
      const outcome = await subject.provider.send(aCommand());
      // Assess: the message may exist (it does): unknown, never "not sent"
      expect(outcome.kind).toBe('unknown');
      expect(await ledger(subject.simUrl)).toHaveLength(1);
    });

    it('lookups of every kind never send', async () => {
      // Prepare
      const command = aCommand();
      const sent = await subject.provider.send(command);
      const before = (await requests(subject.simUrl)).length;
      // Act
      await subject.provider.lookup(aRef(command, sent.kind === 'accepted' ? sent.messageId : undefined));
      await subject.provider.lookup(aRef(command));
      await subject.provider.lookup(aRef(aCommand()));
      // Assess
      expect((await requests(subject.simUrl)).length).toBe(before);
      expect(await ledger(subject.simUrl)).toHaveLength(1);
    });

    it('declares how it finds messages, and proves absence only if it says so', () => {
      const { capabilities } = subject.provider;
      expect(capabilities.findBy).toContain('id');
      expect(['never', 'conditional']).toContain(capabilities.absenceProof);
    });
  });
}
