import { App } from 'aws-cdk-lib';
import { defineApp } from './main.js';

// Entry point of `cdk synth` / `cdk deploy` (cdk.json: `npx tsx infra/app.ts`). The CLI passes the
// context from cdk.json and `-c`; the App synthesizes when the process exits.
defineApp(new App());
