import { type LostAnswer, MemoryNotificationStore } from '../../support/memory-store.js';
import { describeLostAnswerContract, describeStoreContract } from '../../support/store-contract.js';

const store = new MemoryNotificationStore();
describeStoreContract('in-memory (model-based tests)', () => store);

let armed: LostAnswer | undefined;
const lossy = new MemoryNotificationStore({
  afterWrite: () => {
    const lost = armed;
    armed = undefined;
    return lost;
  },
});
describeLostAnswerContract('in-memory (model-based tests)', {
  store: () => lossy,
  loseNextAnswer: (mode) => {
    armed = mode;
  },
});
