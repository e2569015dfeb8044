import { afterEach, describe, expect, it, vi } from 'vitest';
import { providerFor } from '../../../shared/composition/provider.js';
import { loadConfig } from '../../../shared/config.js';
import { createFingerprinter } from '../../../shared/domain/fingerprint.js';
import { ManualClock } from '../../support/manual-clock.js';

const SID = `SM${'ab'.repeat(16)}`;
const fingerprinter = createFingerprinter(Buffer.alloc(32, 3));
const clock = new ManualClock();
const configFor = (provider: string) =>
  loadConfig({
    PROVIDER: provider,
    PROVIDER_BASE_URL: 'https://twilio.example.test',
    PROVIDER_ACCOUNT_SID: 'AC1',
    PROVIDER_AUTH_TOKEN: 'token',
    PROVIDER_FROM: '+15005550006',
    PROVIDER_STATUS_CALLBACK_BASE: 'https://api.example.test/v1/receipts/twilio',
  });

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('providerFor: the feedback API behind the optional confirm', () => {
  it('forwards a Twilio(-compatible) confirmation to Message Feedback', async () => {
    // Prepare
    const requests: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      requests.push(String(url));
      return new Response('{}', { status: 201 });
    });
    const provider = providerFor(configFor('simulator'), clock, fingerprinter);

    // Act
    const outcome = await provider.confirm?.(SID);

    // Assess
    expect(outcome).toEqual({ kind: 'recorded' });
    expect(requests).toEqual([
      `https://twilio.example.test/2010-04-01/Accounts/AC1/Messages/${SID}/Feedback.json`,
    ]);
  });

  it('has no confirm for SNS, which has no feedback API', () => {
    expect(providerFor(configFor('sns'), clock, fingerprinter).confirm).toBeUndefined();
  });
});
