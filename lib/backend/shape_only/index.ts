/**
 * The shape-only tfjs backend: tensors with shapes and dtypes but no data,
 * kernels that only infer output shapes, so a model larger than the host can
 * be built, traced and planned without computing anything.
 */
export { SHAPE_ONLY_BACKEND, SHAPE_ONLY_BACKEND_PRIORITY, registerShapeOnlyBackend } from './backend_registration.js';
export { ShapeOnlyBackend, SHAPE_ONLY_MAX_KEPT_ELEMENTS } from './shape_only_backend.js';
export { ShapeOnlyError } from './rules/shape_only_error.js';
export { withShapeOnlyBackend } from './shape_only_mode.js';
export { SHAPE_RULES, VALUE_DEPENDENT_KERNELS } from '../kernel_catalogue/kernel_catalogue.js';
export type { KernelShapeRule, KernelCall, OutputSpec } from './rules/kernel_shape_rule.js';
