/**
 * Registering the kernels of the shape-only backend: one per kernel name
 * tfjs knows for any backend, and one per shape rule. A kernel with a shape
 * rule makes outputs with shapes and dtypes and no values; a kernel without
 * one throws a {@link ShapeOnlyError} naming it, so that tfjs never answers
 * "Kernel 'X' not registered for backend".
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCall, type KernelShapeRule } from './rules/kernel_shape_rule.js';
import { SHAPE_RULES } from '../kernel_catalogue/kernel_catalogue.js';
import { registeredKernelNames } from './registered_kernel_names.js';
import { ShapeOnlyBackend } from './shape_only_backend.js';
import { SHAPE_ONLY_REMEDY, ShapeOnlyError } from './rules/shape_only_error.js';

function shapeOnlyBackendOf(kernelName: string, backend: unknown): ShapeOnlyBackend {
  if (backend instanceof ShapeOnlyBackend) return backend;
  throw new ShapeOnlyError(`the shape-only kernel '${kernelName}' was called with a backend that is not the shape-only backend`, kernelName);
}

/** The kernel function that runs `rule` and makes its outputs on the shape-only backend. */
function kernelOfRule(kernelName: string, rule: KernelShapeRule): tf.KernelFunc {
  return ({ inputs, attrs, backend }) => {
    const shapeOnly = shapeOnlyBackendOf(kernelName, backend);
    const outputs = rule(new KernelCall(kernelName, inputs, attrs ?? {}, shapeOnly.knownValues));
    if (Array.isArray(outputs)) return outputs.map((spec) => shapeOnly.makeOutput(spec, kernelName));
    return shapeOnly.makeOutput(outputs, kernelName);
  };
}

/** The kernel function of a kernel no shape rule covers: it throws, naming the kernel. */
function kernelWithoutRule(kernelName: string): tf.KernelFunc {
  return () => {
    throw new ShapeOnlyError(
      `poptfjs is planning with shapes only and has no shape rule for kernel '${kernelName}', registered in tfjs for another backend; ${SHAPE_ONLY_REMEDY}`,
      kernelName,
    );
  };
}

/**
 * Registers, for `backendName`, a kernel for every shape rule and every
 * kernel name registered for another backend that it lacks. Returns the
 * names registered now; calling it again registers only kernels that other
 * backends registered since.
 */
export function registerShapeOnlyKernels(backendName: string): string[] {
  const registered: string[] = [];
  for (const kernelName of new Set([...SHAPE_RULES.keys(), ...registeredKernelNames()])) {
    if (tf.getKernel(kernelName, backendName) !== undefined) continue;
    const rule = SHAPE_RULES.get(kernelName);
    tf.registerKernel({ kernelName, backendName, kernelFunc: rule === undefined ? kernelWithoutRule(kernelName) : kernelOfRule(kernelName, rule) });
    registered.push(kernelName);
  }
  return registered;
}
