/**
 * Durable whole-file writes: a reader, or a crash at any moment, sees the old file or the new
 * one, never a truncated file, and no temp file is left behind by a failed write.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';

let counter = 0;

/**
 * Writes `text` to `file` atomically: into a temp file in the same folder (named by pid, thread
 * and a counter, so concurrent writers never share one), fsynced, renamed over `file`, then the
 * folder fsynced so the rename itself survives a power cut. On any error the temp file is
 * removed and the error rethrown; `file` then keeps its old content. The folder must exist.
 */
export function writeFileAtomic(file: string, text: string): void {
  const dir = path.dirname(path.resolve(file));
  const temp = path.join(
    dir,
    `.${path.basename(file)}.${process.pid}-${threadId}-${counter++}.tmp`,
  );
  let fd: number | undefined;
  let created = false;
  try {
    fd = openSync(temp, 'wx'); // fails rather than reuse a file someone else owns
    created = true;
    writeFileSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, file);
    created = false;
  } catch (error) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // The write's error is the one to report.
      }
    }
    if (created) rmSync(temp, { force: true });
    throw error;
  }
  fsyncDirectory(dir);
}

/** Makes a rename in `dir` durable. Platforms that cannot fsync a folder (Windows) are skipped. */
function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL') throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
