import { afterEach, describe, expect, it } from 'vitest';
import { isPortFree } from '../../local/ports.js';
import { eventually } from '../support/eventually.js';
import { type NpmStartStack, startNpmStack } from '../support/npm-start.js';

describe('npm start lifecycle', () => {
  let stack: NpmStartStack | undefined;
  afterEach(async () => {
    await stack?.kill();
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the npm process alone stops every child and frees every port',
    async (signal) => {
      // Prepare: the signal will reach npm only, not a process group, as `kill <pid>` would
      stack = await startNpmStack();

      // Act
      stack.child.kill(signal);
      await stack.exited();

      // Assess: npm exits only once start.ts stopped its children; a port may take a moment to close
      for (const port of Object.values(stack.ports)) {
        await eventually(async () => expect(await isPortFree(port)).toBe(true), { intervalMs: 100 });
      }
      expect(stack.output()).toContain(`Operator console    http://127.0.0.1:${stack.ports.PORT}/console`);
    },
    // A safety net, not a budget: the waits above are on events (the ready line, the exit), and a
    // loaded machine may take minutes to start the stack.
    600_000,
  );
});
