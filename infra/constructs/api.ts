import { join } from 'node:path';
import { type CfnElement, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  type HttpRoute,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import {
  AccountPrincipal,
  ArnPrincipal,
  CompositePrincipal,
  type IGrantable,
  type IPrincipal,
  Role,
} from 'aws-cdk-lib/aws-iam';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { TableSchema } from '../../shared/adapters/dynamodb/schema.js';
import { TWILIO_RECEIPTS_PATH } from '../../shared/handlers/receipts-handler.js';
import { providerInfra } from '../../shared/providers/infra-registry.js';
import { SETTINGS, settingsEnv } from '../../shared/settings.js';
import { isAccountId } from '../external-resources.js';
import { FUNCTION_ENTRIES, type ResolvedSettings } from '../settings.js';
import { allowFieldKey, allowIndexQuery, allowTableItems, allowTableKey } from './grants.js';
import { acknowledge } from './nag.js';
import { ServiceFunction } from './service-function.js';
import type { Storage } from './storage.js';

/** Props of {@link Api}. */
export interface ApiProps {
  readonly settings: ResolvedSettings;
  readonly storage: Storage;
  readonly environment: Readonly<Record<string, string>>;
}

/** The routes of the HTTP API (docs/design.md#http-api). */
export const API_ROUTES: ReadonlyArray<{ readonly method: HttpMethod; readonly path: string }> = [
  { method: HttpMethod.POST, path: '/v1/notifications' },
  { method: HttpMethod.GET, path: '/v1/notifications' },
  { method: HttpMethod.GET, path: '/v1/notifications/{idempotency_key}' },
  { method: HttpMethod.GET, path: '/v1/notifications/{idempotency_key}/evidence' },
  { method: HttpMethod.GET, path: '/v1/openapi.json' },
  { method: HttpMethod.POST, path: '/v1/notifications/{idempotency_key}/confirmation' },
];

/** The public Twilio status-callback route (no IAM: Twilio cannot sign SigV4; the handler checks its signature). */
export const RECEIPTS_ROUTE = { method: HttpMethod.POST, path: TWILIO_RECEIPTS_PATH } as const;

/**
 * Route throttling of the receipts route, relative to the stage's: a message yields up to three
 * callbacks (sent, delivered or undelivered, and an occasional queued or failed).
 */
export const RECEIPTS_THROTTLE_FACTOR = 3;

/**
 * The HTTP API: IAM (SigV4) authorization on every route, stage throttling, JSON access logs, and
 * the API function (admission and read-only views).
 */
export class Api extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly handler: ServiceFunction;
  readonly routes: readonly HttpRoute[];
  readonly accessLogs: LogGroup;
  /** The role callers in other accounts assume (only when `apiInvokerPrincipals` is set). */
  readonly invokerRole?: Role;
  /** The Twilio receipts function and route; only when the provider is Twilio(-compatible). */
  readonly receipts?: ServiceFunction;
  /** `<API endpoint>/v1/receipts/twilio`: what every function sends as the StatusCallback base. */
  readonly receiptsUrl?: string;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    const { settings, storage } = props;

    this.handler = new ServiceFunction(this, 'Handler', {
      entry: join(settings.code.entryDirectory, FUNCTION_ENTRIES.api),
      description: 'reset-notifier: HTTP API (admission, views, evidence)',
      timeout: Duration.seconds(10),
      environment: props.environment,
      logRetention: settings.logRetention,
      projectRoot: settings.code.projectRoot,
      depsLockFilePath: settings.code.depsLockFilePath,
    });
    // Admission is one conditional PutItem; views are GetItem and Query (evidence, by event id).
    // UpdateItem: the destination budget counters, incremented in the admission transaction.
    allowTableItems(this.handler, storage.table, ['PutItem', 'GetItem', 'UpdateItem', 'Query']);
    allowIndexQuery(this.handler, storage.table, [TableSchema.byEventIndex.name]);
    allowTableKey(this.handler, storage.tableKey, 'write');
    allowFieldKey(this.handler, storage.fieldKey, 'kms:GenerateDataKey');
    storage.grantFingerprintKeyRead(this.handler);

    this.httpApi = new HttpApi(this, 'HttpApi', {
      // Named after the stack, as every name the stack chooses: two stacks read apart in the console.
      apiName: Stack.of(this).stackName,
      description: 'reset-notifier: password-reset SMS, sent exactly once',
      defaultAuthorizer: new HttpIamAuthorizer(),
      createDefaultStage: false,
    });
    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: settings.logRetention,
      // Kept when the stack goes; removed if its first create rolls back (nothing logged yet).
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    });
    this.stage = new HttpStage(this, 'Stage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: settings.apiThrottle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTimeEpoch',
            routeKey: '$context.routeKey',
            status: '$context.status',
            caller: '$context.identity.caller',
            userArn: '$context.identity.userArn',
            sourceIp: '$context.identity.sourceIp',
            latencyMs: '$context.responseLatency',
            authorizerError: '$context.authorizer.error',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });

    const integration = new HttpLambdaIntegration('Integration', this.handler);
    this.routes = API_ROUTES.flatMap((route) =>
      this.httpApi.addRoutes({ path: route.path, methods: [route.method], integration }),
    );
    for (const grantee of settings.apiInvokers) this.grantInvoke(grantee);
    if (settings.apiInvokerPrincipals.length > 0) {
      this.invokerRole = this.createInvokerRole(settings.apiInvokerPrincipals);
    }

    // Confirmations write a transition (UpdateItem + PutItem in one transaction, UpdateItem granted
    // above) and are forwarded to the feedback API of the provider that sent, with its credentials.
    for (const provider of settings.providers) {
      providerInfra(provider).grantFeedback(this, this.handler, provider);
    }
    // At most one listed provider takes status callbacks (infra/settings.ts refuses two).
    const callbacks = settings.providers.find((provider) => providerInfra(provider).statusCallbacks);
    if (callbacks !== undefined) {
      const receiptsUrl = `${this.httpApi.apiEndpoint}${RECEIPTS_ROUTE.path}`;
      this.receiptsUrl = receiptsUrl;
      this.receipts = this.addTwilioReceipts(props, receiptsUrl, callbacks);
      this.handler.addEnvironment(SETTINGS.twilioStatusCallbackBase.env, receiptsUrl);
    }
  }

  /**
   * The cross-account invoker role: trusted by exactly `principals` (accounts or role ARNs), and
   * allowed nothing but `execute-api:Invoke` on this API's routes.
   */
  private createInvokerRole(principals: readonly string[]): Role {
    const trusted: IPrincipal[] = principals.map((p) =>
      isAccountId(p) ? new AccountPrincipal(p) : new ArnPrincipal(p),
    );
    const role = new Role(this, 'InvokerRole', {
      assumedBy: new CompositePrincipal(...trusted),
      description: 'reset-notifier: callers in other accounts assume this role to call the HTTP API',
      maxSessionDuration: Duration.hours(1),
    });
    this.grantInvoke(role);
    acknowledgeRouteWildcards(this, role);
    return role;
  }

  /**
   * The Twilio receipts route: public (authorization NONE), throttled on its own, served by a small
   * function that validates `X-Twilio-Signature` with the auth token from the Twilio secret and
   * writes receipt transitions. It reads and writes command items only: no index, no payload key.
   */
  private addTwilioReceipts(
    props: ApiProps,
    receiptsUrl: string,
    provider: ResolvedSettings['provider'],
  ): ServiceFunction {
    const { settings, storage } = props;
    const receipts = new ServiceFunction(this, 'Receipts', {
      entry: join(settings.code.entryDirectory, FUNCTION_ENTRIES.receipts),
      description: 'reset-notifier: Twilio status callbacks (signature-checked receipts)',
      timeout: Duration.seconds(10),
      memorySize: 256,
      environment: { ...props.environment, ...settingsEnv({ twilioStatusCallbackBase: receiptsUrl }) },
      logRetention: settings.logRetention,
      projectRoot: settings.code.projectRoot,
      depsLockFilePath: settings.code.depsLockFilePath,
    });
    allowTableItems(receipts, storage.table, ['GetItem', 'UpdateItem', 'PutItem']);
    allowTableKey(receipts, storage.tableKey, 'write');
    providerInfra(provider).grantReceipts(this, receipts, provider);
    const [route] = this.httpApi.addRoutes({
      path: RECEIPTS_ROUTE.path,
      methods: [RECEIPTS_ROUTE.method],
      integration: new HttpLambdaIntegration('ReceiptsIntegration', receipts),
      authorizer: new HttpNoneAuthorizer(),
    });
    if (route !== undefined) {
      acknowledge(
        route,
        'AwsSolutions-APIG4',
        'Twilio cannot sign SigV4: the receipts route is public, throttled on its own, and its handler rejects every request without a valid X-Twilio-Signature (403, nothing written, metric ReceiptSignatureFailures).',
      );
    }
    // Route-level throttling: HTTP API stages take it per route key in RouteSettings (a JSON map,
    // so CloudFormation's own property names).
    const stage = this.stage.node.defaultChild as CfnStage;
    stage.addPropertyOverride(`RouteSettings.${RECEIPTS_ROUTE.method} ${RECEIPTS_ROUTE.path}`, {
      ThrottlingRateLimit: settings.apiThrottle.rateLimit * RECEIPTS_THROTTLE_FACTOR,
      ThrottlingBurstLimit: settings.apiThrottle.burstLimit * RECEIPTS_THROTTLE_FACTOR,
    });
    return receipts;
  }

  /** The stage URL, e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com/`. */
  get url(): string {
    return this.stage.url;
  }

  /** Grants `execute-api:Invoke` on every route of the API (for SigV4-signed callers). */
  grantInvoke(grantee: IGrantable): void {
    for (const route of this.routes) route.grantInvoke(grantee);
  }
}

/**
 * Route grants name `<api>/<any stage>/<METHOD><path>`, path parameters as `*` (IAM has no finer
 * match for them); each such resource is acknowledged on the grantee's policy, one finding each.
 */
function acknowledgeRouteWildcards(api: Api, grantee: Role): void {
  const apiId = Stack.of(api).getLogicalId(api.httpApi.node.defaultChild as CfnElement);
  for (const route of API_ROUTES) {
    const path = route.path.replace(/\{.*?\}.*/, '*');
    acknowledge(
      grantee,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/*/${route.method}${path}]`,
      'One route of this API: any stage, and "*" only where the route has a path parameter (the idempotency key).',
    );
  }
}
