/**
 * In-process CPU sampling (V8 inspector) to explain a latency difference: runs a list of
 * operations under the profiler and totals the sampled time by package, project folder or
 * native function family. Comparing two variants' totals shows where the extra time goes.
 */
import { Session } from 'node:inspector/promises';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const CRYPTO = new Set(['Hmac', 'Hash', 'digest', 'update', 'final', 'initiv', 'RandomBytesJob', 'Cipheriv']);

/** The bucket one sample belongs to. */
function bucketOf(frame: ProfileNode['callFrame'], projectRoot: string): string {
  const { functionName: fn, url } = frame;
  if (fn === '(idle)') return '(idle: waiting for DynamoDB Local)';
  if (fn === '(garbage collector)' || fn === '(program)') return fn;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg)
    return pkg.startsWith('@smithy/') || pkg.startsWith('@aws-sdk/core')
      ? 'AWS SDK core (@smithy, @aws-sdk/core)'
      : pkg;
  if (url.includes(projectRoot))
    return `project ${url.slice(url.indexOf(projectRoot) + projectRoot.length).split('/')[0]}/`;
  if (url.startsWith('node:')) return 'node internals (http, streams, timers)';
  if (fn === 'writev' || fn === 'writeBuffer' || fn === 'writeUtf8String') return 'socket writes (native)';
  if (CRYPTO.has(fn)) return 'node:crypto (native)';
  return 'other native';
}

/** Runs `ops` sequentially under the sampling profiler; returns microseconds per op by bucket. */
export async function profileOps(
  ops: ReadonlyArray<() => Promise<void>>,
  projectRoot: string,
): Promise<Map<string, number>> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    for (const op of ops) await op();
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const totals = new Map<string, number>();
    profile.samples.forEach((id, i) => {
      const node = nodes.get(id);
      if (!node) return;
      const bucket = bucketOf(node.callFrame, projectRoot);
      totals.set(bucket, (totals.get(bucket) ?? 0) + (profile.timeDeltas[i] ?? 0));
    });
    for (const [k, v] of totals) totals.set(k, v / ops.length);
    return totals;
  } finally {
    await session.post('Profiler.disable').catch(() => undefined);
    session.disconnect();
  }
}
