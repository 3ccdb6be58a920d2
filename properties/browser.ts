/**
 * The system Chromium (Debian's `chromium` package) driven by playwright-core, for the HTML
 * report's browser tests: nothing downloads a browser, nothing reaches the network. One browser
 * serves every test of a file; each launch gets a fresh profile folder.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Where the browser is: CHROMIUM_PATH, else Debian's /usr/bin/chromium. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface RunningBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Launches the system Chromium with a fresh profile (light or dark colour scheme). */
export async function launchBrowser(
  colorScheme: 'light' | 'dark' = 'light',
): Promise<RunningBrowser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(
      `no browser at ${CHROMIUM_PATH}: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set CHROMIUM_PATH`,
    );
  const profile = mkdtempSync(path.join(os.tmpdir(), 'gpumv-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 900 },
    colorScheme,
    offline: true,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export type { Browser };
