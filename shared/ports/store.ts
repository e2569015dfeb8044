import type { CommandStore } from './command-store.js';
import type { DueIndex } from './due-index.js';

export type { DueEntry } from '../domain/due-lane.js';
export type {
  AdmitResult,
  EventClaim,
  PoisonMark,
  StoredCommand,
  TransitionWriteResult,
} from './command-store.js';
export type { DuePage, DueShardPage, ReconcileCursor } from './due-index.js';

/**
 * The whole store, as adapters implement it and the composition root hands it out: its command
 * role and its due-index role. A use case asks only for the role it uses.
 */
export interface NotificationStore extends CommandStore, DueIndex {}
