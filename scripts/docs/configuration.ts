/** Writes docs/configuration.md from the settings table (`npm run docs:config`). */
import { writeFile } from 'node:fs/promises';
import { renderConfigurationDoc } from '../../shared/settings.js';

await writeFile(new URL('../../docs/configuration.md', import.meta.url), renderConfigurationDoc());
console.log('docs/configuration.md written from shared/settings.ts');
