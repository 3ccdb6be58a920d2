/** The help texts of `npm run regress`: the usage and description of each verb, and the whole help. */
import { REGRESSION_FORMAT } from '../harness/regression.js';

const SAVE_USAGE = `npm run regress -- save --system NAME --seed S --path P [--mutant M | --allocator MODULE]
                          [--slug NAME] [--description TEXT] [--out DIR] [--force]
       npm run regress -- save --finding FILE [--shrink [--timeout 10s]] [--slug NAME] [--out DIR] [--force]`;
const SAVE_TEXT = `save    Rebuilds the counterexample a failing property printed (same seed and path), shrinks
        it to a 1-minimal sequence and writes <regressions>/<system>/<slug>.json. With --mutant,
        the sequence is found against that mutant and the file records it in "catches", so
        the replay keeps checking that the mutant stays caught. With --allocator, the system is
        user-allocator built from your module. With --finding, a file a fuzz campaign wrote
        (under .fuzz/findings) is stored as it is. Existing files are kept unless --force. The
        date in "origin" is today (UTC), or SOURCE_DATE_EPOCH if set.`;
const REPLAY_USAGE = 'npm run regress -- replay [FILE|DIR ...] [--timeout 10s]';
const REPLAY_TEXT = `replay  Replays files (default: every file in the regressions folder) against the implementation
        (must pass) and every mutant each file names (must fail; the mutant it was found against
        must still fail first with the check recorded in origin.check). Exit 1 if any does not hold.
        A file recorded as a hang replays in a worker thread under --timeout.`;
const SHOW_USAGE = 'npm run regress -- show FILE ... [--html OUT.html]';
const SHOW_TEXT = `show    Prints the readable report of each file: system, config, the failed checks, the whole
        sequence with each step's answer from the model and the implementation, the failing step
        marked and the diff of the observations (for a file that passes: the sequence and answers).
        With --html OUT.html (one FILE), also writes the same report as one self-contained HTML
        page: a heap map (allocators) or a per-object timeline (residency systems) with the
        failing step marked and the ranges at fault highlighted; see docs/html-report.md.`;
const LIST_USAGE = 'npm run regress -- list [FILE|DIR ...]';
const LIST_TEXT = 'list    Lists the regression files with their system, length and mutants.';
const MIGRATE_USAGE = 'npm run regress -- migrate [FILE|DIR ...]';
const MIGRATE_TEXT = `migrate Rewrites files of an older format (default: every file in the regressions folder) in the
        current format ${REGRESSION_FORMAT}, keeping their content; files already current are left alone.`;
const CONFIG_TEXT = `Every command takes --config FILE (default: gpumv.config.{ts,mts,js,mjs} found walking up from
the working directory): your systems, mutants and regressions folder. Relative FILE arguments are
taken from the working directory, else from the project root (the config's folder).`;

export const HELP = `usage:
  ${SAVE_USAGE}
  ${REPLAY_USAGE}
  ${SHOW_USAGE}
  ${LIST_USAGE}
  ${MIGRATE_USAGE}

${SAVE_TEXT}
${REPLAY_TEXT}
${SHOW_TEXT}
${LIST_TEXT}
${MIGRATE_TEXT}

${CONFIG_TEXT}
Each command takes -h/--help.`;

export const SAVE_HELP = `usage: ${SAVE_USAGE}

${SAVE_TEXT}

  --system NAME       the system of the failing property (see npm run mutants -- --help for the list)
  --seed S            the seed it printed (an integer)
  --path P            the path it printed, like 12:0:3
  --mutant M          the sequence fails against this mutant (recorded in "catches")
  --allocator MODULE  the system is user-allocator built from this allocator module
  --finding FILE      store a campaign's finding file instead (no seed or path)
  --shrink            with --finding: shrink its case first (a campaign stopped by its budget or
                      a signal writes the best case so far): against the implementation, else
                      the mutant it was found with; a hang's candidates run in a watched worker
  --timeout D         with --shrink of a hang: each candidate's time limit (default 10s)
  --slug NAME         file name (default: the mutant's name, or <check>-<hash>)
  --description TEXT  (default: what the mutant breaks, or the check and step that fail)
  --out DIR           folder of the <system>/ folders (default: the config's regressions folder)
  --force             overwrite an existing file
  --config FILE       the project's config file

${CONFIG_TEXT}`;

export const replayHelp = `usage: ${REPLAY_USAGE}\n\n${REPLAY_TEXT}\n\n${CONFIG_TEXT}`;
export const showHelp = `usage: ${SHOW_USAGE}\n\n${SHOW_TEXT}\n\n  --html OUT.html  write the HTML report of the one FILE to OUT.html\n  --config FILE    the project's config file\n\n${CONFIG_TEXT}`;
export const listHelp = `usage: ${LIST_USAGE}\n\n${LIST_TEXT}\n\n${CONFIG_TEXT}`;
export const migrateHelp = `usage: ${MIGRATE_USAGE}\n\n${MIGRATE_TEXT}\n\n${CONFIG_TEXT}`;
