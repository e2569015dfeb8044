import { describe, expect, it } from 'vitest';
import { BufferOut } from '../../../shared/cli/output.js';
import { renderCircuits, runStatus } from '../../../shared/cli/status.js';
import { circuitSettingsOf } from '../../../shared/composition/provider-health.js';
import { ManualClock } from '../../support/manual-clock.js';
import { CircuitTable, MemoryProviderHealth } from '../../support/memory-provider-health.js';
import { MemoryNotificationStore } from '../../support/memory-store.js';

const SETTINGS = circuitSettingsOf({});

/** `status` over an empty store, with twilio's circuit opened at the clock's start. */
async function aStatus() {
  const clock = new ManualClock();
  const table = new CircuitTable();
  const sender = new MemoryProviderHealth(table, SETTINGS, 'sender');
  for (let i = 0; i < 10; i += 1) await sender.record('twilio', 'error', clock.now());
  const out = new BufferOut();
  const deps = {
    store: new MemoryNotificationStore(),
    out,
    err: new BufferOut(),
    clock,
    circuits: { health: new MemoryProviderHealth(table, SETTINGS, 'observer'), providers: ['twilio', 'eum'] },
  };
  return { clock, sender, out, deps };
}

describe('reset-notifier status: the circuits line', () => {
  it("lists each provider's circuit in order, with since when it is not closed", async () => {
    // Prepare
    const { clock, out, deps } = await aStatus();
    const opened = clock.now();
    clock.advance(4_000);
    // Act
    const code = await runStatus(deps, { key: 'no-such-key' });
    // Assess
    expect(code).toBe(1);
    expect(out.text()).toBe(
      `circuits  twilio open since ${new Date(opened).toISOString()} (4.000s ago), eum closed\n`,
    );
  });

  it('shows a circuit whose probe is due as half_open, and never takes the probe itself', async () => {
    // Prepare
    const { clock, sender, out, deps } = await aStatus();
    clock.advance(SETTINGS.probePeriodMs);
    // Act
    await runStatus(deps, { key: 'no-such-key' });
    const probe = await sender.view(['twilio'], clock.now());
    // Assess
    expect(out.text()).toMatch(/^circuits {2}twilio half_open since .*, eum closed$/m);
    expect(probe[0]?.state).toBe('half_open');
  });

  it('leaves the line out of --json', async () => {
    // Prepare
    const { out, deps } = await aStatus();
    // Act
    await runStatus(deps, { key: 'no-such-key', json: true });
    // Assess
    expect(out.text()).toBe('null\n');
  });

  it('renders closed circuits without a time', () => {
    expect(renderCircuits([{ provider: 'simulator', state: 'closed' }], 0)).toBe(
      'circuits  simulator closed',
    );
  });
});
