/**
 * The version of poptfjs, as written into every file it saves: an exported
 * executable or checkpoint is only read by the exact same version.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** This poptfjs's version (`version` of its package.json). */
export const POPTFJS_VERSION: string = (require('poptfjs/package.json') as { version: string }).version;
