/**
 * The kernel catalogue: one record per kernel poptfjs can meet in a graph
 * (every kernel tfjs registers, and poptfjs's own), by kernel name. The
 * tables of the rest of poptfjs (views, moves, reductions, random draws,
 * fills, the shape-only backend's shape rules) are read from it. One of
 * poptfjs's kernels without a record is an error where it is costed, never
 * free; a kernel a user registers in tfjs is costed as element-wise work.
 */
import { PoptfjsError } from '../../common/errors.js';
import { registerHostKernel } from '../poptfjs_kernels/backend_kernel.js';
import { FAMILY_SHAPE_RULES } from '../shape_only/kernels/index.js';
import type { KernelShapeRule } from '../shape_only/rules/kernel_shape_rule.js';
import { DATA_MOVEMENT_RECORDS } from './data_movement_records.js';
import { ELEMENTWISE_RECORDS } from './elementwise_records.js';
import { HOST_RECORDS } from './host_records.js';
import type { KernelRecord } from './kernel_record.js';
import { unlistedCost, UNLISTED_COST_NOTE } from './cost_rules.js';
import { flopsPerOutput } from './flop_rules.js';
import { POPTFJS_RECORDS, RANDOM_KERNELS } from './poptfjs_records.js';
import { PRODUCT_RECORDS } from './product_records.js';
import { REDUCTION_RECORDS } from './reduction_records.js';
import type { TfjsKernelRecords } from './tfjs_record.js';

export { POPTFJS_KERNELS, RANDOM_KERNELS } from './poptfjs_records.js';
export { FILL_KERNEL } from './data_movement_records.js';
export type { KernelCategory, KernelRecord } from './kernel_record.js';

const TFJS_FAMILIES: readonly TfjsKernelRecords[] = [ELEMENTWISE_RECORDS, DATA_MOVEMENT_RECORDS, REDUCTION_RECORDS, PRODUCT_RECORDS, HOST_RECORDS];

function gatherRecords(): ReadonlyMap<string, KernelRecord> {
  const records = new Map<string, KernelRecord>();
  const add = (record: KernelRecord) => {
    if (records.has(record.name)) throw new Error(`two records for kernel '${record.name}' in the kernel catalogue`);
    records.set(record.name, record);
  };
  for (const family of TFJS_FAMILIES) {
    for (const [name, record] of Object.entries(family)) {
      const shape = FAMILY_SHAPE_RULES.get(name);
      add({ ...record, name, ...(shape ? { shape } : {}) });
    }
  }
  for (const record of POPTFJS_RECORDS) add(record);
  return records;
}

/** Every kernel's record, by kernel name. */
export const KERNEL_CATALOGUE: ReadonlyMap<string, KernelRecord> = gatherRecords();

/**
 * What poptfjs takes a kernel a user registered in tfjs (`tf.registerKernel`)
 * outside tfjs's and poptfjs's own to be: element-wise work it has no
 * estimate of, as it takes a custom op to be.
 */
function userKernelRecord(kernel: string): KernelRecord {
  return {
    name: kernel,
    category: 'element-wise',
    cost: unlistedCost,
    flops: flopsPerOutput(1),
    costNote: `a kernel registered outside tfjs and poptfjs, ${UNLISTED_COST_NOTE}`,
  };
}

/**
 * The record of `kernel`. A kernel a user registered in tfjs has the record
 * of element-wise work poptfjs has no estimate of; a `poptfjs.*` kernel
 * without a record is an error naming it, never free.
 */
export function kernelRecord(kernel: string): KernelRecord {
  const record = KERNEL_CATALOGUE.get(kernel);
  if (record) return record;
  if (!kernel.startsWith('poptfjs.')) return userKernelRecord(kernel);
  throw new PoptfjsError(
    `poptfjs has no record of its kernel '${kernel}', so it cannot tell what it costs on an IPU: each of poptfjs's own kernels has a record in the kernel catalogue (lib/backend/kernel_catalogue/poptfjs_records.ts)`,
    { type: 'compile', location: kernel },
  );
}

/** The shape rule of each kernel the shape-only backend plans, by kernel name. */
export const SHAPE_RULES: ReadonlyMap<string, KernelShapeRule> = new Map(
  [...KERNEL_CATALOGUE].flatMap(([name, record]) => (record.shape ? [[name, record.shape] as const] : [])),
);

/**
 * The kernels whose output shapes depend on input values (or that consume
 * values on the host), with why: they are planned only from the values of
 * small tensors written from the host, and otherwise throw a `ShapeOnlyError`.
 */
export const VALUE_DEPENDENT_KERNELS: ReadonlyMap<string, string> = new Map(
  [...SHAPE_RULES].flatMap(([kernelName, rule]) => (rule.valueDependence === undefined ? [] : [[kernelName, rule.valueDependence] as const])),
);

/** True if a node of `kernel` draws from the run's random generator (the draws the tracer recognises). */
export function isRandomDraw(kernel: string): boolean {
  return RANDOM_DRAWS.has(kernel);
}

const RANDOM_DRAWS: ReadonlySet<string> = new Set(Object.values(RANDOM_KERNELS));

/** Registers poptfjs's kernels for each of `backendNames` (those already registered are kept), and their gradients. */
export function registerPoptfjsKernels(backendNames: readonly string[]): void {
  for (const record of KERNEL_CATALOGUE.values()) if (record.host) registerHostKernel(record.host, backendNames);
}
