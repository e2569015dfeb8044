import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIOME = join(process.cwd(), 'node_modules', '.bin', 'biome');

/**
 * Every room has its import rule in biome.json (layers.test.ts probes the first five). A room's
 * override replaces the options of `shared/**` rather than adding to them, so these probes also
 * check that each shared room still refuses the tooling folders. One scratch copy of the layout,
 * all probes linted in one Biome run.
 */
const FORBIDDEN: readonly (readonly [string, string])[] = [
  ['shared/adapters/dynamodb/probe.ts', '../../usecases/admit-notification.js'],
  ['shared/adapters/probe.ts', '../providers/twilio/index.js'],
  ['shared/adapters/probe.ts', '../../local/stack.js'],
  ['shared/providers/sns/probe.ts', '../../http/request-schema.js'],
  ['shared/providers/sns/probe.ts', '../../cli/program.js'],
  ['shared/composition/probe.ts', '../cli/program.js'],
  ['shared/composition/probe.ts', '../../test/support/memory-store.js'],
  ['shared/cli/probe.ts', '../handlers/api-handler.js'],
  ['shared/cli/probe.ts', '../../scripts/chaos/driver.js'],
  ['shared/client/probe.ts', '../adapters/dynamodb/store.js'],
  ['shared/client/probe.ts', '../http/request-schema.js'],
  ['shared/http/probe.ts', '../adapters/dynamodb/store.js'],
  ['shared/http/probe.ts', '@aws-sdk/client-dynamodb'],
  ['shared/messages/probe.ts', '../usecases/view.js'],
  ['shared/messages/probe.ts', '@aws-sdk/client-sqs'],
  ['shared/handlers/probe.ts', '../../local/stack.js'],
  ['functions/probe.ts', '../shared/usecases/admit-notification.js'],
  ['functions/probe.ts', '../shared/adapters/dynamodb/store.js'],
  ['infra/probe.ts', '../local/stack.js'],
  ['infra/constructs/probe.ts', '../../test/support/fixtures.js'],
  ['local/probe.ts', '../scripts/chaos/driver.js'],
  ['local/probe.ts', '../infra/stack.js'],
  ['scripts/probe.ts', '../test/support/fixtures.js'],
  ['bench/probe.ts', '../scripts/chaos/driver.js'],
];

const ALLOWED: readonly (readonly [string, string])[] = [
  ['shared/adapters/probe.ts', '../ports/store.js'],
  ['shared/adapters/probe.ts', '../messages/dispatch-body.js'],
  ['shared/providers/twilio/probe.ts', '../../domain/provider.js'],
  ['shared/composition/probe.ts', '../providers/registry.js'],
  ['shared/cli/probe.ts', '../composition/store.js'],
  ['shared/client/probe.ts', '../domain/idempotency-key.js'],
  ['shared/client/probe.ts', './signing.js'],
  ['shared/http/probe.ts', '../usecases/view.js'],
  ['shared/messages/probe.ts', '../domain/states.js'],
  ['functions/probe.ts', '../shared/composition/handlers.js'],
  ['infra/probe.ts', '../shared/settings.js'],
  ['local/probe.ts', '../shared/composition/handlers.js'],
  ['scripts/probe.ts', '../local/stack.js'],
  ['bench/probe.ts', '../shared/composition/handlers.js'],
];

describe('room rules (biome.json noRestrictedImports, every room)', () => {
  let root: string;
  /** Restricted-import diagnostics by probe file. */
  const hits = new Map<string, number>();

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rooms-'));
    const config = JSON.parse(await readFile('biome.json', 'utf8')) as Record<string, unknown>;
    delete config.vcs;
    delete config.files;
    delete config.$schema;
    await writeFile(join(root, 'biome.json'), JSON.stringify(config));
    const probes = [...FORBIDDEN, ...ALLOWED].map(([path, specifier], i) => {
      const file = path.replace(/probe\.ts$/, `probe${i}.ts`);
      return { file, specifier };
    });
    for (const { file, specifier } of probes) {
      await mkdir(dirname(join(root, file)), { recursive: true });
      await writeFile(
        join(root, file),
        `import { probe } from '${specifier}';\n\nexport const used = probe;\n`,
      );
    }
    const output = await run(BIOME, ['lint', '--max-diagnostics=500', ...probes.map((p) => p.file)], {
      cwd: root,
    }).then(
      (r) => r.stdout + r.stderr,
      (error: { stdout: string; stderr: string }) => error.stdout + error.stderr,
    );
    for (const line of output.split('\n')) {
      const match = /^(\S+probe\d+\.ts):\d+:\d+ lint\/style\/noRestrictedImports/.exec(line);
      if (match?.[1] !== undefined) hits.set(match[1], (hits.get(match[1]) ?? 0) + 1);
    }
  }, 60_000);
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const probeFile = (path: string, i: number) => path.replace(/probe\.ts$/, `probe${i}.ts`);

  it.each(FORBIDDEN.map(([path, specifier], i) => [path, specifier, i] as const))(
    '%s may not import %s',
    (path, _specifier, i) => {
      // Assess
      expect(hits.get(probeFile(path, i))).toBe(1);
    },
  );

  it.each(ALLOWED.map(([path, specifier], i) => [path, specifier, FORBIDDEN.length + i] as const))(
    '%s may import %s',
    (path, _specifier, i) => {
      // Assess
      expect(hits.get(probeFile(path, i))).toBeUndefined();
    },
  );
});
