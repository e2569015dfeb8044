import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { transform } from 'esbuild';
import { createDynamoProviderHealth } from '../../shared/adapters/dynamodb/provider-health.js';
import { circuitSettingsOf } from '../../shared/composition/provider-health.js';
import { loadLocalConfig } from '../../shared/config.js';
import type { CircuitSettings } from '../../shared/domain/circuit.js';
import { type Clock, systemClock } from '../../shared/domain/clock.js';
import type { ProviderHealth } from '../../shared/ports/provider-health.js';
import { providersOf, readSetting, SETTINGS } from '../../shared/settings.js';
import type { LocalRoute } from '../runtime/http-server.js';
import { listDispatchUnknown } from './unknown-items.js';
import { listWaiting } from './waiting-items.js';

/** How the console reaches the table for its one extra read (the `dispatch_unknown` list). */
export interface ConsoleRouteOptions {
  /** Serve the console at all. Off in production unless deliberately deployed. @default true */
  readonly enabled?: boolean;
  readonly tableName: string;
  /** A client for the table; otherwise one is made for `dynamodbEndpoint`. */
  readonly dynamoClient?: DynamoDBClient;
  readonly dynamodbEndpoint?: string;
  readonly region?: string;
  readonly clock?: Clock;
  /** The providers whose circuits the circuits panel shows, in order (two or more). @default none */
  readonly providers?: readonly string[];
  /** The circuit thresholds (the probe period decides when a circuit shows half-open). @default the settings' */
  readonly circuitSettings?: CircuitSettings;
}

/**
 * The options `npm start` uses, from its environment: `CONSOLE_ENABLED` (`false` turns the console
 * off), `TABLE_NAME` and `DYNAMODB_PORT`, defaulting like local/start.ts does.
 */
export function consoleOptionsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): ConsoleRouteOptions {
  const local = loadLocalConfig(env);
  return {
    enabled: local.consoleEnabled,
    tableName: readSetting(env, SETTINGS.tableName),
    dynamodbEndpoint: `http://127.0.0.1:${local.ports.dynamodb}`,
    // One provider: the senders keep no circuit (nothing to fail over to), so none is shown.
    providers: providersOf(env).length > 1 ? providersOf(env) : [],
    circuitSettings: circuitSettingsOf(env),
  };
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
} as const;

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, ...SECURITY_HEADERS });
  res.end(body);
}

/** A console list as JSON: when it was read (`now`), how many items, the items. */
function sendList(res: ServerResponse, now: number, items: readonly unknown[]): void {
  send(
    res,
    200,
    'application/json',
    JSON.stringify({ generated_at: new Date(now).toISOString(), count: items.length, items }),
  );
}

const asset = (name: string) => new URL(`./${name}`, import.meta.url);

/** Compiles the console script once: TypeScript to an ES module, with esbuild's transform. */
async function compileScript(): Promise<string> {
  const source = await readFile(asset('app.ts'), 'utf8');
  const out = await transform(source, {
    loader: 'ts',
    format: 'esm',
    target: 'es2022',
    sourcefile: 'app.ts',
  });
  return out.code;
}

/**
 * The operator console as a {@link LocalRoute}: `GET /console` (static page), `/console/app.js`
 * (the page's TypeScript, compiled on first request), `/console/console.css`, and three read-only
 * JSON endpoints: `/console/api/unknown`, listing `dispatch_unknown` items with their age,
 * `/console/api/waiting`, every command that is not final with what the service waits for, and
 * `/console/api/circuits`, each provider's circuit (read as an observer: never a write). Every
 * other read goes to the public API (`/v1/notifications/...`). Anything outside `/console` is
 * left to the API.
 */
export function createConsoleRoute(options: ConsoleRouteOptions): LocalRoute {
  const clock = options.clock ?? systemClock;
  let client = options.dynamoClient;
  let script: Promise<string> | undefined;
  const dynamo = () => {
    client ??= new DynamoDBClient({
      region: options.region ?? 'us-east-1',
      ...(options.dynamodbEndpoint
        ? {
            endpoint: options.dynamodbEndpoint,
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          }
        : {}),
    });
    return client;
  };
  let health: ProviderHealth | undefined;
  const circuits = () => {
    health ??= createDynamoProviderHealth({
      client: dynamo(),
      tableName: options.tableName,
      settings: options.circuitSettings ?? circuitSettingsOf({}),
      role: 'observer',
    });
    return health;
  };

  return async (req, res, url) => {
    if (options.enabled === false) return false;
    const path = url.pathname;
    if (path !== '/console' && !path.startsWith('/console/')) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(
        res,
        405,
        'application/json',
        JSON.stringify({ code: 'method_not_allowed', message: 'read-only' }),
      );
      return true;
    }
    try {
      switch (path) {
        case '/console':
        case '/console/':
          send(res, 200, 'text/html; charset=utf-8', await readFile(asset('index.html'), 'utf8'));
          return true;
        case '/console/console.css':
          send(res, 200, 'text/css; charset=utf-8', await readFile(asset('console.css'), 'utf8'));
          return true;
        case '/console/app.js':
          script ??= compileScript();
          send(
            res,
            200,
            'text/javascript; charset=utf-8',
            await script.catch((error) => {
              script = undefined;
              throw error;
            }),
          );
          return true;
        case '/console/api/unknown': {
          const now = clock.now();
          sendList(res, now, await listDispatchUnknown(dynamo(), options.tableName, { now }));
          return true;
        }
        case '/console/api/waiting': {
          const now = clock.now();
          sendList(res, now, await listWaiting(dynamo(), options.tableName));
          return true;
        }
        case '/console/api/circuits': {
          const now = clock.now();
          const views = await circuits().view(options.providers ?? [], now);
          sendList(
            res,
            now,
            views.map((v) => ({
              provider: v.provider,
              state: v.state,
              since: v.since === undefined ? null : new Date(v.since).toISOString(),
            })),
          );
          return true;
        }
        default:
          send(
            res,
            404,
            'application/json',
            JSON.stringify({ code: 'console_page_not_found', message: 'no such console page' }),
          );
          return true;
      }
    } catch {
      send(
        res,
        500,
        'application/json',
        JSON.stringify({ code: 'internal_error', message: 'internal error' }),
      );
      return true;
    }
  };
}
