import type { SectionResult } from './support.js';

/** Options of {@link runBrownout}. */
export interface BrownoutOptions {
  readonly endpoint: string;
  readonly quick: boolean;
}

/** Placeholder, replaced below. */
export async function runBrownout(_options: BrownoutOptions): Promise<SectionResult> {
  throw new Error('not yet');
}
