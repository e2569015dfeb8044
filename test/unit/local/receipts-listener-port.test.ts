import { describe, expect, it } from 'vitest';
import { receiptsListenerPort } from '../../../local/runtime/receipts-listener.js';
import { LOCAL_RECEIPTS_PORT, SETTINGS, settingsEnv } from '../../../shared/settings.js';

describe('the receipts-only listener port', () => {
  it.each([
    ['the built-in simulator', settingsEnv({}), undefined],
    [
      'PROVIDER=twilio without PROVIDER_BASE_URL (the simulator)',
      settingsEnv({ provider: 'twilio' }),
      undefined,
    ],
    [
      'real Twilio',
      settingsEnv({ provider: 'twilio', twilioBaseUrl: 'https://api.twilio.com' }),
      LOCAL_RECEIPTS_PORT,
    ],
    [
      'real Twilio and RECEIPTS_PORT',
      settingsEnv({ provider: 'twilio', twilioBaseUrl: 'https://api.twilio.com', receiptsPort: 3101 }),
      3101,
    ],
    ['the simulator and RECEIPTS_PORT=0 (a random port)', settingsEnv({ receiptsPort: 0 }), 0],
  ])('with %s is %s', (_label, env, port) => {
    expect(receiptsListenerPort(env)).toBe(port);
  });

  it('stops on a malformed RECEIPTS_PORT, naming it', () => {
    expect(() => receiptsListenerPort({ [SETTINGS.receiptsPort.env]: 'abc' })).toThrow(/RECEIPTS_PORT/);
  });
});
