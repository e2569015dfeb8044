import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every `docs/<file>.md#<anchor>` that code, the README or the docs cite points at something: an
 * explicit `<a id="...">` or a heading (GitHub's slug of it). Comments link to
 * `docs/design.md#states` rather than "DESIGN.md section 4", so a moved or renamed section fails here.
 */
const CODE_ROOTS = ['shared', 'functions', 'infra', 'local', 'scripts', 'bench', 'test'];
/** This file, whose examples are not citations. */
const SELF = 'test/unit/architecture/doc-anchors.test.ts';

async function filesUnder(dir: string, extension: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(extension) && !e.parentPath.includes('node_modules'))
    .map((e) => join(e.parentPath, e.name))
    .filter((file) => file !== SELF)
    .sort();
}

/** GitHub's heading slug: lower case, punctuation dropped (not `-` or `_`), each space a hyphen. */
function slugOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown file offers: explicit ids and names, and its headings' slugs. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] as string);
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? undefined : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = slugOf(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Citation {
  readonly from: string;
  readonly target: string;
  readonly anchor: string;
}

/** `docs/x.md#a` anywhere in a file (paths from the repository root). */
function rootCitations(from: string, text: string): Citation[] {
  return [...text.matchAll(/(?<![\w./-])(docs\/[\w./-]+\.md)#([\w-]+)/g)].map((m) => ({
    from,
    target: m[1] as string,
    anchor: m[2] as string,
  }));
}

/** `[text](other.md#a)` and `[text](#a)` in a markdown file (paths from that file's folder). */
function relativeCitations(from: string, text: string): Citation[] {
  return [...text.matchAll(/\]\(([^)\s#]*)#([\w-]+)\)/g)]
    .filter((m) => m[1] === '' || (m[1] as string).endsWith('.md'))
    .map((m) => ({
      from,
      target: m[1] === '' ? from : normalize(join(dirname(from), m[1] as string)),
      anchor: m[2] as string,
    }));
}

async function allCitations(): Promise<Citation[]> {
  const code = (await Promise.all(CODE_ROOTS.map((root) => filesUnder(root, '.ts')))).flat();
  const markdown = ['README.md', ...(await filesUnder('docs', '.md'))];
  const citations: Citation[] = [];
  for (const file of code) citations.push(...rootCitations(file, await readFile(file, 'utf8')));
  for (const file of markdown) {
    const text = await readFile(file, 'utf8');
    citations.push(...rootCitations(file, text), ...relativeCitations(file, text));
  }
  return citations;
}

describe('doc anchors', () => {
  it('gives headings the slugs GitHub gives them', () => {
    // Act
    const anchors = anchorsOf(
      [
        '## 6. Reconciler under pressure (issue 12)',
        '### `reason_detail`: the why next to the reason',
        '## A [linked](x.md) heading',
        '```',
        '# not a heading',
        '```',
        '## 6. Reconciler under pressure (issue 12)',
        '<a id="states"></a>',
      ].join('\n'),
    );

    // Assess
    expect([...anchors].sort()).toEqual([
      '6-reconciler-under-pressure-issue-12',
      '6-reconciler-under-pressure-issue-12-1',
      'a-linked-heading',
      'reason_detail-the-why-next-to-the-reason',
      'states',
    ]);
  });

  it('every docs/<file>.md#<anchor> cited in code and docs exists', async () => {
    // Prepare
    const citations = await allCitations();
    const anchors = new Map<string, Set<string>>();

    // Act
    const broken: string[] = [];
    for (const { from, target, anchor } of citations) {
      if (!existsSync(target)) {
        broken.push(`${from}: ${target}#${anchor} (no such file)`);
        continue;
      }
      if (!anchors.has(target)) anchors.set(target, anchorsOf(await readFile(target, 'utf8')));
      if (!anchors.get(target)?.has(anchor)) broken.push(`${from}: ${target}#${anchor}`);
    }

    // Assess
    expect(citations.length).toBeGreaterThan(40);
    expect(broken).toEqual([]);
  });

  it('no comment cites the contract by section number', async () => {
    // Prepare
    const code = (await Promise.all(CODE_ROOTS.map((root) => filesUnder(root, '.ts')))).flat();

    // Act
    const numbered: string[] = [];
    for (const file of code) {
      const text = await readFile(file, 'utf8');
      for (const m of text.matchAll(/DESIGN\.md,? (?:sections?|promise) \d/g))
        numbered.push(`${file}: ${m[0]}`);
    }

    // Assess
    expect(numbered).toEqual([]);
  });
});
