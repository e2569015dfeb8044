/**
 * `npm run chaos`: the chaos soak of the whole local stack, then the model-based tests with more
 * runs. Prints one summary line per figure and exits non-zero when any invariant fails.
 * See docs/chaos.md.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { SETTINGS, settingsEnv } from '../shared/settings.js';
import { ALARM_DRILL_MIX, DEFAULT_ALARM_DRILL } from './chaos/alarms.js';
import { formatSummary, parseChaosArgs, USAGE } from './chaos/cli.js';
import { runChaos } from './chaos/driver.js';

process.env[SETTINGS.sdkNodeVersionWarningOff.env] ??= SETTINGS.sdkNodeVersionWarningOff.local;

async function main(): Promise<number> {
  let options: ReturnType<typeof parseChaosArgs>;
  try {
    options = parseChaosArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const result = await runChaos({
    events: options.events,
    seed: options.seed,
    concurrency: options.concurrency,
    settleTimeoutMs: options.settleTimeoutMs,
    maxPending: options.maxPending,
    ...(options.durationMs === undefined ? {} : { durationMs: options.durationMs }),
    passThroughOutput: options.verbose,
    provider: options.provider,
    tolerateUnknownFaultModes: options.tolerateUnknownFaults,
    ...(options.alarmDrill ? { alarmDrill: DEFAULT_ALARM_DRILL, mix: ALARM_DRILL_MIX } : {}),
    progress: (line) => console.log(line),
  });
  for (const line of formatSummary(result, options)) console.log(line);
  if (options.jsonPath) await writeFile(options.jsonPath, `${JSON.stringify(result, null, 2)}\n`);
  let passed = result.passed;
  if (options.modelRuns > 0) {
    // The same model-based tests as `npm test`, with more runs per property.
    console.log(`model: running test/unit/model with ${SETTINGS.modelRuns.env}=${options.modelRuns}`);
    const model = spawnSync('npx', ['vitest', 'run', '--project', 'unit', 'test/unit/model'], {
      stdio: 'inherit',
      env: { ...process.env, ...settingsEnv({ modelRuns: options.modelRuns }) },
    });
    console.log(`model: ${model.status === 0 ? 'PASS' : 'FAIL'} (${options.modelRuns} runs per property)`);
    passed &&= model.status === 0;
  }
  return passed ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error('chaos: the run could not complete:', error);
    process.exitCode = 2;
  },
);
