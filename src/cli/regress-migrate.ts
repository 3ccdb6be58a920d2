/** `npm run regress -- migrate`: files of an older format rewritten in the current one. */
import { writeRegression, REGRESSION_FORMAT } from '../harness/regression.js';
import { COMMANDS, parseCommand } from './args.js';
import { migrateHelp } from './regress-help.js';
import { loadFile, project, regressionFiles, shown } from './regress-files.js';

export async function migrate(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress migrate'], argv, migrateHelp);
  const known = await project(args.values.config);
  let migrated = 0;
  const files = regressionFiles(known, args.positionals);
  for (const file of files) {
    const { regression, format } = await loadFile(known, file);
    if (format === REGRESSION_FORMAT) continue;
    writeRegression(file, regression, true);
    migrated++;
    console.log(`migrated ${shown(file)} (format ${format} -> ${REGRESSION_FORMAT})`);
  }
  console.log(`${migrated} of ${files.length} files migrated`);
  return 0;
}
