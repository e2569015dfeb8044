/**
 * A token bucket on an injected clock. CloudWatch Logs allows `FilterLogEvents` 5 transactions
 * per second per account and Region (a hard quota): lookups draw from a bucket refilled below it.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  /**
   * @param ratePerSecond tokens added per second (default 4: under the account's 5/s)
   * @param burst bucket size, and the tokens it starts with
   * @param now the clock
   */
  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError('rate must be > 0 and burst >= 1');
    this.tokens = burst;
    this.updatedAt = now();
  }

  /**
   * Reserves one token. Returns 0 when it was available, else how many ms until it is (the token is
   * then already reserved: the caller waits that long before calling). Returns `Infinity` without
   * reserving when the wait would be longer than `maxWaitMs`.
   */
  reserve(maxWaitMs = Number.POSITIVE_INFINITY): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.updatedAt) / 1000) * this.ratePerSecond);
    this.updatedAt = now;
    const waitMs = this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.ratePerSecond) * 1000);
    if (waitMs > maxWaitMs) return Number.POSITIVE_INFINITY;
    this.tokens -= 1;
    return waitMs;
  }
}
