import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError, StoreWriteError } from '../../../shared/adapters/dynamodb/errors.js';
import { SealedValueError as KmsSealedValueError } from '../../../shared/adapters/kms-cipher.js';
import { SealedValueError as LocalSealedValueError } from '../../../shared/adapters/local-cipher.js';
import { UsageError } from '../../../shared/cli/output.js';
import {
  CodedError,
  ForbiddenTransitionError,
  InvalidConfigurationError,
} from '../../../shared/domain/errors.js';
import { TransientFault } from '../../../shared/ports/faults.js';
import { RequestHeldBackError } from '../../../shared/providers/request-departure.js';
import { MissingPayloadError } from '../../../shared/usecases/errors.js';

/** The one coded base; the client is a standalone package with its own error base. */
const BASE_FILE = 'shared/domain/errors.ts';
const STANDALONE = 'shared/client/';

async function tsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

describe('one coded error base (shared/domain/errors.ts)', () => {
  it('no class in shared/ extends Error but the base', async () => {
    // Prepare
    const files = (await tsFiles('shared')).filter((f) => f !== BASE_FILE && !f.startsWith(STANDALONE));

    // Act
    const strays: string[] = [];
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(/class\s+(\w+)(?:<[^>]*>)?\s+extends\s+(?:globalThis\.)?Error\b/g)) {
        strays.push(`${file}: ${match[1]}`);
      }
    }

    // Assess
    expect(strays).toEqual([]);
  });

  it.each([
    [
      'domain',
      () => new InvalidConfigurationError('bad key', { cause: new Error('root') }),
      'invalid_configuration',
    ],
    ['use case', () => new MissingPayloadError('none', { cause: new Error('root') }), 'missing_payload'],
    ['store', () => new StoreWriteError('refused', { cause: new Error('root') }), 'store_write_failed'],
    [
      'local cipher',
      () => new LocalSealedValueError('bad', { cause: new Error('root') }),
      'sealed_value_invalid',
    ],
    [
      'KMS cipher',
      () => new KmsSealedValueError('bad', { cause: new Error('root') }),
      'sealed_value_invalid',
    ],
    ['provider', () => new RequestHeldBackError('held', { cause: new Error('root') }), 'request_held_back'],
    ['CLI', () => new UsageError('usage', { cause: new Error('root') }), 'usage'],
  ] as const)('a %s fault carries a stable code and its cause', (_room, make, code) => {
    // Act
    const error = make();

    // Assess
    expect(error).toBeInstanceOf(CodedError);
    expect(error.code).toBe(code);
    expect((error.cause as Error).message).toBe('root');
    expect(error.name).toBe(error.constructor.name);
  });

  it('a transient fault is coded and keeps its retry hint', () => {
    // Act
    const error = new StoreUnavailableError('throttled', {
      retryAfterSeconds: 2.2,
      cause: new Error('root'),
    });

    // Assess
    expect(error).toBeInstanceOf(CodedError);
    expect(error).toBeInstanceOf(TransientFault);
    expect(error).toMatchObject({
      code: 'store_unavailable',
      retryAfterSeconds: 3,
      name: 'StoreUnavailableError',
    });
    expect((error.cause as Error).message).toBe('root');
  });

  it('a forbidden transition names its edge', () => {
    // Act
    const error = new ForbiddenTransitionError('sent', 'accepted', 'claimed');

    // Assess
    expect(error).toMatchObject({ code: 'forbidden_transition', from: 'sent', to: 'accepted' });
  });
});
