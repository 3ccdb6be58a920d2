/** `npm run regress -- list`: the regression files with their system, length and mutants. */
import { COMMANDS, parseCommand } from './args.js';
import { listHelp } from './regress-help.js';
import { loadFile, project, regressionFiles, shown } from './regress-files.js';

export async function list(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress list'], argv, listHelp);
  const known = await project(args.values.config);
  for (const file of regressionFiles(known, args.positionals)) {
    const { regression } = await loadFile(known, file);
    console.log(
      `${shown(file)}  ${regression.system}  ${regression.commands.length} commands  ${regression.catches.join(',')}`,
    );
  }
  return 0;
}
