/**
 * The time of DynamoDB's servers, read from the answers the store already gets
 * (docs/design.md#clock-skew). Every DynamoDB response carries an HTTP `Date` header (the
 * low-level API's response format; RFC 9110 section 6.6.1: an origin server with a clock sends
 * it, whole seconds). A middleware at the innermost `deserialize` position wraps each try of each
 * request (inside the SDK's retries, outside the HTTP handler): our clock just before the request
 * leaves and when the raw answer comes back, and the answer's `Date`. Error answers count too (a
 * failed condition is an answer of the server), a try without an answer records nothing.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../domain/clock.js';
import { preferSample, type ServerTimeSample } from '../../domain/clock-skew.js';
import type { ServerTimeSource } from '../../ports/server-time.js';

/** The middleware's name on the client's stack (one per client: a second install replaces it). */
const MIDDLEWARE_NAME = 'resetNotifierServerTime';

/** Keeps the best recent {@link ServerTimeSample} of the answers of one DynamoDB client ({@link preferSample}). */
export class DynamoServerTime implements ServerTimeSource {
  private latest: ServerTimeSample | undefined;

  constructor(private readonly clock: Clock) {}

  latestServerTime(): ServerTimeSample | undefined {
    return this.latest;
  }

  /** Adds the middleware that samples every answer of `client`. */
  install(client: DynamoDBClient): this {
    client.middlewareStack.add(
      (next) => async (args) => {
        const sentAt = this.clock.now();
        const result = await next(args);
        this.observe(dateHeaderOf(result.response), sentAt);
        return result;
      },
      // Low priority: inside the SDK's deserializer, so it sees the raw answer, errors included.
      { step: 'deserialize', priority: 'low', name: MIDDLEWARE_NAME, override: true },
    );
    return this;
  }

  private observe(date: string | undefined, sentAt: number): void {
    const serverDate = date === undefined ? Number.NaN : Date.parse(date);
    if (!Number.isFinite(serverDate)) return;
    const receivedAt = this.clock.now();
    // The tightest recent answer, not merely the last: a slow one would push "now" ahead by its round trip.
    this.latest = preferSample(this.latest, { serverDate, sentAt, receivedAt });
  }
}

/** The `Date` header of a raw HTTP answer (header names are case-insensitive). */
function dateHeaderOf(response: unknown): string | undefined {
  const headers = (response as { headers?: Record<string, string | undefined> } | undefined)?.headers;
  if (headers === undefined || headers === null) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'date' && typeof value === 'string') return value;
  }
  return undefined;
}
