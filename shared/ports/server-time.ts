import type { ServerTimeSample } from '../domain/clock-skew.js';

/**
 * The authoritative time a store's answers carry (docs/design.md#clock-skew): the best recent
 * sample (the tightest of the last 30 s, see `preferSample`), or undefined when no answer carried
 * one yet. Read before each provider attempt.
 */
export interface ServerTimeSource {
  latestServerTime(): ServerTimeSample | undefined;
}
