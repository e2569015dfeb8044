/**
 * `npm run bench [-- --only admission,budgets,capacity,cold-start,reconciler,e2e,drain,brownout] [-- --quick]`
 *
 * Runs the benchmark sections (issue 6), prints one table per section and a target summary, and
 * writes the figures to `bench/results/<timestamp>.json` and `bench/results/latest.json` (plus a
 * Markdown rendering, `latest.md`, for docs/performance.md). Progress goes to stderr.
 *
 * A benchmark is a script that prints figures, not a test: it exits 0 when a target is missed,
 * and non-zero only when something broke.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SETTINGS } from '../shared/settings.js';
import { renderMarkdownTable, renderTable } from './stats.js';
import { figureLines, load1, machineInfo, progress, type SectionResult } from './support.js';

const SECTIONS = [
  'admission',
  'budgets',
  'capacity',
  'cold-start',
  'reconciler',
  'e2e',
  'drain',
  'brownout',
] as const;
type SectionName = (typeof SECTIONS)[number];

const resultsDir = join(dirname(fileURLToPath(import.meta.url)), 'results');

function parseOptions() {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : [...SECTIONS];
  for (const name of only) {
    if (!(SECTIONS as readonly string[]).includes(name)) {
      throw new Error(`unknown section "${name}"; sections: ${SECTIONS.join(', ')}`);
    }
  }
  return { only: only as SectionName[], quick: values.quick ?? false };
}

function renderSection(section: SectionResult, markdown: boolean): string {
  const out: string[] = [markdown ? `### ${section.title}` : `== ${section.title} ==`];
  for (const table of section.tables) {
    if (table.caption) out.push(markdown ? `\n${table.caption}:\n` : `\n${table.caption}`);
    out.push(
      markdown ? renderMarkdownTable(table.headers, table.rows) : renderTable(table.headers, table.rows),
    );
  }
  if (section.notes.length) {
    out.push('');
    for (const note of section.notes) out.push(markdown ? `- ${note}` : `* ${note}`);
  }
  return out.join('\n');
}

function targetTable(sections: readonly SectionResult[]) {
  const rows = sections.flatMap((s) =>
    s.targets.map((t) => [t.name, t.target, t.measured, t.met ? 'met' : 'MISSED']),
  );
  return { headers: ['target', 'wanted', 'measured', 'result'], rows };
}

async function runSection(name: SectionName, endpoint: string, quick: boolean): Promise<SectionResult> {
  switch (name) {
    case 'admission':
      return (await import('./admission.js')).runAdmission({ endpoint, quick });
    case 'budgets':
      return (await import('./admission.js')).runBudgetAdmission({ endpoint, quick });
    case 'capacity':
      return (await import('./capacity.js')).runCapacity({ endpoint, quick });
    case 'cold-start':
      return (await import('./cold-start.js')).runColdStart({ quick });
    case 'reconciler':
      return (await import('./reconciler-scaling.js')).runReconcilerScaling({ endpoint, quick });
    case 'e2e':
      return (await import('./e2e.js')).runE2e({ endpoint, quick });
    case 'drain':
      return (await import('./drain.js')).runDrain({ endpoint, quick });
    case 'brownout':
      return (await import('./brownout.js')).runBrownout({ endpoint, quick });
  }
}

async function main(): Promise<void> {
  // The SDK warns once per client that Node 20 support ends in 2027; Lambda runs Node 24.
  process.env[SETTINGS.sdkNodeVersionWarningOff.env] = SETTINGS.sdkNodeVersionWarningOff.local;
  const options = parseOptions();
  const startedAt = new Date();
  const machine = machineInfo();
  progress(`sections: ${options.only.join(', ')}${options.quick ? ' (quick)' : ''}`);

  const { startDynamoDbLocal } = await import('../local/dynamodb-local.js');
  const sections: SectionResult[] = [];
  const failures: Array<{ section: SectionName; error: string }> = [];
  const loads: Record<string, { before: number; after: number }> = {};
  // One fresh DynamoDB Local per section: DynamoDB Local keeps every table in one SQLite
  // database, so a section's leftovers (100,000 items, stream records) would slow the next one.
  let ddb: Awaited<ReturnType<typeof startDynamoDbLocal>> | undefined;
  // Ctrl-C must not leave a Java process behind.
  const onSignal = (signal: NodeJS.Signals) => {
    progress(`${signal}: stopping DynamoDB Local`);
    void (ddb?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (const name of options.only) {
      const before = load1();
      progress(`section ${name}: start`);
      try {
        ddb = name === 'cold-start' ? undefined : await startDynamoDbLocal();
        const result = await runSection(name, ddb?.endpoint ?? '', options.quick);
        sections.push(result);
        process.stdout.write(`\n${renderSection(result, false)}\n`);
        for (const line of figureLines(result)) process.stdout.write(`${line}\n`);
        progress(`section ${name}: done`);
      } catch (error) {
        // A broken section is reported, and the others still run and are written.
        failures.push({ section: name, error: (error as Error).stack ?? String(error) });
        progress(`section ${name} FAILED: ${(error as Error).message}`);
      } finally {
        await ddb?.stop();
        ddb = undefined;
        loads[name] = { before, after: load1() };
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  const summary = targetTable(sections);
  process.stdout.write(`\n== Targets ==\n${renderTable(summary.headers, summary.rows)}\n`);
  const machineLine = `${machine.cpuModel}, ${machine.nproc} vCPU, ${machine.memTotalGiB} GiB RAM, Node ${machine.node}, ${machine.java}, ${machine.platform}`;
  process.stdout.write(`\nMachine: ${machineLine}; 1-min load per section: ${JSON.stringify(loads)}\n`);

  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    machine,
    loadPerSection: loads,
    options,
    figures: Object.assign({}, ...sections.map((s) => s.figures ?? {})) as Record<string, number>,
    sections: sections.map((s) => ({ ...s })),
    failures,
  };
  await mkdir(resultsDir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  await writeFile(join(resultsDir, `${stamp}.json`), json);
  await writeFile(join(resultsDir, 'latest.json'), json);
  const markdown = [
    `Run ${report.startedAt} with \`${report.command}\` on ${machineLine}.`,
    `1-minute load average before/after each section: ${Object.entries(loads)
      .map(([k, v]) => `${k} ${v.before}/${v.after}`)
      .join(', ')}.`,
    '',
    sections.map((s) => renderSection(s, true)).join('\n\n'),
    '',
    '### Targets',
    '',
    renderMarkdownTable(summary.headers, summary.rows),
    '',
  ].join('\n');
  await writeFile(join(resultsDir, 'latest.md'), markdown);
  process.stdout.write(`\nWrote bench/results/${stamp}.json, latest.json and latest.md\n`);
  if (failures.length) {
    process.stderr.write(`failed sections: ${failures.map((f) => f.section).join(', ')}\n`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
