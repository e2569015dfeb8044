import { describe, expect, it } from 'vitest';
import {
  countSegments,
  parseHosts,
  resetUrlProblem,
  resetUrlShapeProblem,
} from '../../../shared/domain/sms-body.js';
import { renderBody } from '../../../shared/domain/templates.js';

describe('reset_url rules', () => {
  it.each([
    'https://id.example.com/reset?token=tok_9f8e7d6c5b4a',
    'https://id.example.com/r#frag',
    'https://192.0.2.1/r',
  ])('accepts %s', (url) => {
    expect(resetUrlProblem(url, [])).toBeUndefined();
  });

  it.each([
    ['http', 'http://id.example.com/r', /https/],
    ['a javascript URL', 'javascript:alert(1)', /https/],
    ['no scheme', 'id.example.com/r', /https/],
    ['userinfo', 'https://user:pass@id.example.com/r', /user name or password/],
    ['a bare user name', 'https://user@id.example.com/r', /user name or password/],
    ['a space', 'https://id.example.com/r?t=a b', /whitespace/],
    ['a tab', 'https://id.example.com/r\t', /whitespace/],
    ['a newline', 'https://id.example.com/r\nfree text', /whitespace/],
    ['a NUL', 'https://id.example.com/r\u0000', /control/],
    ['a right-to-left override', 'https://id.example.com/r\u202Egpj.exe', /bidi/],
    ['a right-to-left isolate', 'https://id.example.com/r\u2067x', /bidi/],
    ['a zero-width joiner', 'https://id.exa\u200Dmple.com/r', /bidi/],
    ['513 characters', `https://id.example.com/r?t=${'a'.repeat(513 - 27)}`, /512/],
    ['an explicit port', 'https://id.example.com:8443/r', /port/],
    ['the default port written out', 'https://id.example.com:443/r', /port/],
    ['an empty port', 'https://id.example.com:/r', /port/],
    ['a port before a backslash path', 'https://id.example.com:8443\\r', /port/],
    ['a port after userinfo-like text in the path', 'https://id.example.com:1/a@b', /port/],
    ['a Cyrillic a among Latin letters', 'https://p\u0430ypal.com/r', /mixes scripts/],
    ['the same homograph written as punycode', 'https://xn--pypal-4ve.com/r', /mixes scripts/],
    ['a Greek omicron among Latin letters', 'https://g\u03BFogle.com/r', /mixes scripts/],
    [
      'a whole-script Cyrillic look-alike',
      'https://\u0430\u0440\u0440\u04CF\u0435.com/r',
      /internationalized/,
    ],
    ['a Latin IDN not on a list', 'https://xn--bcher-kva.example/r', /internationalized/],
  ])('refuses %s', (_name, url, message) => {
    expect(resetUrlProblem(url, [])).toMatch(message);
  });

  it('accepts exactly 512 characters', () => {
    const url = `https://id.example.com/r?t=${'a'.repeat(512 - 27)}`;
    expect(url).toHaveLength(512);
    expect(resetUrlProblem(url, [])).toBeUndefined();
  });

  it('checks the host against RESET_URL_HOSTS when set (case-insensitive)', () => {
    const hosts = parseHosts('ID.Example.com, login.example.com', 'RESET_URL_HOSTS');
    expect(resetUrlProblem('https://id.example.com/r', hosts)).toBeUndefined();
    expect(resetUrlProblem('https://ID.EXAMPLE.COM/r', hosts)).toBeUndefined();
    expect(resetUrlProblem('https://id.example.com.evil.example/r', hosts)).toMatch(/host/);
    expect(resetUrlProblem('https://evil.example/r', hosts)).toMatch(/host/);
  });

  it('never echoes the URL in its message', () => {
    const url = 'https://user:secret-token@id.example.com/r';
    expect(resetUrlProblem(url, [])).not.toContain('secret-token');
  });

  it('accepts an internationalized host only when the allow-list names it exactly', () => {
    const hosts = parseHosts('b\u00FCcher.example, id.example.com', 'RESET_URL_HOSTS');
    expect(hosts).toContain('xn--bcher-kva.example');
    expect(resetUrlProblem('https://b\u00FCcher.example/r', hosts)).toBeUndefined();
    expect(resetUrlProblem('https://xn--bcher-kva.example/r', hosts)).toBeUndefined();
    expect(resetUrlProblem('https://b\u00FCcher.example.evil.example/r', hosts)).toMatch(/internationalized/);
  });

  it('allows the scripts Japanese writes together, and refuses a mixed-script label even when listed', () => {
    expect(resetUrlShapeProblem('https://\u65E5\u672C\u30C6\u30B9\u30C8abc.jp/r')).toBeUndefined();
    expect(() => parseHosts('p\u0430ypal.com', 'RESET_URL_HOSTS')).toThrow(
      /RESET_URL_HOSTS: a host mixes scripts/,
    );
  });

  it.each([
    ['a port', 'id.example.com:8443'],
    ['a path', 'id.example.com/r'],
    ['a wildcard', '*.example.com'],
  ])('refuses a host allow-list entry with %s, naming the setting', (_name, entry) => {
    expect(() => parseHosts(entry, 'RESET_URL_HOSTS')).toThrow(/RESET_URL_HOSTS: .*bare host/);
  });
});

describe('SMS segments (GSM-7 vs UCS-2)', () => {
  it.each([
    ['', 'GSM-7', 0, 1],
    ['a'.repeat(160), 'GSM-7', 160, 1],
    ['a'.repeat(161), 'GSM-7', 161, 2],
    ['a'.repeat(306), 'GSM-7', 306, 2],
    ['a'.repeat(307), 'GSM-7', 307, 3],
    ['€'.repeat(80), 'GSM-7', 160, 1],
    [`${'a'.repeat(159)}[`, 'GSM-7', 161, 2],
    ['é ñ ü à Ä', 'GSM-7', 9, 1],
    ['ó'.repeat(70), 'UCS-2', 70, 1],
    ['ó'.repeat(71), 'UCS-2', 71, 2],
    ['ó'.repeat(134), 'UCS-2', 134, 2],
    ['ó'.repeat(135), 'UCS-2', 135, 3],
    ['😀'.repeat(35), 'UCS-2', 70, 1],
  ])('counts %j', (body, encoding, units, segments) => {
    expect(countSegments(body)).toEqual({ encoding, units, segments });
  });

  it('counts the real templates: an English code fits one segment, Spanish needs UCS-2', () => {
    expect(countSegments(renderBody('password_reset', 'en', { code: '483920' }))).toMatchObject({
      encoding: 'GSM-7',
      segments: 1,
    });
    expect(countSegments(renderBody('password_reset', 'es', { code: '483920' }))).toMatchObject({
      encoding: 'UCS-2',
      segments: 2,
    });
  });
});
