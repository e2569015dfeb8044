/**
 * Captures everything written to stdout and stderr while a chaos run is active (Powertools log
 * lines, runtime warnings, stray console output), so the privacy check can read every log line.
 */

/** A started capture. */
export interface OutputCapture {
  /** Complete lines captured so far (a trailing partial line is flushed by {@link stop}). */
  readonly lines: string[];
  /** Runs `fn` with writes going straight to the real streams (progress lines, not service output). */
  bypass(fn: () => void): void;
  /** Restores the original streams and returns every captured line. */
  stop(): string[];
}

type Write = typeof process.stdout.write;

/**
 * Replaces `process.stdout.write` and `process.stderr.write` (Node's Console, and so Powertools'
 * Logger, looks them up on every call). With `passThrough`, captured output is still shown.
 */
export function captureOutput(options: { passThrough?: boolean } = {}): OutputCapture {
  const lines: string[] = [];
  const partial = { stdout: '', stderr: '' };
  const original = { stdout: process.stdout.write, stderr: process.stderr.write };
  let bypassing = false;

  const intercept = (name: 'stdout' | 'stderr'): Write => {
    const stream = process[name];
    const passThrough = original[name].bind(stream);
    return ((chunk: unknown, ...rest: unknown[]) => {
      if (bypassing) return (passThrough as (...args: unknown[]) => boolean)(chunk, ...rest);
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      const parts = (partial[name] + text).split('\n');
      partial[name] = parts.pop() ?? '';
      for (const line of parts) if (line !== '') lines.push(line);
      if (options.passThrough) return (passThrough as (...args: unknown[]) => boolean)(chunk, ...rest);
      // Honour the callback contract of Writable.write.
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as Write;
  };
  process.stdout.write = intercept('stdout');
  process.stderr.write = intercept('stderr');

  let stopped = false;
  return {
    lines,
    bypass(fn) {
      // Writes to stdout and stderr are synchronous for files, pipes and terminals: the flag covers them.
      bypassing = true;
      try {
        fn();
      } finally {
        bypassing = false;
      }
    },
    stop() {
      if (!stopped) {
        stopped = true;
        process.stdout.write = original.stdout;
        process.stderr.write = original.stderr;
        for (const name of ['stdout', 'stderr'] as const) {
          if (partial[name] !== '') lines.push(partial[name]);
          partial[name] = '';
        }
      }
      return lines;
    },
  };
}
