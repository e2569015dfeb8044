import { describe, expect, it } from 'vitest';
import {
  classifySnsPublishError,
  SNS_PUBLISH_ERROR_CLASSIFICATION,
} from '../../../shared/providers/sns/classification.js';

const KINDS = new Set(['not_sent_retryable', 'not_sent_permanent', 'unknown']);
const error = (props: { name?: string; code?: string; status?: number }) =>
  Object.assign(new Error('message text that must not leak'), {
    ...(props.name === undefined ? {} : { name: props.name }),
    ...(props.code === undefined ? {} : { code: props.code }),
    ...(props.status === undefined ? {} : { $metadata: { httpStatusCode: props.status } }),
  });

describe('SNS Publish error classification table', () => {
  it('maps every entry to one of the three outcomes, and falls back to unknown', () => {
    const { byName, byNetworkCode, byHttpStatus, byHttpStatusClass, fallback } =
      SNS_PUBLISH_ERROR_CLASSIFICATION;
    for (const kind of [byName, byNetworkCode, byHttpStatus, byHttpStatusClass].flatMap((t) =>
      Object.values(t),
    )) {
      expect(KINDS.has(kind)).toBe(true);
    }
    expect(fallback).toBe('unknown');
  });

  it('prefers the error name over the HTTP status', () => {
    expect(classifySnsPublishError(error({ name: 'InvalidParameterException', status: 500 })).kind).toBe(
      'not_sent_permanent',
    );
  });

  it('uses the status class for names it does not know: 4xx refused, 5xx maybe accepted', () => {
    expect(classifySnsPublishError(error({ name: 'BrandNewException', status: 404 }))).toEqual({
      kind: 'not_sent_retryable',
      detail: 'sns:BrandNewException:http_404',
      timedOut: false,
    });
    expect(classifySnsPublishError(error({ name: 'BrandNewException', status: 502 })).kind).toBe('unknown');
    expect(classifySnsPublishError(error({ status: 408 }))).toMatchObject({
      kind: 'unknown',
      timedOut: true,
    });
  });

  it('treats a missing response as unknown, and socket timeouts as timed out', () => {
    expect(classifySnsPublishError(error({ code: 'ETIMEDOUT' }))).toEqual({
      kind: 'unknown',
      detail: 'sns:ETIMEDOUT',
      timedOut: true,
    });
    expect(classifySnsPublishError(undefined)).toEqual({
      kind: 'unknown',
      detail: 'sns:unrecognised_error',
      timedOut: false,
    });
    expect(classifySnsPublishError('a string')).toMatchObject({ kind: 'unknown' });
  });

  it('never copies the error message into the detail', () => {
    const detail = classifySnsPublishError(error({ name: 'ThrottledException', status: 400 })).detail;
    expect(detail).toBe('sns:ThrottledException');
    expect(detail).not.toContain('leak');
  });
});
