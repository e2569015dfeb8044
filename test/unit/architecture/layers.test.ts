import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIOME = join(process.cwd(), 'node_modules', '.bin', 'biome');

/**
 * The layer rules live in biome.json (`noRestrictedImports` per folder) and run in `npm run lint`.
 * These probes prove the rules bite: each probe file is linted with the project's own biome.json
 * in a scratch copy of the folder layout, never inside the source tree.
 */
describe('layer rules (biome.json noRestrictedImports)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'layers-'));
    const config = JSON.parse(await readFile('biome.json', 'utf8')) as Record<string, unknown>;
    delete config.vcs;
    delete config.files;
    delete config.$schema;
    await writeFile(join(root, 'biome.json'), JSON.stringify(config));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Lints one probe file; resolves the restricted-import messages it produced. */
  async function restrictedImports(path: string, specifier: string): Promise<string[]> {
    const file = join(root, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, `import { probe } from '${specifier}';\n\nexport const used = probe;\n`);
    const output = await run(BIOME, ['lint', '--max-diagnostics=50', file], { cwd: root }).then(
      (r) => r.stdout + r.stderr,
      (error: { stdout: string; stderr: string }) => error.stdout + error.stderr,
    );
    await rm(file);
    return output.split('\n').filter((line) => line.includes('noRestrictedImports'));
  }

  it.each([
    ['shared/domain/probe.ts', '@aws-sdk/client-dynamodb'],
    ['shared/domain/probe.ts', 'zod'],
    ['shared/domain/probe.ts', '../adapters/dynamodb/store.js'],
    ['shared/ports/probe.ts', '../adapters/sqs/dispatch-queue.js'],
    ['shared/usecases/probe.ts', '../adapters/dynamodb/store.js'],
    ['shared/usecases/probe.ts', '@aws-sdk/client-sqs'],
    ['shared/handlers/probe.ts', '../adapters/sqs/dispatch-queue.js'],
    ['shared/handlers/probe.ts', '../providers/twilio/index.js'],
    ['shared/handlers/probe.ts', '../composition/provider.js'],
    ['shared/handlers/probe.ts', '@aws-sdk/util-dynamodb'],
    ['shared/adapters/probe.ts', '../../test/support/memory-store.js'],
    ['shared/providers/twilio/probe.ts', '../../../local/simulator/server.js'],
    ['shared/composition/probe.ts', '../../scripts/chaos/driver.js'],
    ['shared/usecases/probe.ts', '../../local/faults/dispatch-crash.js'],
    // A Lambda bundle must never pull aws-cdk-lib: only a provider's deploy side uses the CDK.
    ['shared/composition/probe.ts', '../providers/twilio/infra.js'],
    ['shared/composition/probe.ts', '../providers/infra-registry.js'],
    ['shared/providers/sns/probe.ts', 'aws-cdk-lib/aws-iam'],
    ['shared/providers/twilio/infra.ts', '../../../local/simulator/server.js'],
  ])('%s may not import %s', async (path, specifier) => {
    // Act
    const hits = await restrictedImports(path, specifier);

    // Assess
    expect(hits).toHaveLength(1);
  });

  it.each([
    ['shared/domain/probe.ts', './states.js'],
    ['shared/domain/probe.ts', 'node:crypto'],
    ['shared/usecases/probe.ts', '../domain/states.js'],
    ['shared/usecases/probe.ts', '../ports/store.js'],
    ['shared/handlers/probe.ts', '../usecases/admit-notification.js'],
    ['shared/adapters/probe.ts', '@aws-sdk/client-dynamodb'],
    ['shared/providers/twilio/infra.ts', '../../../infra/constructs/grants.js'],
    ['shared/providers/twilio/infra.ts', 'aws-cdk-lib/aws-iam'],
    ['shared/providers/infra-registry.ts', './twilio/infra.js'],
  ])('%s may import %s', async (path, specifier) => {
    // Act
    const hits = await restrictedImports(path, specifier);

    // Assess
    expect(hits).toEqual([]);
  });
});
