import { describe, expect, it } from 'vitest';
import { createTwilioFeedback } from '../../../shared/providers/twilio/feedback.js';

const SID = `SM${'0123456789abcdef'.repeat(2)}`;

function aFetch(answer: Response | Error) {
  const requests: Array<{ url: string; init: RequestInit | undefined }> = [];
  const fetchImpl = (async (url: string | URL | Request, init?: RequestInit) => {
    requests.push({ url: String(url), init });
    if (answer instanceof Error) throw answer;
    return answer;
  }) as typeof fetch;
  return { requests, fetchImpl };
}

describe('Twilio message feedback', () => {
  it('posts Outcome=confirmed to the message Feedback resource with basic auth', async () => {
    // Prepare
    const { requests, fetchImpl } = aFetch(new Response('{}', { status: 201 }));
    const feedback = createTwilioFeedback({
      baseUrl: 'https://api.twilio.test/',
      accountSid: 'AC1',
      authToken: 'tok',
      fetch: fetchImpl,
    });

    // Act
    const outcome = await feedback.confirm(SID);

    // Assess
    expect(outcome).toEqual({ kind: 'recorded' });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.url).toBe(
      `https://api.twilio.test/2010-04-01/Accounts/AC1/Messages/${SID}/Feedback.json`,
    );
    expect(request?.init?.method).toBe('POST');
    expect(String(request?.init?.body)).toBe('Outcome=confirmed');
    expect((request?.init?.headers as Record<string, string> | undefined)?.authorization).toBe(
      `Basic ${Buffer.from('AC1:tok').toString('base64')}`,
    );
  });

  it.each([
    ['a 404', new Response('{"code":20404}', { status: 404 }), 'http_404'],
    ['a transport error', new TypeError('fetch failed'), 'transport_TypeError'],
  ] as const)('returns failed on %s, never throws', async (_label, answer, detail) => {
    const { fetchImpl } = aFetch(answer);
    const feedback = createTwilioFeedback({
      baseUrl: 'https://x.test',
      accountSid: 'AC1',
      authToken: 't',
      fetch: fetchImpl,
    });
    expect(await feedback.confirm(SID)).toEqual({ kind: 'failed', detail });
  });

  it('never puts something that is not a message SID into the path', async () => {
    const { requests, fetchImpl } = aFetch(new Response('', { status: 201 }));
    const feedback = createTwilioFeedback({
      baseUrl: 'https://x.test',
      accountSid: 'AC1',
      authToken: 't',
      fetch: fetchImpl,
    });
    expect(await feedback.confirm('../../Calls')).toEqual({ kind: 'failed', detail: 'not_a_message_sid' });
    expect(requests).toEqual([]);
  });
});
