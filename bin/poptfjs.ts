#!/usr/bin/env node
/**
 * The poptfjs command-line tool.
 *
 *   poptfjs env     the versions and the tfjs backend poptfjs runs on here
 *   poptfjs help    this text
 */
import { createRequire } from 'node:module';
import { currentBackend, tf } from 'poptfjs';

const require = createRequire(import.meta.url);

const USAGE = `usage: poptfjs <command>

commands:
  env     print the poptfjs and tfjs versions and the backend poptfjs runs on
  help    print this text`;

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

function env(): void {
  const rows: Array<[string, string]> = [
    ['poptfjs', packageVersion('poptfjs')],
    ['@tensorflow/tfjs', tf.version.tfjs],
    ['@tensorflow/tfjs-node', packageVersion('@tensorflow/tfjs-node')],
    ['backend', currentBackend()],
    ['node', process.versions.node],
  ];
  for (const [k, v] of rows) console.log(`${k.padEnd(22)} ${v}`);
}

const [command] = process.argv.slice(2);
switch (command) {
  case 'env':
    env();
    break;
  case undefined:
  case 'help':
  case '--help':
  case '-h':
    console.log(USAGE);
    break;
  default:
    console.error(`poptfjs: unknown command '${command}'\n${USAGE}`);
    process.exitCode = 2;
}
