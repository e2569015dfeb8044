import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chooseMode, readLocalKeys, resolveConnection } from '../../../shared/cli/connection.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('CLI connection', () => {
  it('defaults to the local stack of npm start', async () => {
    // Act
    const connection = await resolveConnection({}, {});
    // Assess
    expect(connection.mode).toBe('local');
    expect(connection.config.dynamodbEndpoint).toBe('http://127.0.0.1:8000');
    expect(connection.config.sqsEndpoint).toBe('http://127.0.0.1:4566');
    expect(connection.config.tableName).toBe('reset-notifier');
    expect(connection.queueName).toBe('reset-notifier-dispatch');
    expect(connection.dlqName).toBe('reset-notifier-dispatch-dlq');
    expect(connection.config.evidenceRetentionDays).toBe(400);
  });

  it('chooses AWS for --aws, or for AWS_PROFILE / AWS_REGION without endpoints', () => {
    expect(chooseMode({ aws: true }, { DYNAMODB_ENDPOINT: 'http://x' })).toBe('aws');
    expect(chooseMode({}, { AWS_PROFILE: 'ops' })).toBe('aws');
    expect(chooseMode({}, { AWS_REGION: 'eu-west-1' })).toBe('aws');
    expect(chooseMode({}, { AWS_REGION: 'eu-west-1', DYNAMODB_ENDPOINT: 'http://x' })).toBe('local');
    expect(chooseMode({ local: true }, { AWS_PROFILE: 'ops' })).toBe('local');
    expect(() => chooseMode({ aws: true, local: true }, {})).toThrow(/exclude/);
  });

  it('against AWS drops emulator endpoints and needs a table name', async () => {
    // Act / Assess
    await expect(resolveConnection({ aws: true }, {})).rejects.toThrow(/TABLE_NAME/);
    const connection = await resolveConnection(
      { aws: true, region: 'eu-west-1' },
      { TABLE_NAME: 'prod-table', DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', EVIDENCE_RETENTION_DAYS: '30' },
    );
    expect(connection.mode).toBe('aws');
    expect(connection.config.dynamodbEndpoint).toBeUndefined();
    expect(connection.config.region).toBe('eu-west-1');
    expect(connection.config.evidenceRetentionDays).toBe(30);
  });

  it('reads the local keys the stack persisted under --data-dir', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'cli-keys-'));
    dirs.push(dir);
    await writeFile(
      join(dir, 'local-keys.json'),
      JSON.stringify({ dataKey: 'aa'.repeat(32), fingerprintKey: 'bb'.repeat(32) }),
    );
    // Act
    const connection = await resolveConnection({ dataDir: dir }, {});
    // Assess
    expect(connection.config.localDataKey).toBe('aa'.repeat(32));
    expect(connection.config.fingerprintKey).toBe('bb'.repeat(32));
    await expect(readLocalKeys(join(dir, 'missing'))).rejects.toThrow(/cannot read local keys/);
  });
});
