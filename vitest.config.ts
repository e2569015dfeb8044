import { defineConfig } from 'vitest/config';

/** The heavy soaks: each runs alone, after the other integration files (the `soak` project). */
const SOAKS = ['test/integration/load.test.ts', 'test/integration/chaos-short.test.ts'];

export default defineConfig({
  test: {
    // The SDK warns that Node 20 support ends in 2027; the Lambda runtime is Node 24.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // `npm test` runs the unit project with --coverage: a floor on the product code (shared/), a
    // little under what it measured on 2 December 2026 (statements 80.4 %, branches 74.3 %,
    // functions 79.1 %, lines 81.9 %). The integration project runs after it without coverage, so
    // the soaks measure the uninstrumented stack. Targeted runs skip coverage.
    coverage: {
      provider: 'v8',
      include: ['shared/**/*.ts'],
      reporter: ['text-summary'],
      thresholds: { statements: 78, branches: 72, functions: 77, lines: 80 },
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/infra/**/*.test.ts'],
          testTimeout: 60_000,
          // Unit tests first, then the integration suite with its emulators.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          exclude: SOAKS,
          globalSetup: ['test/support/global-setup.ts'],
          // Hang guards, not budgets (docs/testing.md#hang-guards): a wait returns when its state holds.
          testTimeout: 300_000,
          hookTimeout: 300_000,
          // Every file gets its own table and queue; two workers suit this 2-core machine.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          // The soaks measure the service, so each runs alone after the rest: beside another file on
          // the one DynamoDB Local a 2-core machine holds, the load test's 20,000 requests made the
          // soak's claim writes take longer than a claim may (docs/testing.md#soaks-run-alone).
          name: 'soak',
          include: SOAKS,
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
