/**
 * The error the shape-only backend throws when planning needs what it does
 * not have: the values of a tensor.
 */
import { PoptfjsError } from '../../../common/errors.js';

/** What to do when a model needs values while poptfjs plans with shapes only. */
export const SHAPE_ONLY_REMEDY =
  'compute with tensor ops instead of reading values on the host (dataSync, data, array, print), ' + 'or plan with real data on a computing backend';

/**
 * Thrown by the shape-only backend when a model needs tensor values, which it
 * does not hold: a read of a tensor's data, a kernel whose output shape
 * depends on its inputs' values, or a kernel no shape rule covers. `location`
 * names the kernel involved.
 */
export class ShapeOnlyError extends PoptfjsError {
  constructor(message: string, kernelName: string) {
    super(message, { type: 'shape_only', location: kernelName });
  }
}
