/** Public surface for other CDK apps: `import { ResetNotifier } from 'reset-notifier/infra'`. */
export { API_ROUTES, Api } from './constructs/api.js';
export {
  LOG_METRICS,
  Observability,
  RECEIPT_SIGNATURE_FAILURES,
  SERVICE_METRICS,
} from './constructs/observability.js';
export { Pipeline } from './constructs/pipeline.js';
export { ServiceFunction, type ServiceFunctionProps } from './constructs/service-function.js';
export { Storage } from './constructs/storage.js';
export { functionEnvironment, ResetNotifier, SERVICE_NAME } from './reset-notifier.js';
export type {
  FingerprintKeySource,
  FunctionCodeSettings,
  ProviderSettings,
  ResetNotifierProps,
  SimulatorProviderSettings,
  SnsProviderSettings,
  TimingSettings,
  TwilioProviderSettings,
} from './settings.js';
export {
  CONTEXT_KEYS,
  notifierPropsFromContext,
  ResetNotifierStack,
  type ResetNotifierStackProps,
} from './stack.js';
