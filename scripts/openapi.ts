import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderOpenApiDocument } from '../shared/http/openapi.js';

/**
 * `npm run openapi`: writes docs/openapi.json from the API's zod schemas (commit the result), in
 * the repository's JSON format (Biome), so `npm run lint` stays clean on the generated file.
 */
const root = resolve(import.meta.dirname, '..');
const target = resolve(root, 'docs', 'openapi.json');
writeFileSync(target, renderOpenApiDocument());
const biome = spawnSync(resolve(root, 'node_modules', '.bin', 'biome'), ['format', '--write', target], {
  cwd: root,
  encoding: 'utf8',
});
if (biome.status !== 0) {
  console.error(biome.stderr || biome.stdout);
  process.exit(1);
}
console.log(`wrote ${target}`);
