import { MemoryNotificationStore } from '../../support/memory-store.js';
import { describeStoreContract } from '../../support/store-contract.js';

const store = new MemoryNotificationStore();
describeStoreContract('in-memory (model-based tests)', () => store);
