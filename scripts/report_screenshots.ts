/**
 * Takes the pictures of the reports in docs/images (`npx tsx
 * scripts/report_screenshots.ts`, from the repository root, with Debian's
 * Chromium installed): each report of the gallery is made, rendered headless
 * and saved as docs/images/report-<name>.png.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { screenshot } from './headless_chromium.js';
import { REPORT_GALLERY } from './report_gallery.js';

mkdirSync('docs/images', { recursive: true });
for (const report of REPORT_GALLERY) {
  const files = await report.write(mkdtempSync(join(tmpdir(), `poptfjs-report-${report.name}-`)));
  const png = join('docs/images', `report-${report.name}.png`);
  screenshot(files.html, png, 1200, report.height);
  console.log(`wrote ${png} (${report.caption})`);
}
