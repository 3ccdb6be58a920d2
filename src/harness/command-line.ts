/**
 * The spelling of the commands the tools print (replay, save, list hints), so that a printed
 * command runs where it is printed: `npm run regress -- replay F` in this repository (its
 * package.json has the scripts), `npx gpumv regress replay F` in a user's project, where the
 * package is installed and only its `gpumv` binary exists.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../package-root.js';

export type CommandContext = 'repository' | 'installed';
export type Tool = 'fuzz' | 'regress' | 'mutants' | 'bench' | 'schemas';

function inside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * 'repository' when this code runs from a checkout of the package (not from a node_modules
 * folder, with its sources present) and the working directory is inside that checkout;
 * 'installed' otherwise (a user's project, or any folder outside the checkout).
 */
export function commandContext(cwd: string = process.cwd()): CommandContext {
  const installed = PACKAGE_ROOT.split(path.sep).includes('node_modules');
  const checkout = existsSync(path.join(PACKAGE_ROOT, 'src', 'cli', 'fuzz.ts'));
  return !installed && checkout && inside(PACKAGE_ROOT, path.resolve(cwd))
    ? 'repository'
    : 'installed';
}

/** `npm run regress -- save ...` in this repository, `npx gpumv regress save ...` elsewhere. */
export function toolCommand(
  tool: Tool,
  args: string,
  context: CommandContext = commandContext(),
): string {
  const rest = args === '' ? '' : ` ${args}`;
  return context === 'repository' ? `npm run ${tool} --${rest}` : `npx gpumv ${tool}${rest}`;
}

/** Rewrites `npm run <tool> --` in a text (help, usage) into the spelling of `context`. */
export function respellCommands(text: string, context: CommandContext = commandContext()): string {
  if (context === 'repository') return text;
  return text
    .replace(/npm run (fuzz|regress|mutants|bench|schemas) --(?= |$|\n|`|'|\))/g, 'npx gpumv $1')
    .replace(/npm run (fuzz|regress|mutants|bench|schemas)\b/g, 'npx gpumv $1');
}
