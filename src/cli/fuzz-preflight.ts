/** The campaign's preflight (see preflight.ts), run in a watched worker, and what it prints. */
import { toolCommand } from '../harness/command-line.js';
import { fileSystemName } from './fuzz-targets.js';
import { rootRelative } from './fuzz-files.js';
import type { CampaignOptions } from './fuzz-options.js';
import type { PreflightResult } from './preflight.js';
import { campaignWorkerUrl, WatchedWorker, type WorkerInitFields } from './watchdog.js';

/**
 * The preflight in a watched worker: a stored regression that now loops or exhausts memory is
 * stopped by the campaign's time limit and reported as a problem of its file, instead of
 * hanging the campaign before it starts.
 */
function preflightInWorker(
  options: CampaignOptions,
  systems: ReadonlySet<string>,
  allocators: ReadonlySet<string>,
): Promise<PreflightResult> {
  const init: WorkerInitFields = {
    campaignSeed: options.seed,
    targets: options.targetSpec,
    configFile: options.project.configFile,
    cwd: options.project.root,
  };
  return new Promise((resolve, reject) => {
    let current: string | null = null;
    const worker: WatchedWorker = new WatchedWorker(campaignWorkerUrl(), init, options.timeoutMs, {
      message: (reply) => {
        if (reply.kind === 'ready')
          worker.post({
            kind: 'preflight',
            id: 1,
            systems: [...systems],
            allocators: [...allocators],
          });
        else if (reply.kind === 'preflight-file') current = reply.file;
        else if (reply.kind === 'preflight')
          void worker.terminate().then(() => resolve(reply.result));
        else if (reply.kind === 'error')
          void worker
            .terminate()
            .then(() => reject(new Error(`the preflight's worker failed: ${reply.error}`)));
      },
      death: (death) => {
        const where = current ?? '(loading the project)';
        resolve({
          files: 0,
          mutantReplays: 0,
          skipped: 0,
          ignored: [],
          failing: [],
          elapsedMs: 0,
          problems: [{ file: where, problems: [`${death.check}: ${death.detail}`] }],
        });
      },
    });
  });
}

/**
 * Runs the preflight (see preflight.ts) and says what it found. `holds` false stops the campaign;
 * `failing` files (bugs not fixed yet) let it run and end it as a finding would.
 */
export async function runCampaignPreflight(
  options: CampaignOptions,
): Promise<{ holds: boolean; failing: number }> {
  const systems = new Set(options.targets.map((target) => fileSystemName(target.system.name)));
  const { allocator, exec } = options.targetSpec;
  const allocators = new Set(
    allocator !== undefined
      ? [allocator]
      : exec !== undefined
        ? [exec]
        : [...options.project.allocators, ...options.project.executables],
  );
  const result = await preflightInWorker(options, systems, allocators);
  const shown = (file: string) => rootRelative(options.project.root, file);
  for (const { file, reason } of result.ignored)
    console.error(`warning: ${shown(file)}: ${reason}; skipped`);
  for (const { file, check, step, probe, judged } of result.failing) {
    if (probe === undefined) {
      console.log(
        `PREFLIGHT FAILING ${shown(file)}: fails against the implementation (${check} at step ${step}): a bug not fixed yet, or back`,
      );
    } else {
      console.log(
        `PREFLIGHT FAILING ${shown(file)}: ${(judged ?? []).join('; ')}, because the implementation itself changed: on its own it fails ` +
          `${probe.check} at step ${probe.step} of a ${probe.commands}-command case (${probe.message}); a bug of the implementation, not a judge ` +
          `that stopped judging. Keep its case: ${probe.save}`,
      );
    }
  }
  const skipped =
    result.skipped === 0
      ? ''
      : `, ${result.skipped} hang file${result.skipped === 1 ? '' : 's'} left to regress replay`;
  if (result.problems.length === 0) {
    const judged =
      result.mutantReplays === 0
        ? `none names a mutant, so no check was tested${skipped}`
        : `${result.mutantReplays} mutant replay${result.mutantReplays === 1 ? '' : 's'}, each caught by its recorded check${skipped}`;
    console.log(
      `preflight: ${result.files} stored regression${result.files === 1 ? '' : 's'} replayed; ${judged}; ${(result.elapsedMs / 1000).toFixed(1)} s` +
        (result.failing.length === 0
          ? ''
          : `; ${result.failing.length} fail against the implementation`),
    );
    return { holds: true, failing: result.failing.length };
  }
  for (const { file, problems } of result.problems)
    console.log(`PREFLIGHT ${shown(file)}: ${problems.join('; ')}`);
  console.log(
    `preflight: ${result.problems.length} of ${result.files} stored regressions do not hold, so the campaign did not start: ` +
      `a check no longer fires on the mutant that proves it (or a file cannot be read), and a campaign with a judge that ` +
      `does not judge finds nothing. Replay one with ${toolCommand('regress', 'replay FILE')}, or skip this with --no-preflight.`,
  );
  return { holds: false, failing: result.failing.length };
}
