import { describe, expect, it } from 'vitest';
import { PROVIDER_MODULES } from '../../../shared/providers/registry.js';
import { SETTINGS } from '../../../shared/settings.js';

describe('provider registry: one module per provider, one shape', () => {
  it('lists each module under its own kind', () => {
    // Prepare
    const entries = Object.entries(PROVIDER_MODULES);

    // Act
    const mismatched = entries.filter(([kind, module]) => module.kind !== kind);

    // Assess
    expect(entries.map(([kind]) => kind).sort()).toEqual(['eum', 'simulator', 'sns', 'twilio']);
    expect(mismatched).toEqual([]);
  });

  it("names only entries of the settings table as a module's settings", () => {
    // Prepare
    const names = Object.values(PROVIDER_MODULES).flatMap((module) => module.settings);

    // Act
    const unknown = names.filter((name) => !(name in SETTINGS));

    // Assess
    expect(names.length).toBeGreaterThan(0);
    expect(unknown).toEqual([]);
  });
});
