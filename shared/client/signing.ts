import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

/** What signs a request: `SignatureV4` (or a subclass, in tests). */
export type RequestSigner = Pick<SignatureV4, 'sign'>;
/** Static credentials or a provider of them (e.g. `fromNodeProviderChain()`). */
export type SigningCredentials = ConstructorParameters<typeof SignatureV4>[0]['credentials'];

/** How the client signs: SigV4 for `execute-api` in `region`. */
export interface SigningOptions {
  readonly region: string;
  /** @default the default credential chain (`@aws-sdk/credential-provider-node`): env, SSO, web identity, ECS/EC2, Lambda's role */
  readonly credentials?: SigningCredentials;
  /** @default 'execute-api' */
  readonly service?: string;
}

/**
 * A SigV4 signer for API Gateway (`execute-api`). The default credential chain is loaded only
 * when no credentials are given, so a caller that brings its own pulls in no Node provider code.
 */
export async function createSigner(options: SigningOptions): Promise<RequestSigner> {
  const credentials =
    options.credentials ?? (await import('@aws-sdk/credential-provider-node')).defaultProvider();
  return new SignatureV4(signerInit({ ...options, credentials }));
}

/**
 * The signer's configuration: execute-api, SHA-256, the path URI-encoded (every AWS service but
 * S3), and no `x-amz-content-sha256` header (API Gateway hashes the body itself).
 */
export function signerInit(
  options: SigningOptions & { readonly credentials: SigningCredentials },
): ConstructorParameters<typeof SignatureV4>[0] {
  return {
    credentials: options.credentials,
    region: options.region,
    service: options.service ?? 'execute-api',
    sha256: Sha256,
    uriEscapePath: true,
    applyChecksum: false,
  };
}

/** A request as the client sends it: method, absolute URL, headers (lower-case names), body. */
export interface OutgoingRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/**
 * Signs `request` and returns the headers to send (`authorization`, `x-amz-date`, and
 * `x-amz-security-token` with temporary credentials). `host` is signed but not returned: fetch
 * sets it from the URL, to the same value.
 */
export async function signedHeaders(
  signer: RequestSigner,
  request: OutgoingRequest,
  signingDate?: Date,
): Promise<Record<string, string>> {
  const { url } = request;
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of url.searchParams) {
    const existing = query[name];
    query[name] =
      existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  const unsigned = new HttpRequest({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query,
    headers: { host: url.host, ...request.headers },
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  const signed = await signer.sign(unsigned, signingDate === undefined ? {} : { signingDate });
  const { host: _host, ...headers } = signed.headers;
  return headers;
}
