import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local.js';
import { startLocalFauxqs } from '../../local/fauxqs.js';
import { prepareLocalTemplates } from '../../local/iam/template.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sqsEndpoint: string;
  }
}

/**
 * Starts the real emulators once for the integration suite: DynamoDB Local (Java) and fauxqs.
 * Each test file creates its own table and queues, so files can run in parallel.
 */
export default async function setup(project: TestProject) {
  // The templates the stacks evaluate IAM against (local/iam/), synthesized once before any test.
  const [dynamodb, fauxqs] = await Promise.all([
    startDynamoDbLocal(),
    startLocalFauxqs(),
    prepareLocalTemplates(),
  ]);
  project.provide('dynamodbEndpoint', dynamodb.endpoint);
  project.provide('sqsEndpoint', fauxqs.address);
  return async () => {
    await fauxqs.stop();
    await dynamodb.stop();
  };
}
