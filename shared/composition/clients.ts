import type { ServiceConfig } from '../config.js';

/** Local emulators accept any credentials; real AWS uses the default chain. */
export function clientConfig(config: Pick<ServiceConfig, 'region'>, endpoint: string | undefined) {
  return endpoint
    ? { region: config.region, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
    : { region: config.region };
}
