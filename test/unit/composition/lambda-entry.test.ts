import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { composeForwarder, lambdaEntry } from '../../../shared/composition/handlers.js';

function aContext(requestId: string): Context {
  return {
    awsRequestId: requestId,
    functionName: 'reset-notifier-forwarder',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:111111111111:function:reset-notifier-forwarder',
    memoryLimitInMB: '256',
    logGroupName: '/aws/lambda/reset-notifier-forwarder',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('lambdaEntry (the functions/* entry points)', () => {
  it("adds the invocation's Lambda context to every log line, and only that invocation's", async () => {
    // Prepare: the forwarder entry as functions/forwarder.ts builds it; its report is one log line
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const handler = await lambdaEntry(composeForwarder);
    const event = { Records: [] } as DynamoDBStreamEvent;

    // Act
    await handler(event, aContext('request-1'));
    await handler(event, aContext('request-2'));

    // Assess
    const lines = written
      .join('')
      .split('\n')
      .filter((line) => line.includes('"message":"forwarded"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.function_request_id)).toEqual(['request-1', 'request-2']);
    expect(lines[0]).toMatchObject({
      function_name: 'reset-notifier-forwarder',
      forwarded: 0,
    });
  });
});
