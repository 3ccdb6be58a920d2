/**
 * `npm run regress -- save|replay|show|list|migrate`: turn a failing property or a campaign's
 * finding into a stored regression, and replay, show and list regression files. Every command
 * reads the project's config (gpumv.config.*): its systems, mutants and regressions folder.
 */
import { COMMANDS, HelpRequested, parseCommand, runMain, UsageError } from './args.js';
import { HELP } from './regress-help.js';
import { list } from './regress-list.js';
import { migrate } from './regress-migrate.js';
import { replay } from './regress-replay.js';
import { save } from './regress-save.js';
import { show } from './regress-show.js';

export { lookup, regressionFiles } from './regress-files.js';

await runMain(async () => {
  const [verb, ...rest] = process.argv.slice(2);
  if (verb === undefined) {
    console.log(HELP);
    return 2;
  }
  if (verb === 'help') throw new HelpRequested(HELP);
  // An option before the verb: -h/--help prints the help, anything else is unknown.
  if (verb.startsWith('-')) parseCommand(COMMANDS.regress, [verb], HELP);
  if (verb === 'save') return save(rest);
  if (verb === 'replay') return replay(rest);
  if (verb === 'show') return show(rest);
  if (verb === 'list') return list(rest);
  if (verb === 'migrate') return migrate(rest);
  throw new UsageError(
    `unknown command '${verb}'; use save, replay, show, list or migrate (see npm run regress -- --help)`,
  );
});
