import type { ServerTimeSample } from '../domain/clock-skew.js';

/**
 * The authoritative time a store's answers carry (docs/design.md#clock-skew): the latest sample,
 * or undefined when no answer carried one yet. Read before each provider attempt.
 */
export interface ServerTimeSource {
  latestServerTime(): ServerTimeSample | undefined;
}
