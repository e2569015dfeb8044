import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator } from '../../../local/simulator/server.js';
import { systemClock } from '../../../shared/domain/clock.js';
import { createTwilioProvider } from '../../../shared/providers/twilio/index.js';

let dir: string | undefined;
/** Stable across restarts, as the stack's keyed fingerprinter is with --data-dir. */
const fingerprint = (e164: string) => `fp-test:${createHash('sha256').update(e164).digest('hex')}`;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const providerFor = (url: string) =>
  createTwilioProvider({
    baseUrl: url,
    accountSid: 'ACtest',
    authToken: 'simulator-token',
    from: '+15005550006',
    statusCallbackBase: `${url}/_callbacks/status`,
    redaction: 'off',
    listLagAllowanceMs: 0,
    clock: systemClock,
    lookupTimeoutMs: 2_000,
  });

describe('simulator ledger file', () => {
  it('keeps accepted messages across a restart: found by sid and by content, no body stored in clear', async () => {
    // Prepare
    dir = await mkdtemp(join(tmpdir(), 'sim-ledger-'));
    const ledgerFile = join(dir, 'ledger.jsonl');
    const first = await startSimulator({ port: 0, ledgerFile, fingerprint });
    const sent = await providerFor(first.url).send({
      idempotencyKey: 'k1',
      attempt: 1,
      clientReference: 'k1#1',
      to: '+14155550123',
      body: 'Your password reset code is 483920.',
      validityPeriodSeconds: 600,
      deadline: Date.now() + 2_000,
    });
    await first.stop();
    // Act
    const second = await startSimulator({ port: 0, ledgerFile, fingerprint });
    const ref = {
      idempotencyKey: 'k1',
      attempt: 1,
      clientReference: 'k1#1',
      to: '+14155550123',
      secret: '483920',
      attemptStartedAt: Date.now() - 60_000,
      callDeadline: Date.now() - 58_000,
    };
    const restarted = providerFor(second.url);
    const byContent = await restarted.lookup(ref);
    const found = await restarted.lookup({
      ...ref,
      messageId: sent.kind === 'accepted' ? sent.messageId : '',
    });
    const ledger = await (await fetch(`${second.url}/_sim/messages`)).json();
    await second.stop();
    // Assess
    expect(sent.kind).toBe('accepted');
    expect(found).toMatchObject({ kind: 'found', messageId: sent.kind === 'accepted' ? sent.messageId : '' });
    // The reloaded message keeps its number and body, as Twilio keeps them: content finds it.
    expect(byContent).toMatchObject({
      kind: 'found',
      messageId: sent.kind === 'accepted' ? sent.messageId : '',
    });
    expect((ledger as { messages: unknown[] }).messages).toHaveLength(1);
    const file = await readFile(ledgerFile, 'utf8');
    expect(file).not.toContain('483920');
    expect(file).not.toContain('4155550123');
  });

  it('keeps a message deleted through the API deleted, once, across a restart', async () => {
    // Prepare
    dir = await mkdtemp(join(tmpdir(), 'sim-ledger-'));
    const ledgerFile = join(dir, 'ledger.jsonl');
    const first = await startSimulator({ port: 0, ledgerFile, fingerprint });
    const auth = `Basic ${Buffer.from('ACtest:simulator-token').toString('base64')}`;
    const sent = await providerFor(first.url).send({
      idempotencyKey: 'k2',
      attempt: 1,
      clientReference: 'k2#1',
      to: '+14155550124',
      body: 'Your password reset code is 111222.',
      validityPeriodSeconds: 600,
      deadline: Date.now() + 2_000,
    });
    const sid = sent.kind === 'accepted' ? sent.messageId : 'none';
    await fetch(`${first.url}/2010-04-01/Accounts/ACtest/Messages/${sid}.json`, {
      method: 'DELETE',
      headers: { authorization: auth },
    });
    await first.stop();

    // Act
    const second = await startSimulator({ port: 0, ledgerFile, fingerprint });
    const ledger = (await (await fetch(`${second.url}/_sim/messages`)).json()) as { messages: unknown[] };
    const fetched = await fetch(`${second.url}/2010-04-01/Accounts/ACtest/Messages/${sid}.json`, {
      headers: { authorization: auth },
    });
    await second.stop();

    // Assess
    expect(ledger.messages).toMatchObject([{ id: sid, deleted: true }]);
    expect(fetched.status).toBe(404);
  });
});
