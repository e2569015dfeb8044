/**
 * Rules on what goes into an SMS body (docs/design.md#abuse-limits): a safe reset URL, and a rendered body
 * of bounded cost. Pure; the HTTP layer turns a problem into a field error.
 */

import { domainToUnicode } from 'node:url';
import { InvalidConfigurationError } from './errors.js';

/** Longest `reset_url` accepted. */
const MAX_RESET_URL_LENGTH = 512;

/** What `MAX_SMS_SEGMENTS` defaults to. */
export const DEFAULT_MAX_SMS_SEGMENTS = 3;

// Whitespace, control, format (bidi overrides, zero-width) and line/paragraph separator characters.
const UNSAFE_CHARACTER = /[\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Why `raw` is not an acceptable reset URL by its shape alone, or undefined when it is: https only,
 * no userinfo, no explicit port (a link to `:8443` is not the site its name says), nothing invisible
 * or direction-changing (it would mislead the reader of the SMS), no label that mixes scripts
 * (a Cyrillic `а` among Latin letters is a homograph), at most {@link MAX_RESET_URL_LENGTH}
 * characters. The deployment's host rules are {@link resetUrlProblem}'s. The message never echoes the value.
 */
export function resetUrlShapeProblem(raw: string): string | undefined {
  if (raw.length > MAX_RESET_URL_LENGTH) return `must be at most ${MAX_RESET_URL_LENGTH} characters`;
  if (UNSAFE_CHARACTER.test(raw)) return 'must not contain whitespace, control or bidi characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an https URL';
  }
  if (url.protocol !== 'https:' || !/^https:\/\//i.test(raw) || url.hostname === '') {
    return 'must be an https URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  // WHATWG URL drops a default port (`:443`) and an empty one (`:`): look at what was written.
  if (writtenPort(raw)) return 'must not contain a port';
  if (hostProblem(url.hostname) !== undefined) return 'has a host that mixes scripts or is not valid';
  return undefined;
}

/**
 * Why `raw` is not an acceptable reset URL for this deployment, or undefined when it is: the shape
 * rules of {@link resetUrlShapeProblem}, an internationalized host (non-ASCII, or written as
 * `xn--` punycode) only when `allowedHosts` names it exactly, and, when `allowedHosts` is not
 * empty, one of those hosts. An empty list (the local stack's default) allows any ASCII host.
 */
export function resetUrlProblem(raw: string, allowedHosts: readonly string[]): string | undefined {
  const shape = resetUrlShapeProblem(raw);
  if (shape !== undefined) return shape;
  const host = new URL(raw).hostname;
  if (!allowedHosts.includes(host)) {
    if (isInternationalized(host)) return 'has an internationalized host that is not on the allow-list';
    if (allowedHosts.length > 0) return 'has a host that is not allowed';
  }
  return undefined;
}

/** Whether the URL's authority, as written, ends in `:digits` or `:` (after an IPv6 literal's `]`). */
function writtenPort(raw: string): boolean {
  const authority = /^https:\/\/([^/\\?#]*)/i.exec(raw)?.[1] ?? '';
  const hostAndPort = authority.slice(authority.lastIndexOf('@') + 1);
  return /:\d*$/.test(hostAndPort.slice(hostAndPort.lastIndexOf(']') + 1));
}

/** A host written with any non-ASCII letter reaches us as `xn--` labels (WHATWG URL's ToASCII). */
function isInternationalized(host: string): boolean {
  return host.split('.').some((label) => label.startsWith('xn--'));
}

// Scripts a host label may combine (UTS #39 "Highly Restrictive": Latin with the scripts written
// alongside it in Japanese, Chinese and Korean); any other mix is refused.
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Devanagari',
  'Thai',
  'Georgian',
  'Hangul',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
] as const;
type Script = (typeof SCRIPTS)[number] | 'Other';
const SCRIPT_PATTERNS = SCRIPTS.map((script) => [script, new RegExp(`\\p{Script=${script}}`, 'u')] as const);
const ALLOWED_MIXES: readonly ReadonlySet<Script>[] = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

/** The script of a letter, or undefined for digits, `-` and combining marks (they go with any script). */
function scriptOf(char: string): Script | undefined {
  if (!/\p{L}/u.test(char)) return undefined;
  return SCRIPT_PATTERNS.find(([, pattern]) => pattern.test(char))?.[0] ?? 'Other';
}

/** Why a label mixes scripts, judged on its Unicode form (`xn--` decoded), or undefined. */
function labelProblem(label: string): string | undefined {
  const unicode = label.startsWith('xn--') ? domainToUnicode(label) : label;
  if (unicode === '' || unicode.startsWith('xn--')) return 'is not valid punycode';
  const scripts = new Set([...unicode].map(scriptOf).filter((s): s is Script => s !== undefined));
  if (scripts.size <= 1) return undefined;
  if (scripts.has('Other')) return 'mixes scripts';
  return ALLOWED_MIXES.some((mix) => [...scripts].every((s) => mix.has(s))) ? undefined : 'mixes scripts';
}

/** Why a host (ASCII form) is refused whatever the allow-list says, or undefined. */
function hostProblem(host: string): string | undefined {
  for (const label of host.split('.')) {
    const problem = labelProblem(label);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Parses a host allow-list (comma-separated host names, compared in their ASCII form; empty = no
 * list): each entry a bare host, without port, path or a label that mixes scripts. `name` is the
 * setting's name for the error.
 */
export function parseHosts(raw: string, name: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .map((entry) => {
      let host: string;
      try {
        host = new URL(`https://${entry}`).hostname;
      } catch {
        throw new InvalidConfigurationError(`${name}: an entry is not a host name`);
      }
      if (/[/:?#@\\*]/.test(entry) || host === '') {
        throw new InvalidConfigurationError(
          `${name}: an entry is not a bare host name (no port, path or wildcard)`,
        );
      }
      const problem = hostProblem(host);
      if (problem !== undefined) throw new InvalidConfigurationError(`${name}: a host ${problem}`);
      return host;
    });
}

// GSM 03.38 default alphabet (without ESC) and its extension table (each costs two septets).
const GSM_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM_EXTENSION = new Set('^{}\\[~]|€\f');

/** How a body is encoded and how many segments it takes. */
export interface SegmentCount {
  readonly encoding: 'GSM-7' | 'UCS-2';
  /** Septets (GSM-7) or UTF-16 code units (UCS-2). */
  readonly units: number;
  readonly segments: number;
}

/**
 * Segments of an SMS body: GSM-7 when every character is in the default alphabet or its extension
 * (extension characters count double), 160 septets in one segment or 153 per part when
 * concatenated; UCS-2 otherwise, 70 code units or 67 per part (a character outside the BMP counts 2).
 */
export function countSegments(body: string): SegmentCount {
  let septets = 0;
  let gsm = true;
  for (const char of body) {
    if (GSM_BASIC.has(char)) septets += 1;
    else if (GSM_EXTENSION.has(char)) septets += 2;
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) {
    return { encoding: 'GSM-7', units: septets, segments: septets <= 160 ? 1 : Math.ceil(septets / 153) };
  }
  const units = body.length;
  return { encoding: 'UCS-2', units, segments: units <= 70 ? 1 : Math.ceil(units / 67) };
}
