import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderOpenApiDocument } from '../shared/http/openapi.js';

/** `npm run openapi`: writes docs/openapi.json from the API's zod schemas (commit the result). */
const target = resolve(import.meta.dirname, '..', 'docs', 'openapi.json');
writeFileSync(target, renderOpenApiDocument());
console.log(`wrote ${target}`);
