/**
 * `npm run schemas`: writes the JSON Schemas of the files the tools write and read, from the same
 * TypeBox declarations that validate them: regression.schema.json (one branch per system, with
 * its config and commands) and campaign-summary.schema.json. Without --out: the package's
 * schema/ folder, for the built-in systems (a test fails when the committed files are not what
 * this writes). With --out: a folder of your project, for the systems of its config too.
 */
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { REGRESSION_SCHEMA_FILE } from '../harness/regression.js';
import { writeFileAtomic } from '../harness/files.js';
import { schemaFiles } from '../systems/schemas.js';
import { loadProject } from '../project.js';
import { COMMANDS, parseCommand, runMain } from './args.js';

const HELP = `usage: npm run schemas -- [--out DIR] [--config FILE]

Writes regression.schema.json and campaign-summary.schema.json from the declarations that
validate the files.

  --out DIR      write them here, for the systems of the project's config and the built-in ones
                 (default: the package's schema/ folder, built-in systems only)
  --config FILE  the project's config file (default: gpumv.config.* found walking up)
  -h, --help     this help`;

await runMain(async () => {
  const args = parseCommand(COMMANDS.schemas, process.argv.slice(2), HELP);
  const out = args.values.out;
  const dir = out === undefined ? path.dirname(REGRESSION_SCHEMA_FILE) : path.resolve(out);
  const systems =
    out === undefined
      ? undefined
      : (
          await loadProject(
            args.values.config === undefined ? {} : { configFile: args.values.config },
          )
        ).registry.systems;
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(schemaFiles(systems))) {
    writeFileAtomic(path.join(dir, name), text);
    console.log(`wrote ${path.relative(process.cwd(), path.join(dir, name))}`);
  }
  return 0;
});
