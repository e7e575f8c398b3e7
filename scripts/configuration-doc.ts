// npm run docs:settings: writes docs/configuration.md from the settings' schema
// (src/relay/settings/schema.ts). test/unit/relay/settings/docs.test.ts fails when they differ.
import { writeFileSync } from 'node:fs';
import { configurationDoc } from '../src/relay/settings/docs.js';

writeFileSync('docs/configuration.md', configurationDoc());
console.log('docs/configuration.md written from src/relay/settings/schema.ts');
