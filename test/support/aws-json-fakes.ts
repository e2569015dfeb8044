/**
 * Tiny wire-level fakes of two AWS JSON 1.1 services, so the real SDK clients can be tested over
 * HTTP: KMS (`TrentService.GenerateDataKey`, `TrentService.Decrypt`, data keys wrapped with the
 * fake's own AES key and bound to the encryption context, as KMS binds them) and Secrets Manager
 * (`secretsmanager.GetSecretValue`). Each records the operations it served.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JsonFake {
  readonly url: string;
  /** `Operation` names in arrival order, with the request body. */
  readonly calls: { readonly operation: string; readonly input: Record<string, unknown> }[];
  stop(): Promise<void>;
}

type Handler = (operation: string, input: Record<string, unknown>) => { status: number; body: unknown };

async function startJsonFake(targetPrefix: string, namespace: string, handler: Handler): Promise<JsonFake> {
  const calls: JsonFake['calls'] = [];
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
    res.end(JSON.stringify(body));
  };
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    if (!req.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) {
      return answer(res, 400, { __type: `${namespace}#UnrecognizedClientException`, message: 'unsigned' });
    }
    if (!target.startsWith(`${targetPrefix}.`)) {
      return answer(res, 400, { __type: `${namespace}#UnknownOperationException`, message: target });
    }
    const operation = target.slice(targetPrefix.length + 1);
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    calls.push({ operation, input });
    const { status, body } = handler(operation, input);
    answer(res, status, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const canonical = (context: unknown) =>
  JSON.stringify(
    Object.entries((context ?? {}) as Record<string, string>).sort(([a], [b]) => a.localeCompare(b)),
  );

/** A KMS fake holding one symmetric key, `keyId`. */
export function startKmsFake(keyId = 'alias/reset-notifier'): Promise<JsonFake> {
  const master = randomBytes(32);
  const ns = 'com.amazonaws.kms';
  const wrap = (plaintext: Buffer, context: unknown): Buffer => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', master, iv);
    cipher.setAAD(Buffer.from(canonical(context)));
    return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  };
  const unwrap = (blob: Buffer, context: unknown): Buffer | undefined => {
    try {
      const decipher = createDecipheriv('aes-256-gcm', master, blob.subarray(0, 12));
      decipher.setAAD(Buffer.from(canonical(context)));
      decipher.setAuthTag(blob.subarray(blob.length - 16));
      return Buffer.concat([decipher.update(blob.subarray(12, blob.length - 16)), decipher.final()]);
    } catch {
      return undefined;
    }
  };
  return startJsonFake('TrentService', ns, (operation, input) => {
    if (operation === 'GenerateDataKey') {
      if (input.KeyId !== keyId)
        return { status: 400, body: { __type: `${ns}#NotFoundException`, message: 'key' } };
      if (input.KeySpec !== 'AES_256') return { status: 400, body: { __type: `${ns}#ValidationException` } };
      const plaintext = randomBytes(32);
      return {
        status: 200,
        body: {
          KeyId: keyId,
          Plaintext: plaintext.toString('base64'),
          CiphertextBlob: wrap(plaintext, input.EncryptionContext).toString('base64'),
        },
      };
    }
    if (operation === 'Decrypt') {
      const plaintext = unwrap(
        Buffer.from(String(input.CiphertextBlob ?? ''), 'base64'),
        input.EncryptionContext,
      );
      if (plaintext === undefined) {
        return {
          status: 400,
          body: { __type: `${ns}#InvalidCiphertextException`, message: 'cannot decrypt' },
        };
      }
      return {
        status: 200,
        body: {
          KeyId: keyId,
          Plaintext: plaintext.toString('base64'),
          EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
        },
      };
    }
    return { status: 400, body: { __type: `${ns}#UnsupportedOperationException`, message: operation } };
  });
}

/** A Secrets Manager fake serving `secrets` (id -> string value, or a Buffer for a binary secret). */
export function startSecretsManagerFake(
  secrets: Readonly<Record<string, string | Buffer>>,
): Promise<JsonFake> {
  const ns = 'com.amazonaws.secretsmanager';
  return startJsonFake('secretsmanager', ns, (operation, input) => {
    if (operation !== 'GetSecretValue') {
      return { status: 400, body: { __type: `${ns}#InvalidRequestException`, Message: operation } };
    }
    const id = String(input.SecretId ?? '');
    const value = Object.hasOwn(secrets, id) ? secrets[id] : undefined;
    if (value === undefined) {
      return {
        status: 400,
        body: {
          __type: `${ns}#ResourceNotFoundException`,
          Message: "Secrets Manager can't find the specified secret.",
        },
      };
    }
    return {
      status: 200,
      body: {
        ARN: `arn:aws:secretsmanager:us-east-1:000000000000:secret:${id}`,
        Name: id,
        VersionId: randomUUID(),
        VersionStages: ['AWSCURRENT'],
        CreatedDate: Date.now() / 1000,
        ...(typeof value === 'string' ? { SecretString: value } : { SecretBinary: value.toString('base64') }),
      },
    };
  });
}
