/**
 * A record of one of tfjs's kernels as a family file of the catalogue writes
 * it: everything but its name (the key it is written under) and its shape
 * rule (the shape-only backend's rule of that name, ../shape_only/kernels).
 */
import type { KernelRecord } from './kernel_record.js';

/** A tfjs kernel's record, without its name and shape rule. */
export type TfjsKernelRecord = Omit<KernelRecord, 'name' | 'shape' | 'host'>;

/** tfjs kernels' records by kernel name. */
export type TfjsKernelRecords = Readonly<Record<string, TfjsKernelRecord>>;
