#!/usr/bin/env node
// Launcher for the `reset-notifier` operator CLI: registers tsx, then runs the TypeScript source.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../scripts/cli/main.ts', import.meta.url).href);
