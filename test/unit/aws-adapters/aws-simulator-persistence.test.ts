/**
 * The AWS simulator across a `--data-dir` restart keeps what SNS and End User Messaging keep: a
 * message's delivery-status log line stays readable (the SNS adapter's only lookup), and End User
 * Messaging's events still due are published. Numbers are on disk only sealed; bodies not at all.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AwsSimulatorOptions,
  type RunningAwsSimulator,
  startAwsSimulator,
} from '../../../local/simulator/aws/server.js';
import { startReceiver } from '../../support/aws-wire.js';
import { ManualClock } from '../../support/manual-clock.js';
import { AT_ONCE, aLookupRef, aSendCommand, CODE, eumProvider, PHONE, snsProvider } from './support.js';

const running: RunningAwsSimulator[] = [];
let dir: string | undefined;

afterEach(async () => {
  for (const sim of running.splice(0)) await sim.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function aLedger(): Promise<AwsSimulatorOptions> {
  dir = await mkdtemp(join(tmpdir(), 'aws-sim-persist-'));
  return { ledgerFile: join(dir, 'aws-simulator-ledger.jsonl'), ledgerKey: randomBytes(32) };
}

async function aSimulator(options: AwsSimulatorOptions): Promise<RunningAwsSimulator> {
  const sim = await startAwsSimulator({ ...AT_ONCE, ...options });
  running.push(sim);
  return sim;
}

async function restart(sim: RunningAwsSimulator, options: AwsSimulatorOptions): Promise<RunningAwsSimulator> {
  await sim.stop();
  running.splice(running.indexOf(sim), 1);
  return aSimulator(options);
}

describe('AWS simulator across a --data-dir restart', () => {
  it('SNS: the delivery-status line of a message published before the restart is still found', async () => {
    // Prepare
    const options = await aLedger();
    const first = await aSimulator(options);
    const sent = await snsProvider(first).send(aSendCommand());
    const id = sent.kind === 'accepted' ? sent.messageId : '';

    // Act
    const second = await restart(first, options);
    const looked = await snsProvider(second).lookup(aLookupRef(id));

    // Assess
    expect(sent.kind).toBe('accepted');
    expect(looked).toEqual({ kind: 'found', messageId: id, status: 'sent', detail: 'sns:status:SUCCESS' });
    const file = await readFile(options.ledgerFile ?? '', 'utf8');
    expect(file).toContain('"sealed":"aes1.');
    expect(file).not.toContain(PHONE.slice(2));
    expect(file).not.toContain(CODE);
  });

  it('End User Messaging: the events still due after the restart are published, none twice', async () => {
    // Prepare: queued at once, delivered 1 s later; the restart happens in between
    const options = await aLedger();
    const clock = new ManualClock(Date.now());
    const receiver = await startReceiver();
    const timed = { ...options, clock, eventDelayMs: 0, statusDelaysMs: { sent: 500, delivered: 1_000 } };
    const first = await aSimulator({ ...timed, eventsUrl: receiver.url });
    const sent = await eumProvider(first).send(aSendCommand({ deadline: clock.now() + 2_000 }));
    clock.advance(100);
    await receiver.waitFor(1);

    // Act
    await restart(first, { ...timed, eventsUrl: receiver.url });
    clock.advance(1_000);
    const received = await receiver.waitFor(3);

    // Assess
    const types = received.map((r) => JSON.parse(JSON.parse(r.body).Message).eventType as string);
    expect(sent.kind).toBe('accepted');
    expect(types).toEqual(['TEXT_QUEUED', 'TEXT_SUCCESSFUL', 'TEXT_DELIVERED']);
    await receiver.stop();
  });
});
