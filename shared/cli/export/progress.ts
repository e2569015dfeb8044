import type { TextOut } from '../output.js';

/** Reports how far a long operation got. */
export interface Progress {
  update(message: string): void;
  done(message: string): void;
}

/** Reports nothing (`--quiet`). */
export const silentProgress: Progress = { update: () => undefined, done: () => undefined };

/**
 * Progress on stderr: on a terminal one line rewritten in place as often as every `intervalMs`;
 * elsewhere (CI logs, tests) a plain line at most every `intervalMs`, so logs stay short.
 */
export function streamProgress(
  out: TextOut,
  options: { readonly intervalMs?: number; readonly now?: () => number } = {},
): Progress {
  const interval = options.intervalMs ?? (out.isTTY ? 100 : 2000);
  const now = options.now ?? Date.now;
  let last = Number.NEGATIVE_INFINITY;
  return {
    update(message) {
      const t = now();
      if (t - last < interval) return;
      last = t;
      out.write(out.isTTY ? `\r\x1b[2K${message}` : `${message}\n`);
    },
    done(message) {
      out.write(out.isTTY ? `\r\x1b[2K${message}\n` : `${message}\n`);
    },
  };
}
