/** `npm run regress -- show`: the readable report of each file, and its HTML page with --html. */
import path from 'node:path';
import { formatReport, formatUnreturnedReport } from '../harness/report.js';
import { writeHtmlReport } from '../report/html.js';
import { replayRegression } from '../harness/regression.js';
import { COMMANDS, parseCommand, UsageError } from './args.js';
import { showHelp } from './regress-help.js';
import { loadFile, project, regressionFiles, shown } from './regress-files.js';
import { WATCHDOG_CHECKS } from './watchdog.js';

export async function show(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress show'], argv, showHelp);
  if (args.positionals.length === 0)
    throw new UsageError('show needs one or more regression files');
  const known = await project(args.values.config);
  const mutants = await known.registry.mutants();
  const files = regressionFiles(known, args.positionals);
  const htmlOut = args.values.html;
  if (htmlOut !== undefined && files.length !== 1)
    throw new UsageError(`--html writes the report of one file; got ${files.length}`);
  for (const file of files) {
    const { regression, system } = await loadFile(known, file);
    const notes = [
      `file:    ${shown(file)}`,
      `about:   ${regression.description}`,
      ...(regression.catches.length > 0
        ? [`catches: ${regression.catches.join(', ')} (shown against ${regression.catches[0]})`]
        : []),
    ];
    if (WATCHDOG_CHECKS.includes(regression.origin.check ?? '')) {
      if (htmlOut !== undefined)
        throw new UsageError(
          `${shown(file)} records a ${regression.origin.check}: its report is not replayed here, so it has no HTML page (use regress replay)`,
        );
      // Running it here could hang: list it as recorded.
      console.log(
        formatUnreturnedReport(
          `${regression.origin.check?.toUpperCase()} ${regression.system}: ${regression.description}`,
          notes,
          regression.config,
          regression.commands,
        ),
      );
      continue;
    }
    // A file that catches a mutant is shown failing against it; otherwise against the implementation.
    const mutant = mutants.find((candidate) => candidate.name === regression.catches[0]);
    const result = replayRegression(
      file,
      { ...regression, catches: [] },
      system,
      mutants,
      mutant?.createImpl,
    );
    const runOptions = mutant === undefined ? {} : { implFactory: mutant.createImpl };
    // It passes: show the sequence and the answers anyway.
    const passing = {
      system: system.name,
      config: regression.config,
      step: -1,
      command: { op: '(none)' },
      check: '(none)',
      checks: [],
      message: 'every check holds on this sequence',
      modelObservation: null,
      implObservation: null,
      diff: [],
    };
    const input = {
      system,
      failure: result.real.ok ? passing : result.real.failure,
      commands: regression.commands,
      runOptions,
      title: result.real.ok ? 'PASSES' : 'REGRESSION',
      notes,
    };
    if (!result.real.ok) console.log(formatReport(input));
    else
      console.log(
        formatReport(input).replace(
          /^PASSES (\S+): check .*$/m,
          `PASSES $1: every check holds over ${regression.commands.length} commands`,
        ),
      );
    if (htmlOut !== undefined) {
      writeHtmlReport(htmlOut, input);
      console.log(`wrote ${shown(path.resolve(htmlOut))}`);
    }
  }
  return 0;
}
