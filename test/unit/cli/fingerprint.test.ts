/**
 * `reset-notifier fingerprint`: relating one number's evidence across a fingerprint-key rotation
 * (docs/security.md#fingerprint-key-rotation), in-process with the numbers on standard input.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BufferOut } from '../../../shared/cli/output.js';
import { runCli } from '../../../shared/cli/program.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import { ManualClock } from '../../support/manual-clock.js';

const KEY_1 = Buffer.alloc(32, 1);
const KEY_2 = Buffer.alloc(32, 2);
const RING = `1:${KEY_1.toString('hex')},2:${KEY_2.toString('hex')}`;
const PHONE = '+33612345678';

async function* linesOf(...lines: string[]): AsyncIterable<string> {
  yield* lines;
}

async function fingerprint(args: string[], env: Record<string, string>, ...lines: string[]) {
  const out = new BufferOut();
  const err = new BufferOut();
  const code = await runCli(['fingerprint', ...args], {
    out,
    err,
    env,
    clock: new ManualClock(0),
    lines: () => linesOf(...lines),
  });
  return { code, out: out.text(), err: err.text() };
}

describe('reset-notifier fingerprint', () => {
  it("prints a number's fingerprint under each key, the current first: fp2 and the fp1 of before", async () => {
    // Act: two spellings of one number (the national trunk prefix kept in the second).
    const run = await fingerprint(
      [],
      { FINGERPRINT_KEY: RING, FINGERPRINT_KEY_VERSION: '2' },
      PHONE,
      '+33 0 6 12 34 56 78',
    );

    // Assess
    const before = createFingerprinter(KEY_1).destination(PHONE);
    const after = createFingerprinter({ current: 2, keys: [{ version: 2, secret: KEY_2 }] }).destination(
      PHONE,
    );
    expect(run.code).toBe(0);
    expect(run.out).toBe(`${after} ${before}\n${after} ${before}\n`);
    expect(after).toMatch(/^fp2:/);
    expect(run.out + run.err).not.toContain('612345678');
  });

  it('prints JSON with the current version and input lines, never the numbers', async () => {
    // Act
    const run = await fingerprint(['--json'], { FINGERPRINT_KEY: RING }, '', PHONE);

    // Assess
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({
      current_version: 1,
      entries: [
        {
          line: 2,
          destination_fingerprints: [expect.stringMatching(/^fp1:/), expect.stringMatching(/^fp2:/)],
        },
      ],
    });
  });

  it('names the line of a number it refuses, without echoing it, and exits 1', async () => {
    // Act
    const run = await fingerprint([], { FINGERPRINT_KEY: RING }, 'not a number 0612', PHONE);

    // Assess
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^line 1: must be an international number/);
    expect(run.err).not.toContain('0612');
    expect(run.out.split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('reads the key of a local stack from its --data-dir', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'rn-fp-'));
    await writeFile(
      join(dir, 'local-keys.json'),
      JSON.stringify({ dataKey: KEY_2.toString('hex'), fingerprintKey: KEY_1.toString('hex') }),
    );
    try {
      // Act
      const run = await fingerprint(['--data-dir', dir], {}, PHONE);

      // Assess
      expect(run.out).toBe(`${createFingerprinter(KEY_1).destination(PHONE)}\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says which keys it needs when none is configured', async () => {
    // Act
    const run = await fingerprint([], {}, PHONE);

    // Assess
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/fingerprint needs the service's fingerprint key/);
  });
});
