/**
 * The Twilio simulator across a `--data-dir` restart keeps what Twilio keeps: the body, the
 * numbers, the status timeline with its error codes and dates, redactions, and the callbacks still
 * due. Bodies and numbers are on disk only sealed (local/simulator/ledger-file.ts). Regression for
 * issue 20 item 6: restarted messages used to reload with blank bodies, which the adapter reads as
 * Message Redaction, so absence was never provable again for the rest of the run.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LedgerFileError } from '../../../local/simulator/ledger-file.js';
import {
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from '../../../local/simulator/server.js';
import type { SendCommand } from '../../../shared/ports/sms-provider.js';
import { eventually } from '../../support/eventually.js';
import type { ManualClock } from '../../support/manual-clock.js';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  aClock,
  anAfterDeadlineRef,
  aProvider,
  aSendCommand,
  basicAuth,
  primeCanary,
} from './support.js';

/** The local stack's data key, as `local-keys.json` keeps it under --data-dir. */
const aDataKey = () => randomBytes(32);
/** Stable across restarts, as the stack's keyed fingerprinter is. */
const fingerprint = (e164: string) => `fp-test:${e164.length}`;

const running: RunningSimulator[] = [];
let dir: string | undefined;
afterEach(async () => {
  for (const sim of running.splice(0)) await sim.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A data dir with its ledger file path. */
async function aDataDir(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'sim-persist-'));
  return join(dir, 'simulator-ledger.jsonl');
}

async function aSimulator(clock: ManualClock, options: SimulatorOptions): Promise<RunningSimulator> {
  const sim = await startSimulator({
    authToken: AUTH_TOKEN,
    clock,
    fingerprint,
    statusDelaysMs: { sent: 200, delivered: 1_000 },
    ...options,
  });
  running.push(sim);
  return sim;
}

/**
 * Stops `sim` and starts another on the same ledger file and key: a restart. On a fresh port: the
 * old port's pooled keep-alive sockets would otherwise meet the new server half closed.
 */
async function restart(
  sim: RunningSimulator,
  clock: ManualClock,
  options: SimulatorOptions,
): Promise<RunningSimulator> {
  await sim.stop();
  running.splice(running.indexOf(sim), 1);
  return aSimulator(clock, options);
}

