import { describe, expectTypeOf, it } from 'vitest';
import type {
  AdmitRequest,
  ApiErrorBody,
  EvidenceView,
  NotificationView,
} from '../../../shared/client/index.js';
import type { NotificationRequestBody } from '../../../shared/http/request-schema.js';
import type {
  ErrorBodyShape,
  EvidenceViewBody,
  NotificationViewBody,
} from '../../../shared/http/view-schema.js';

// The client restates the API's bodies so its published declarations need neither zod nor the
// handlers' types; these checks fail `tsc` the moment a schema and the client's type differ.
describe('the client types are the API schemas, field for field', () => {
  it('views, evidence and error bodies equal the zod schemas’ output types', () => {
    expectTypeOf<NotificationView>().toEqualTypeOf<NotificationViewBody>();
    expectTypeOf<EvidenceView>().toEqualTypeOf<EvidenceViewBody>();
    expectTypeOf<ApiErrorBody>().toEqualTypeOf<ErrorBodyShape>();
  });

  it('the admit request is the request schema’s input, locale optional', () => {
    type SchemaInput = Omit<NotificationRequestBody, 'locale'> & {
      locale?: NotificationRequestBody['locale'];
    };
    expectTypeOf<AdmitRequest>().toExtend<SchemaInput>();
    expectTypeOf<SchemaInput>().toExtend<AdmitRequest>();
    expectTypeOf<keyof AdmitRequest>().toEqualTypeOf<keyof SchemaInput>();
  });
});
