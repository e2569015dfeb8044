import { createHash, createHmac } from 'node:crypto';
import type { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { createResetNotifierClient } from '../../../shared/client/index.js';
import { signedHeaders, signerInit } from '../../../shared/client/signing.js';

/** The credentials, date, region and service of the AWS SigV4 test suite (aws-sig-v4-test-suite). */
const SUITE = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  date: new Date('2015-08-30T12:36:00Z'),
  region: 'us-east-1',
  service: 'service',
};
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** SignatureV4 that keeps the canonical request it signed, to compare with the suite's `.creq`. */
class InspectedSigner extends SignatureV4 {
  canonical: string[] = [];
  constructor() {
    // The client's own signer configuration, with the suite's credentials, region and service.
    super(
      signerInit({
        credentials: { accessKeyId: SUITE.accessKeyId, secretAccessKey: SUITE.secretAccessKey },
        region: SUITE.region,
        service: SUITE.service,
      }),
    );
  }
  protected override createCanonicalRequest(
    request: HttpRequest,
    canonicalHeaders: Record<string, string>,
    payloadHash: string,
  ): string {
    const canonical = super.createCanonicalRequest(request, canonicalHeaders, payloadHash);
    this.canonical.push(canonical);
    return canonical;
  }
}

/** The signature of a canonical request, computed independently (AWS docs, "Create a signature"). */
function independentSignature(canonicalRequest: string): string {
  const day = '20150830';
  const scope = `${day}/${SUITE.region}/${SUITE.service}/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    '20150830T123600Z',
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  let key: Buffer = createHmac('sha256', `AWS4${SUITE.secretAccessKey}`).update(day).digest();
  for (const part of [SUITE.region, SUITE.service, 'aws4_request']) {
    key = createHmac('sha256', key).update(part).digest();
  }
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

describe('SigV4 signing against the AWS test suite', () => {
  it.each([
    {
      name: 'get-vanilla',
      method: 'GET',
      url: 'https://example.amazonaws.com/',
      creq: [
        'GET',
        '/',
        '',
        'host:example.amazonaws.com',
        'x-amz-date:20150830T123600Z',
        '',
        'host;x-amz-date',
        EMPTY_SHA256,
      ],
      signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    },
    {
      name: 'post-vanilla',
      method: 'POST',
      url: 'https://example.amazonaws.com/',
      creq: [
        'POST',
        '/',
        '',
        'host:example.amazonaws.com',
        'x-amz-date:20150830T123600Z',
        '',
        'host;x-amz-date',
        EMPTY_SHA256,
      ],
      signature: '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    },
    {
      name: 'get-vanilla-query-order-key-case',
      method: 'GET',
      url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1',
      creq: [
        'GET',
        '/',
        'Param1=value1&Param2=value2',
        'host:example.amazonaws.com',
        'x-amz-date:20150830T123600Z',
        '',
        'host;x-amz-date',
        EMPTY_SHA256,
      ],
      signature: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
    },
  ])('$name: the canonical request and the Authorization header are the suite’s', async (vector) => {
    // Prepare
    const signer = new InspectedSigner();

    // Act
    const headers = await signedHeaders(
      signer,
      { method: vector.method, url: new URL(vector.url), headers: {} },
      SUITE.date,
    );

    // Assess
    const expectedCreq = vector.creq.join('\n');
    expect(signer.canonical).toEqual([expectedCreq]);
    expect(independentSignature(expectedCreq)).toBe(vector.signature);
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
    expect(headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=${vector.signature}`,
    );
    expect(headers.host).toBeUndefined();
  });

  it('signs the client’s requests for execute-api in the region, with the session token', async () => {
    // Prepare
    const sent: Array<{ url: string; headers: Record<string, string> }> = [];
    const client = createResetNotifierClient({
      baseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/',
      signing: {
        region: 'eu-west-1',
        credentials: {
          accessKeyId: 'AKIDEXAMPLE',
          secretAccessKey: SUITE.secretAccessKey,
          sessionToken: 'session-token',
        },
      },
      fetch: async (url, init) => {
        sent.push({ url, headers: init.headers as Record<string, string> });
        return new Response(JSON.stringify({ code: 'not_found', message: 'no' }), { status: 404 });
      },
    });

    // Act
    const view = await client.get('sms:password_reset:abc');

    // Assess
    expect(view).toBeUndefined();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url).toBe(
      'https://abc123.execute-api.eu-west-1.amazonaws.com/v1/notifications/sms:password_reset:abc',
    );
    const auth = sent[0]?.headers.authorization ?? '';
    expect(auth).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, /,
    );
    expect(auth).toContain('SignedHeaders=accept;host;x-amz-date;x-amz-security-token');
    expect(sent[0]?.headers['x-amz-security-token']).toBe('session-token');
  });
});
