import { CircuitTable, MemoryProviderHealth } from '../../support/memory-provider-health.js';
import {
  CONTRACT_CIRCUIT_SETTINGS,
  describeProviderHealthContract,
} from '../../support/provider-health-contract.js';

const table = new CircuitTable();
describeProviderHealthContract('in-memory', () => ({
  container: (role) => {
    const health = new MemoryProviderHealth(table, CONTRACT_CIRCUIT_SETTINGS, role);
    return { health, changes: () => health.changes.length };
  },
  cacheMs: 0,
}));
