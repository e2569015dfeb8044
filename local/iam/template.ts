import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { SETTINGS } from '../../shared/settings.js';
import type { CfnTemplate } from './resolve.js';

const run = promisify(execFile);

/** The functions of the local runtime, by the name the local stack gives them. */
export type LocalFunction =
  | 'api'
  | 'receipts'
  | 'eumReceipts'
  | 'forwarder'
  | 'sender'
  | 'reconciler'
  | 'reconcileWorker';

/** The provider kinds a template is synthesized for (the local stack's `PROVIDER`). */
export const TEMPLATE_PROVIDERS = ['simulator', 'twilio', 'sns', 'eum'] as const;
export type TemplateProvider = (typeof TEMPLATE_PROVIDERS)[number];

/** A synthesized template and the logical id of each function the local runtime runs. */
export interface LocalTemplate {
  readonly template: CfnTemplate;
  /** Logical ids of the template's functions; a function the variant lacks is absent. */
  readonly functions: Partial<Record<LocalFunction, string>>;
}

type LocalTemplates = Record<TemplateProvider, LocalTemplate>;

/** The package root (this file is `local/iam/template.ts`). */
const ROOT = join(import.meta.dirname, '..', '..');
/** Everything synthesis reads: the infra code, the shared code it imports, and the CDK settings. */
const SOURCES = ['infra', 'shared', 'scripts/local-template.ts', 'cdk.json', 'package-lock.json'];
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'reset-notifier-iam');

/**
 * The stack's template for `provider` (or for a provider list in failover order, `PROVIDERS`:
 * see {@link listTemplate}), synthesized offline (no bundling, no cdk-nag) the way
 * `cdk synth` would, by `scripts/local-template.ts` in a child process (local/ never loads the
 * CDK). All providers' templates come from one synthesis, cached on disk by the content of every
 * file synthesis reads: with unchanged code a stack start reads the cache (milliseconds); after a
 * change the first start synthesizes (tens of seconds on a busy 2-core machine; the integration
 * suite's global setup does it before any test).
 */
export async function localTemplate(
  provider: TemplateProvider | readonly TemplateProvider[],
): Promise<LocalTemplate> {
  const listed = typeof provider === 'string' ? [provider] : provider;
  const [primary] = listed;
  if (primary === undefined) throw new Error('localTemplate: name at least one provider');
  if (listed.length === 1) return (await localTemplates())[primary];
  return listTemplate(listed);
}

/**
 * The template of a provider list (`PROVIDERS=simulator,eum`: every listed provider's grants and
 * resources), synthesized on first use by `scripts/local-template.ts --providers ...` and cached
 * beside the single-provider templates, by the same content hash and the list.
 */
async function listTemplate(providers: readonly TemplateProvider[]): Promise<LocalTemplate> {
  const hash = await sourceHash();
  const list = providers.join(',');
  const key = `${hash}:${list}`;
  let pending = pendingLists.get(key);
  if (pending === undefined) {
    pending = cachedOrSynthesized<LocalTemplate>(join(CACHE_DIR, `${hash}-${providers.join('+')}.json`), () =>
      synthesize<LocalTemplate>(['--providers', list]),
    );
    pendingLists.set(key, pending);
    pending.catch(() => pendingLists.delete(key));
  }
  return pending;
}

const pendingLists = new Map<string, Promise<LocalTemplate>>();

/**
 * Synthesizes (or finds cached) every provider's template now: a test suite calls it once in its
 * global setup so no stack start waits for synthesis under a hook timeout.
 */
export async function prepareLocalTemplates(): Promise<void> {
  await localTemplates();
}

let pending: { hash: string; templates: Promise<LocalTemplates> } | undefined;

async function localTemplates(): Promise<LocalTemplates> {
  const hash = await sourceHash();
  if (pending?.hash !== hash) {
    pending = {
      hash,
      templates: cachedOrSynthesized<LocalTemplates>(join(CACHE_DIR, `${hash}.json`), () =>
        synthesize<LocalTemplates>([]),
      ),
    };
  }
  const current = pending;
  return current.templates.catch((error: unknown) => {
    if (pending === current) pending = undefined;
    throw error;
  });
}

async function cachedOrSynthesized<T>(file: string, synthesizeNow: () => Promise<T>): Promise<T> {
  const cached = await readCached<T>(file);
  if (cached) return cached;
  await mkdir(CACHE_DIR, { recursive: true });
  // One process synthesizes (creating a directory is atomic); the others wait for its file.
  const lock = `${file}.lock`;
  for (;;) {
    if (
      await mkdir(lock).then(
        () => true,
        () => false,
      )
    )
      break;
    if (!(await lockHolderAlive(lock))) {
      await rm(lock, { recursive: true, force: true });
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
    const ready = await readCached<T>(file);
    if (ready) return ready;
  }
  try {
    await writeFile(join(lock, 'pid'), String(process.pid));
    const synthesized = await synthesizeNow();
    // Written aside then renamed: readers never see half a file.
    const temporary = `${file}.${process.pid}`;
    await writeFile(temporary, JSON.stringify(synthesized));
    await rename(temporary, file);
    return synthesized;
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** Whether the process that took `lock` still runs (a lock without a pid yet is being taken). */
async function lockHolderAlive(lock: string): Promise<boolean> {
  const pid = Number(await readFile(join(lock, 'pid'), 'utf8').catch(() => ''));
  if (!pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function readCached<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const files: string[] = [];
  const walk = async (path: string): Promise<void> => {
    const entries = await readdir(path, { withFileTypes: true }).catch(() => undefined);
    if (entries === undefined) {
      files.push(path);
      return;
    }
    for (const entry of entries) await walk(join(path, entry.name));
  };
  for (const source of SOURCES) await walk(join(ROOT, source));
  for (const file of files.sort()) {
    hash.update(relative(ROOT, file)).update('\0');
    hash.update(await readFile(file).catch(() => Buffer.alloc(0))).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** Runs `scripts/local-template.ts` with `args` and parses what it prints. */
async function synthesize<T>(args: readonly string[]): Promise<T> {
  const script = join(ROOT, 'scripts', 'local-template.ts');
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
    // Not the caller's Node options (a test runner's loaders or inspector).
    env: { ...process.env, [SETTINGS.nodeOptions.env]: '' },
  });
  return JSON.parse(stdout) as T;
}
