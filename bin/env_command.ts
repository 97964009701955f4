/** `poptfjs env`: the versions of poptfjs, tfjs and node, and the tfjs backend poptfjs computes on here. */
import { createRequire } from 'node:module';
import { currentBackend, POPTFJS_VERSION, tf } from 'poptfjs';

const require = createRequire(import.meta.url);

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

/** Prints the versions and the backend, one `name value` line each. */
export function envCommand(): number {
  const rows: Array<[string, string]> = [
    ['poptfjs', POPTFJS_VERSION],
    ['@tensorflow/tfjs', tf.version.tfjs],
    ['@tensorflow/tfjs-node', packageVersion('@tensorflow/tfjs-node')],
    ['backend', currentBackend()],
    ['node', process.versions.node],
  ];
  for (const [k, v] of rows) console.log(`${k.padEnd(22)} ${v}`);
  return 0;
}
