import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { HttpResponse } from '@smithy/protocol-http';
import type {
  DeserializeHandler,
  DeserializeHandlerArguments,
  HandlerExecutionContext,
  MiddlewareStack,
} from '@smithy/types';
import { currentCaller } from './context.js';

/** The IAM service prefix of each SDK client the functions use. */
const SERVICE_OF_CLIENT: Readonly<Record<string, string>> = {
  DynamoDBClient: 'dynamodb',
  DynamoDBDocumentClient: 'dynamodb',
  DynamoDBStreamsClient: 'dynamodb',
  SQSClient: 'sqs',
  SNSClient: 'sns',
  CloudWatchLogsClient: 'logs',
  PinpointSMSVoiceV2Client: 'sms-voice',
  KMSClient: 'kms',
  SecretsManagerClient: 'secretsmanager',
  SSMClient: 'ssm',
};

/**
 * The HTTP response AWS answers a denied call with, per service protocol, so the client's own
 * deserializer raises the exception AWS's would (class, `name`, `$fault`, `$metadata`, message).
 */
function denialResponse(service: string, message: string): HttpResponse {
  const requestId = randomUUID();
  const json = (
    contentType: string,
    type: string,
    body: Record<string, string>,
    extra: Record<string, string> = {},
  ) =>
    new HttpResponse({
      statusCode: service === 'sqs' ? 403 : 400,
      headers: { 'content-type': contentType, 'x-amzn-requestid': requestId, ...extra },
      body: Buffer.from(JSON.stringify({ __type: type, ...body })),
    });
  switch (service) {
    case 'sns':
      // Query protocol: SNS answers 403 AuthorizationError.
      return new HttpResponse({
        statusCode: 403,
        headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
        body: Buffer.from(
          `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type><Code>AuthorizationError</Code><Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
        ),
      });
    case 'sqs':
      // JSON protocol with the query-compatible error code the SDK surfaces (`AccessDenied`, 403).
      return json(
        'application/x-amz-json-1.0',
        'com.amazon.coral.service#AccessDeniedException',
        { message },
        {
          'x-amzn-query-error': 'AccessDenied;Sender',
        },
      );
    case 'dynamodb':
    case 'sms-voice':
      return json('application/x-amz-json-1.0', 'com.amazon.coral.service#AccessDeniedException', {
        Message: message,
      });
    default:
      return json('application/x-amz-json-1.1', 'com.amazon.coral.service#AccessDeniedException', {
        Message: message,
      });
  }
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const MIDDLEWARE_NAME = 'localIamEnforcement';

/** Evaluates each call made as a function (see `runAs`); a denied one never reaches the emulator. */
function enforcementMiddleware<Output extends object>(
  next: DeserializeHandler<object, Output>,
  context: HandlerExecutionContext,
): DeserializeHandler<object, Output> {
  return async (args: DeserializeHandlerArguments<object>) => {
    const caller = currentCaller();
    const service = SERVICE_OF_CLIENT[String(context.clientName)];
    if (caller === undefined) return next(args);
    const operation = String(context.commandName).replace(/Command$/, '');
    const requests = caller.enforcer.requestsOf(
      service ??
        String(context.clientName)
          .replace(/Client$/, '')
          .toLowerCase(),
      operation,
      args.input as Record<string, unknown>,
    );
    const denial = caller.enforcer.check(caller.fn, requests);
    if (denial === undefined) return next(args);
    // Deserialized by the layer above, exactly as the service's answer would be.
    return { response: denialResponse(service ?? '', denial.message), output: undefined as never };
  };
}

const enforced = new WeakSet<MiddlewareStack<object, object>>();
let installed = false;

/**
 * Hooks every AWS SDK client of this process (once): each client gets the enforcement
 * middleware on its first call, innermost, just before the HTTP handler (after retries and
 * signing). It acts only on calls made inside `runAs`, so the local stack's own plumbing (table
 * and queue creation, other stacks in the same process) is untouched.
 */
export function installSdkEnforcement(): void {
  if (installed) return;
  installed = true;
  // The smithy `Client` every AWS SDK client extends (one class here; a set in case of copies).
  const bases = new Set(
    [DynamoDBClient, SQSClient, SNSClient].map(
      (client) => Object.getPrototypeOf(client.prototype) as { send: (...args: unknown[]) => unknown },
    ),
  );
  for (const base of bases) patchSend(base);
}

function patchSend(base: { send: (...args: unknown[]) => unknown }): void {
  const original = base.send;
  base.send = function send(this: { middlewareStack: unknown }, ...args: unknown[]) {
    const stack = this.middlewareStack as MiddlewareStack<object, object>;
    if (!enforced.has(stack)) {
      enforced.add(stack);
      stack.add(enforcementMiddleware as never, {
        step: 'deserialize',
        priority: 'low',
        name: MIDDLEWARE_NAME,
        override: true,
      });
    }
    return original.apply(this, args);
  };
}
