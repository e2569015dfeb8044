import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../../infra/constructs/api.js';
import { buildOpenApiDocument, OPENAPI_ROUTES, renderOpenApiDocument } from '../../../shared/http/openapi.js';

const COMMITTED = resolve(import.meta.dirname, '../../../docs/openapi.json');

type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown[];
        requestBody?: { content: Record<string, unknown> };
        responses: Record<string, unknown>;
      }
    >
  >;
  components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
};

describe('OpenAPI document (docs/openapi.json)', () => {
  it('is current: regenerating it from the schemas gives the committed file (run `npm run openapi`)', () => {
    // Act: the committed file is Biome-formatted; compare documents, not whitespace.
    const generated = JSON.parse(renderOpenApiDocument()) as unknown;

    // Assess
    expect(JSON.parse(readFileSync(COMMITTED, 'utf8'))).toEqual(generated);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    // Act
    const result = await validate(structuredClone(buildOpenApiDocument()) as never);

    // Assess
    expect(result.valid ? [] : result.errors.map((e) => e.message)).toEqual([]);
    expect(result.specification).toBe('OpenAPI');
    expect((buildOpenApiDocument() as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('describes every route the stack exposes, and the receipts and confirmation routes', () => {
    // Prepare
    const doc = buildOpenApiDocument() as Doc;

    // Act
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );

    // Assess
    for (const route of API_ROUTES) expect(documented).toContain(`${route.method} ${route.path}`);
    expect(documented).toContain('POST /v1/receipts/twilio');
    expect(documented).toContain('POST /v1/notifications/{idempotency_key}/confirmation');
    expect(documented).toHaveLength(OPENAPI_ROUTES.length);
  });

  it('takes the request body from the handler’s zod schema and the answers from the view schemas', () => {
    // Prepare
    const doc = buildOpenApiDocument() as Doc;
    const request = doc.components.schemas.NotificationRequest;
    const view = doc.components.schemas.NotificationView;

    // Assess: locale has a default, so a caller may omit it (the schema as input).
    expect(request?.required?.sort()).toEqual(
      ['channel', 'destination', 'event_id', 'expires_at', 'params', 'template'].sort(),
    );
    expect(Object.keys(view?.properties ?? {})).toContain('destination_fingerprint');
    expect(Object.keys(view?.properties ?? {})).not.toContain('destination');
    const admit = doc.paths['/v1/notifications']?.post;
    expect(Object.keys(admit?.responses ?? {}).sort()).toEqual(
      ['200', '202', '400', '409', '413', '415', '422', '429', '500', '503'].sort(),
    );
    expect(JSON.stringify(admit?.responses['202'])).toContain('Location');
    expect(JSON.stringify(admit?.responses['503'])).toContain('Retry-After');
  });

  it('marks the Twilio receipts route public with a form body, and everything else SigV4', () => {
    // Prepare
    const doc = buildOpenApiDocument() as Doc & { security: unknown[] };
    const receipts = doc.paths['/v1/receipts/twilio']?.post;
    const confirmation = doc.paths['/v1/notifications/{idempotency_key}/confirmation']?.post;

    // Assess
    expect(doc.security).toEqual([{ sigv4: [] }]);
    expect(receipts?.security).toEqual([]);
    expect(Object.keys(receipts?.requestBody?.content ?? {})).toEqual(['application/x-www-form-urlencoded']);
    expect(Object.keys(receipts?.responses ?? {}).sort()).toEqual(['200', '403', '500']);
    expect(confirmation?.security).toBeUndefined();
    expect(Object.keys(confirmation?.responses ?? {})).toEqual(expect.arrayContaining(['200', '404']));
  });
});