/** A status-callback receiver that outlives the simulator's restart; records each posted status by sid. */
async function aCallbackSink(): Promise<{ url: string; statuses: (sid: string) => string[]; close(): void }> {
  const posted: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      posted.push(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/status`,
    statuses: (sid) =>
      posted.filter((p) => p.get('MessageSid') === sid).map((p) => p.get('MessageStatus') ?? ''),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const messageUrl = (sim: RunningSimulator, sid: string) =>
  `${sim.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages/${sid}.json`;

async function fetchMessage(sim: RunningSimulator, sid: string): Promise<Record<string, unknown>> {
  const response = await fetch(messageUrl(sim, sid), { headers: { authorization: basicAuth() } });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

async function listTo(sim: RunningSimulator, to: string): Promise<Record<string, unknown>[]> {
  const url = `${sim.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json?To=${encodeURIComponent(to)}`;
  const page = (await (await fetch(url, { headers: { authorization: basicAuth() } })).json()) as {
    messages: Record<string, unknown>[];
  };
  return page.messages;
}

async function sendOne(sim: RunningSimulator, clock: ManualClock, command: SendCommand): Promise<string> {
  const outcome = await aProvider(sim, clock).send(command);
  if (outcome.kind !== 'accepted') throw new Error(`send was ${outcome.kind}`);
  return outcome.messageId;
}

describe('Twilio simulator across a --data-dir restart', () => {
  it('reads every message back as Twilio would show it: body, numbers, status, error code, dates, sid', async () => {
    // Prepare: one delivered message, one that failed with 30500, one still queued at the restart
    const ledgerFile = await aDataDir();
    const options = { ledgerFile, ledgerKey: aDataKey() };
    const clock = aClock();
    const first = await aSimulator(clock, options);
    const delivered = aSendCommand(clock);
    const deliveredSid = await sendOne(first, clock, delivered);
    await fetch(`${first.url}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ mode: 'fail_not_sent', error_code: 30500, count: 1 }),
    });
    const failedSid = await sendOne(first, clock, aSendCommand(clock));
    clock.advance(1_500);
    const queued = aSendCommand(clock);
    const queuedSid = await sendOne(first, clock, queued);
    const before = await Promise.all(
      [deliveredSid, failedSid, queuedSid].map((sid) => fetchMessage(first, sid)),
    );

    // Act
    const second = await restart(first, clock, options);
    const after = await Promise.all(
      [deliveredSid, failedSid, queuedSid].map((sid) => fetchMessage(second, sid)),
    );
    const listed = await listTo(second, delivered.to);

    // Assess
    expect(after).toEqual(before);
    expect(after[0]).toMatchObject({ status: 'delivered', body: delivered.body, to: delivered.to });
    expect(after[1]).toMatchObject({ status: 'failed', error_code: 30500 });
    expect(after[2]).toMatchObject({ status: 'queued', body: queued.body });
    expect(listed.map((m) => [m.sid, m.body])).toEqual([[deliveredSid, delivered.body]]);
  });

  it('keeps absence provable: the canary reads an unredacted message, not a blank body', async () => {
    // Prepare: a message of ours sent before the restart, inside the next attempt's window (the
    // adapter's window scan reads it: a blank body there is Message Redaction)
    const ledgerFile = await aDataDir();
    const options = { ledgerFile, ledgerKey: aDataKey() };
    const clock = aClock();
    const first = await aSimulator(clock, options);
    await primeCanary(aProvider(first, clock), clock);
    const events: string[] = [];

    // Act
    const second = await restart(first, clock, options);
    const afterRestart = aProvider(second, clock, { onEvent: (event) => events.push(event.kind) });
    await primeCanary(afterRestart, clock);
    const lookup = await afterRestart.lookup(anAfterDeadlineRef(aSendCommand(clock), clock));

    // Assess
    expect(lookup).toEqual({ kind: 'absent' });
    expect(events).not.toContain('redaction_observed');
  });

  it('never writes a body, a number or a code in clear', async () => {
    // Prepare
    const ledgerFile = await aDataDir();
    const clock = aClock();
    const sim = await aSimulator(clock, { ledgerFile, ledgerKey: aDataKey() });
    const command = aSendCommand(clock);
    const code = command.body.split(' ').at(-1) ?? '';

    // Act
    await sendOne(sim, clock, command);
    clock.advance(1_500);
    const file = await readFile(ledgerFile, 'utf8');

    // Assess
    expect(file).toContain('"sealed":"aes1.');
    expect(file).not.toContain(command.body);
    expect(file).not.toContain(code);
    expect(file).not.toContain(command.to);
    expect(file).not.toContain(command.to.slice(2));
    // With the stack's key given, no key file is left next to the ledger.
    expect(existsSync(`${ledgerFile}.key`)).toBe(false);
  });

  it('refuses to start on a ledger sealed with another key (never reloads blank bodies)', async () => {
    // Prepare
    const ledgerFile = await aDataDir();
    const clock = aClock();
    const first = await aSimulator(clock, { ledgerFile, ledgerKey: aDataKey() });
    await sendOne(first, clock, aSendCommand(clock));
    await first.stop();

    // Act
    const started = aSimulator(clock, { ledgerFile, ledgerKey: aDataKey() });

    // Assess
    await expect(started).rejects.toBeInstanceOf(LedgerFileError);
  });

  it('keeps a redaction (POST Body="") across the restart, as Twilio keeps it', async () => {
    // Prepare
    const ledgerFile = await aDataDir();
    const options = { ledgerFile, ledgerKey: aDataKey() };
    const clock = aClock();
    const first = await aSimulator(clock, options);
    const sid = await sendOne(first, clock, aSendCommand(clock));
    clock.advance(1_500);
    const redacted = await fetch(messageUrl(first, sid), {
      method: 'POST',
      headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Body=',
    });
    expect(redacted.status).toBe(200);

    // Act
    const second = await restart(first, clock, options);
    const message = await fetchMessage(second, sid);

    // Assess
    expect(message.body).toBe('');
  });

  it('without the stack key, seals under a key file kept next to the ledger (mode 0600)', async () => {
    // Prepare
    const ledgerFile = await aDataDir();
    const clock = aClock();
    const first = await aSimulator(clock, { ledgerFile });
    const command = aSendCommand(clock);
    const sid = await sendOne(first, clock, command);

    // Act
    const second = await restart(first, clock, { ledgerFile });
    const message = await fetchMessage(second, sid);

    // Assess
    expect(message.body).toBe(command.body);
    expect(statSync(`${ledgerFile}.key`).mode & 0o777).toBe(0o600);
    expect(await readFile(ledgerFile, 'utf8')).not.toContain(command.body);
  });

  it('posts the status callbacks still due after the restart, and none of those due before', async () => {
    // Prepare: sent at +200 ms and delivered at +1000 ms; the restart happens at +500 ms
    const ledgerFile = await aDataDir();
    const options = { ledgerFile, ledgerKey: aDataKey() };
    const sink = await aCallbackSink();
    const clock = aClock();
    const first = await aSimulator(clock, options);
    const outcome = await aProvider(first, clock, { statusCallbackBase: sink.url }).send(aSendCommand(clock));
    const sid = outcome.kind === 'accepted' ? outcome.messageId : '';
    clock.advance(500);
    await eventually(() => expect(sink.statuses(sid)).toEqual(['sent']));

    // Act
    await restart(first, clock, options);
    clock.advance(1_000);

    // Assess
    try {
      await eventually(() => expect(sink.statuses(sid)).toEqual(['sent', 'delivered']));
    } finally {
      sink.close();
    }
  });
});
