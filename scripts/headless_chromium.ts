/**
 * Debian's Chromium, headless, on a page of this machine: the DOM it builds
 * (`--dump-dom`) and a screenshot of it. The report tests render each
 * report with it; `scripts/report_screenshots.ts` takes the pictures in docs/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The Chromium binary, if one is installed (`apt-get install chromium`). */
export const CHROMIUM: string | undefined = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

function chromium(args: readonly string[], page: string): string {
  if (!CHROMIUM) throw new Error('Chromium is not installed: apt-get install chromium');
  const profile = mkdtempSync(join(tmpdir(), 'chromium-'));
  try {
    const result = spawnSync(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--hide-scrollbars',
        `--user-data-dir=${profile}`,
        ...args,
        pathToFileURL(page).href,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    if (result.status !== 0) throw new Error(`chromium ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}`);
    return result.stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** The DOM Chromium builds from the page at `page` (a path). */
export function renderedDom(page: string): string {
  return chromium(['--dump-dom'], page);
}

/** Writes a PNG screenshot of the page at `page` into `png`, the window `width` × `height` pixels. */
export function screenshot(page: string, png: string, width: number, height: number): void {
  chromium([`--screenshot=${png}`, `--window-size=${width},${height}`], page);
}
