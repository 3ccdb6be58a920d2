/**
 * `npm run schemas`: writes the JSON Schemas of the files the tools write and read, from the same
 * TypeBox declarations that validate them: schema/regression.schema.json (one branch per
 * system, with its config and commands) and schema/campaign-summary.schema.json. A test fails
 * when the committed files are not what this writes.
 */
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { REGRESSION_SCHEMA_FILE } from '../harness/regression';
import { writeFileAtomic } from '../harness/files';
import { schemaFiles } from '../systems/schemas';

const dir = path.dirname(REGRESSION_SCHEMA_FILE);
mkdirSync(dir, { recursive: true });
for (const [name, text] of Object.entries(schemaFiles())) {
  writeFileAtomic(path.join(dir, name), text);
  console.log(`wrote ${path.relative(process.cwd(), path.join(dir, name))}`);
}
