#!/usr/bin/env node
// Launcher for the `reset-notifier` operator CLI: plain JavaScript bundled by `npm run build:cli`
// (run by `npm ci` / `npm install` through `prepare`); no TypeScript loader at run time.
await import(new URL('../dist/cli.mjs', import.meta.url).href);
