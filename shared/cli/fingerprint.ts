import { destinationFingerprintsOf } from '../composition/fingerprints.js';
import type { Fingerprinter } from '../domain/fingerprint.js';
import { type TextOut, writeJson } from './output.js';

/** What `fingerprint` needs: the service's fingerprinter, the numbers, where to write. */
export interface FingerprintCliDeps {
  readonly fingerprinter: Fingerprinter;
  /** One number per line, in international form (any spelling the API accepts). */
  readonly lines: AsyncIterable<string>;
  readonly out: TextOut;
  readonly err: TextOut;
}

/** One number's fingerprints as `fingerprint --json` prints them (the number itself never). */
interface FingerprintEntry {
  /** The input line the number was on. */
  readonly line: number;
  /** Under every key held, the current one first (`fp2:...`, then `fp1:...`). */
  readonly destination_fingerprints: readonly string[];
}

/**
 * `fingerprint`: the destination fingerprint of each number read, under every fingerprint key the
 * configuration holds, so an operator can relate evidence taken before and after a key rotation
 * (`fp1:...` and `fp2:...` of one number; docs/security.md#fingerprint-key-rotation). Numbers come
 * from standard input, not arguments, so none lands in a shell history; output names input lines,
 * never a number. Exit code 1 when a line is not a valid number.
 */
export async function runFingerprint(
  deps: FingerprintCliDeps,
  options: { readonly json?: boolean } = {},
): Promise<number> {
  const entries: FingerprintEntry[] = [];
  let line = 0;
  let refused = 0;
  for await (const raw of deps.lines) {
    line += 1;
    const text = raw.trim();
    if (text === '') continue;
    const found = destinationFingerprintsOf(deps.fingerprinter, text);
    if (found.kind === 'refused') {
      deps.err.write(`line ${line}: ${found.message}\n`);
      refused += 1;
      continue;
    }
    const entry = { line, destination_fingerprints: found.fingerprints };
    entries.push(entry);
    if (!options.json) deps.out.write(`${entry.destination_fingerprints.join(' ')}\n`);
  }
  if (options.json) writeJson(deps.out, { current_version: deps.fingerprinter.version, entries });
  return refused > 0 ? 1 : 0;
}
