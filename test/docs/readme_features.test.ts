/**
 * The README's feature list ("What is there") names only what exists: every
 * name it shows in backticks is an export of poptfjs, a method of the
 * executor, of `Options` or of the object it is named on, a tensor name
 * `anchorTensor` takes, an environment variable docs/environment.md lists, or
 * a verb of the command line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import * as poptfjs from 'poptfjs';
import { VERBS } from '../../bin/verbs.js';
import { FINAL_LOSS_SCALE, GRADIENT_PREFIX, UPDATED_VARIABLE_PREFIX } from '../../lib/executable/anchor_names.js';
import { ROOT } from '../run_program.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const environment = readFileSync(join(ROOT, 'docs/environment.md'), 'utf8');

/** The "What is there" section of the README. */
function featureSection(): string {
  const start = readme.indexOf('## What is there');
  expect(start).toBeGreaterThan(-1);
  return readme.slice(start, readme.indexOf('\n## ', start + 1));
}

/** The objects a name of the form `owner.member` is looked up on, by owner. */
const OWNERS: Readonly<Record<string, readonly object[]>> = {
  executor: [poptfjs.PoplarExecutor.prototype, tf.LayersModel.prototype],
  optimizer: [poptfjs.optim.Optimizer.prototype],
  MultiConv: [poptfjs.ops.MultiConv.prototype],
  ops: [poptfjs.ops],
  optim: [poptfjs.optim],
  popart: [poptfjs.popart],
};

const ANCHOR_NAMES = new Set([GRADIENT_PREFIX, UPDATED_VARIABLE_PREFIX, FINAL_LOSS_SCALE]);

/** Why `name` (a backticked name, call arguments removed) names nothing, or undefined when it names something. */
function missing(name: string): string | undefined {
  if (ANCHOR_NAMES.has(name)) return undefined;
  if (/^[A-Z][A-Z0-9_]+$/.test(name)) return environment.includes(`\`${name}\``) ? undefined : 'not in docs/environment.md';
  const verb = /^poptfjs (\w+)$/.exec(name);
  if (verb) return VERBS.some((v) => v.name === verb[1]) ? undefined : 'not a verb';
  const [owner, member, ...rest] = name.split('.');
  if (rest.length > 0) return 'too deep';
  if (member !== undefined) {
    const on = OWNERS[owner!];
    if (!on) return `unknown owner ${owner}`;
    return on.some((o) => member in o) ? undefined : `no ${member} on ${owner}`;
  }
  const options = new poptfjs.Options();
  return owner! in poptfjs || owner! in poptfjs.PoplarExecutor.prototype || owner! in options ? undefined : 'not an export, executor method or option';
}

describe("the README's feature list", () => {
  it('names only what exists', () => {
    const names = [...featureSection().matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\(.*\)$/, ''));
    expect(names.length).toBeGreaterThan(40);
    expect(names.map((n) => [n, missing(n)]).filter(([, why]) => why !== undefined)).toEqual([]);
  });
});
