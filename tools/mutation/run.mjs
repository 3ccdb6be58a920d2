#!/usr/bin/env node
/**
 * `npm run mutation` / `npm run mutation:incremental`: runs Stryker (stryker.config.mjs) with the
 * TypeScript 5.9 JavaScript API for Stryker's own use (see typescript-5.9-hooks.mjs). Arguments
 * are passed to `stryker run`, e.g. `--mutate src/residency/slot-pool.ts --incremental`.
 *
 * The hook is registered in this process before Stryker is loaded, so Stryker's main process
 * (the one that rewrites tsconfig.json into the sandbox) resolves `typescript` to 5.9; the test
 * runner processes Stryker forks run vitest and never import typescript.
 */
import { register } from 'node:module';

register('./typescript-5.9-hooks.mjs', import.meta.url);

const { default: ts } = await import('typescript-5.9');
if (typeof ts.parseConfigFileTextToJson !== 'function') {
  throw new Error(
    `tools/mutation: typescript-5.9 (${ts.version}) has no JavaScript API; Stryker needs one to rewrite tsconfig.json`,
  );
}

const { StrykerCli } = await import('@stryker-mutator/core');
process.title = 'stryker';
new StrykerCli([process.argv[0], 'stryker', 'run', ...process.argv.slice(2)]).run();
