/**
 * Section 3: cold start of each Lambda bundle. Each entry point is bundled the way the CDK stack
 * bundles it (infra/constructs/service-function.ts: esbuild, ESM, node24, minified, AWS SDK
 * bundled, createRequire banner, external source map without sources), then imported in fresh
 * `node` processes with the environment the function gets, round-robin across bundles.
 *
 * Two import modes: as Lambda runs it (NODE_OPTIONS=--enable-source-maps, with the .map next to
 * the bundle) and without source maps, because the stack sets that flag and it costs start time.
 * The endpoints point at a local TCP listener that counts connections: importing must not call out.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { readSetting, SETTINGS, settingsEnv } from '../shared/settings.js';
import { fmt, median, percentile, rotate } from './stats.js';
import { progress, type SectionResult, type TargetResult } from './support.js';

/** Options of {@link runColdStart}. */
export interface ColdStartOptions {
  readonly quick: boolean;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRIES = ['api', 'forwarder', 'sender', 'reconciler'] as const;
type Entry = (typeof ENTRIES)[number];
const MODES = ['lambda (source maps on)', 'no source maps'] as const;
type Mode = (typeof MODES)[number];

const BYTES_TARGET = 250 * 1024;
const IMPORT_MS_TARGET = 150;

/** The banner and options the CDK construct passes to esbuild. */
const BANNER = "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);";

interface Bundle {
  readonly entry: Entry;
  readonly file: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly mapBytes: number;
  readonly metafile: Metafile;
}

async function bundle(entry: Entry, outDir: string): Promise<Bundle> {
  const outfile = join(outDir, entry, 'index.mjs');
  const result = await build({
    entryPoints: [join(root, 'functions', `${entry}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    minify: true,
    sourcemap: 'external',
    sourcesContent: false,
    mainFields: ['module', 'main'],
    banner: { js: BANNER },
    metafile: true,
    logLevel: 'silent',
  });
  const code = await readFile(outfile);
  const map = await stat(`${outfile}.map`);
  return {
    entry,
    file: outfile,
    bytes: code.byteLength,
    gzipBytes: gzipSync(code, { level: 9 }).byteLength,
    mapBytes: map.size,
    metafile: result.metafile,
  };
}

/** The bundle's bytes by package (node_modules/<pkg>) or project folder, largest first. */
function composition(b: Bundle): Array<{ source: string; bytes: number }> {
  const output = Object.values(b.metafile.outputs).find((o) => o.entryPoint !== undefined);
  const bySource = new Map<string, number>();
  for (const [path, info] of Object.entries(output?.inputs ?? {})) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
    const source = pkg ?? `(project) ${path.split('/').slice(0, 2).join('/')}`;
    bySource.set(source, (bySource.get(source) ?? 0) + info.bytesInOutput);
  }
  return [...bySource.entries()]
    .map(([source, bytes]) => ({ source, bytes }))
    .sort((x, y) => y.bytes - x.bytes);
}

/** Groups package names into families, so the table shows what to cut (e.g. all of `@aws-sdk/client-kms`'s stack). */
function family(source: string): string {
  if (/^@aws-sdk\/client-/.test(source)) return source;
  if (/^@(aws-sdk|smithy|aws-crypto)\//.test(source) || source === 'fast-xml-parser' || source === 'strnum') {
    return 'AWS SDK core (@aws-sdk/*, @smithy/*, XML parser)';
  }
  return source;
}

/** Counts TCP connections made to a loopback port, standing in for every endpoint the function knows. */
async function connectionCounter(): Promise<{ port: number; count(): number; close(): Promise<void> }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    count: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Time to `await import()` the bundle in a fresh node process (ms), and the process's time to that point. */
function importOnce(
  file: string,
  mode: Mode,
  env: NodeJS.ProcessEnv,
): Promise<{ importMs: number; sinceStartMs: number }> {
  const script =
    'const t0=performance.now();await import(process.argv[1]);const t1=performance.now();' +
    'process.stdout.write(JSON.stringify({importMs:t1-t0,sinceStartMs:t1}));';
  return new Promise((resolve, reject) => {
    // The bundle's URL is the script's argument (process.argv[1] under -e): the environment holds only settings.
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(file).href], {
      env: {
        ...env,
        // As the stack sets it for every function, or nothing.
        ...settingsEnv({ nodeOptions: mode === 'lambda (source maps on)' ? SETTINGS.nodeOptions.aws : '' }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`import of ${file} exited ${code}: ${err.slice(0, 500)}`));
      try {
        resolve(JSON.parse(out) as { importMs: number; sinceStartMs: number });
      } catch {
        reject(
          new Error(`unexpected output from import of ${file}: ${out.slice(0, 200)} ${err.slice(0, 200)}`),
        );
      }
    });
  });
}

/** Runs section 3. */
export async function runColdStart(options: ColdStartOptions): Promise<SectionResult> {
  const runs = options.quick ? 3 : 10;
  const outDir = await mkdtemp(join(tmpdir(), 'reset-notifier-bench-'));
  const counter = await connectionCounter();
  try {
    progress('cold-start: bundling with esbuild');
    const bundles: Bundle[] = [];
    for (const entry of ENTRIES) bundles.push(await bundle(entry, outDir));

    const unused = `http://127.0.0.1:${counter.port}`;
    const env: NodeJS.ProcessEnv = {
      ...settingsEnv({
        searchPath: readSetting(process.env, SETTINGS.searchPath, ''),
        sdkNodeVersionWarningOff: SETTINGS.sdkNodeVersionWarningOff.local,
        awsRegion: 'us-east-1',
        cipher: 'local',
        localDataKey: randomBytes(32).toString('hex'),
        fingerprintKey: randomBytes(32).toString('hex'),
        tableName: 'reset-notifier-bench',
        dispatchQueueUrl: `${unused}/000000000000/reset-notifier-dispatch`,
        dynamodbEndpoint: unused,
        sqsEndpoint: unused,
        provider: 'simulator',
        twilioBaseUrl: unused,
      }),
      // Logger output would land in the pipe: keep the process quiet.
      ...settingsEnv({ powertoolsLogLevel: 'SILENT' }),
    };

    progress(`cold-start: ${runs} fresh imports per bundle and mode, round-robin`);
    const samples = new Map<string, { importMs: number[]; sinceStartMs: number[] }>();
    const pairs = ENTRIES.flatMap((entry) => MODES.map((mode) => ({ entry, mode })));
    for (let r = 0; r < runs; r++) {
      for (const { entry, mode } of rotate(pairs, r)) {
        const b = bundles.find((x) => x.entry === entry) as Bundle;
        const s = await importOnce(b.file, mode, env);
        const key = `${entry}|${mode}`;
        const list = samples.get(key) ?? { importMs: [], sinceStartMs: [] };
        list.importMs.push(s.importMs);
        list.sinceStartMs.push(s.sinceStartMs);
        samples.set(key, list);
      }
    }
    const connections = counter.count();

    const stats = (entry: Entry, mode: Mode) => {
      const s = samples.get(`${entry}|${mode}`) ?? { importMs: [], sinceStartMs: [] };
      return {
        importP50: median(s.importMs),
        importMax: percentile(s.importMs, 100),
        sinceStartP50: median(s.sinceStartMs),
        samples: s.importMs,
      };
    };
    const sizeRows = bundles.map((b) => [
      b.entry,
      fmt(b.bytes / 1024, 1),
      fmt(b.gzipBytes / 1024, 1),
      fmt(b.mapBytes / 1024, 1),
      fmt(stats(b.entry, MODES[0]).importP50, 1),
      fmt(stats(b.entry, MODES[0]).importMax, 1),
      fmt(stats(b.entry, MODES[1]).importP50, 1),
      fmt(stats(b.entry, MODES[0]).sinceStartP50, 1),
    ]);

    // What dominates: the largest sources of each bundle, grouped by package family.
    const compositionRows = bundles.flatMap((b) => {
      const byFamily = new Map<string, number>();
      for (const { source, bytes } of composition(b)) {
        const f = family(source);
        byFamily.set(f, (byFamily.get(f) ?? 0) + bytes);
      }
      return [...byFamily.entries()]
        .sort((x, y) => y[1] - x[1])
        .slice(0, 8)
        .map(([source, bytes]) => [b.entry, source, fmt(bytes / 1024, 1), fmt((100 * bytes) / b.bytes, 1)]);
    });

    const targets: TargetResult[] = bundles.flatMap((b) => {
      const importP50 = stats(b.entry, MODES[0]).importP50;
      return [
        {
          name: `bundle size, ${b.entry}`,
          target: '<= 250 KB',
          measured: `${fmt(b.bytes / 1024, 1)} KB`,
          met: b.bytes <= BYTES_TARGET,
        },
        {
          name: `import time p50 (as Lambda runs it), ${b.entry}`,
          target: `<= ${IMPORT_MS_TARGET} ms`,
          measured: `${fmt(importP50, 1)} ms`,
          met: importP50 <= IMPORT_MS_TARGET,
        },
      ];
    });
    targets.push({
      name: 'network connections while importing',
      target: '0',
      measured: String(connections),
      met: connections === 0,
    });

    return {
      title: '3. Cold start per Lambda bundle',
      tables: [
        {
          caption: `Bundle size (KB = 1024 bytes) and time to import in a fresh node process (ms, median of ${runs})`,
          headers: [
            'function',
            'KB',
            'gzip KB',
            '.map KB',
            'import p50 (source maps on)',
            'import max',
            'import p50 (no maps)',
            'process start to imported',
          ],
          rows: sizeRows,
        },
        {
          caption: 'What the bytes are (esbuild metafile, bytes in output, top 8 per bundle)',
          headers: ['function', 'source', 'KB', '% of bundle'],
          rows: compositionRows,
        },
      ],
      notes: [
        `Bundled as infra/constructs/service-function.ts does (esbuild, format esm, target node24, minify, mainFields module,main, AWS SDK bundled, createRequire banner, external source map without sources). Lambda sets ${SETTINGS.nodeOptions.env}=${SETTINGS.nodeOptions.aws}; the first import column does too.`,
        `Imports run on this machine's Node ${process.version} (Lambda runs Node 24 on arm64), with the module-scope work the entry points do (config, keys, SDK clients). Endpoints point at a loopback listener that counted ${connections} connections.`,
      ],
      targets,
      data: {
        runs,
        bundles: bundles.map((b) => ({
          entry: b.entry,
          bytes: b.bytes,
          gzipBytes: b.gzipBytes,
          mapBytes: b.mapBytes,
          composition: composition(b).slice(0, 25),
          imports: Object.fromEntries(MODES.map((m) => [m, stats(b.entry, m)])),
        })),
        connections,
      },
    };
  } finally {
    await counter.close();
    await rm(outDir, { recursive: true, force: true });
  }
}
