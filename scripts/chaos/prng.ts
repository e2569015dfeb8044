/**
 * A small seeded PRNG for the chaos run. Everything random in a run derives from the seed, so a
 * run's scenario (events, payloads, fault schedule, crash and throttle decisions) is reproducible.
 */

/** 32-bit FNV-1a over the parts, then a murmur3 finaliser: a stable seed for one named stream. */
export function hashSeed(...parts: readonly (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const text = `${typeof part}:${part}|`;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform number in [0, 1) that depends only on the parts: decisions that ignore interleaving. */
export function unitFor(...parts: readonly (string | number)[]): number {
  return hashSeed(...parts) / 2 ** 32;
}

/** sfc32: fast, small state, good statistical quality; not for secrets. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(...seedParts: readonly (string | number)[]) {
    this.a = hashSeed('a', ...seedParts);
    this.b = hashSeed('b', ...seedParts);
    this.c = hashSeed('c', ...seedParts);
    this.d = 1;
    // Warm up so nearby seeds diverge.
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A uniform number in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 2 ** 32;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** One element, with the given relative weights. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let point = this.next() * total;
    for (const [value, weight] of entries) {
      point -= weight;
      if (point < 0) return value;
    }
    const last = entries.at(-1);
    if (!last) throw new RangeError('weighted pick from an empty list');
    return last[0];
  }

  /** `length` lowercase hex characters. */
  hex(length: number): string {
    let out = '';
    while (out.length < length) out += Math.floor(this.next() * 16).toString(16);
    return out;
  }

  /** `length` decimal digits (may start with 0). */
  digits(length: number): string {
    let out = '';
    while (out.length < length) out += String(Math.floor(this.next() * 10));
    return out;
  }
}
