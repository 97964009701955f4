/**
 * The errors the ONNX reader, importer and writer throw. All are
 * {@link PopartException}s (PopART's `popart_exception`, which is a
 * `PoptfjsError`) of type `onnx`; the subclasses let a caller tell
 * models that use something poptfjs does not implement, and graph inputs that
 * must be known at import, from other failures.
 */
import { PopartException } from '../../common/errors.js';

/** A model that cannot be read, imported or written. */
export class OnnxError extends PopartException {
  constructor(message: string, options: { location?: string; cause?: unknown } = {}) {
    super(message, { type: 'onnx', ...options });
  }
}

/** One thing a model uses that poptfjs does not implement. */
export interface UnsupportedFeature {
  /** The operator type (with its domain when not the default one), or the feature. */
  readonly what: string;
  /** The node's name (or `#index` for an unnamed node), or the tensor's name. */
  readonly where: string;
}

/** A model that uses operators, opsets or element types poptfjs does not implement; lists every one. */
export class OnnxUnsupportedError extends OnnxError {
  /** Everything unsupported found in the model. */
  readonly unsupported: readonly UnsupportedFeature[];

  constructor(message: string, unsupported: readonly UnsupportedFeature[]) {
    super(message);
    this.unsupported = unsupported;
  }
}

/**
 * A node needs one of its inputs to be known when the model is imported (a
 * Reshape shape, Slice starts, Pad pads, ...), and that input comes from a
 * graph input. Give the graph input's value in `constantInputs`.
 */
export class OnnxConstantInputError extends OnnxError {
  /** The graph input whose value is needed. */
  readonly inputName: string;

  constructor(message: string, inputName: string, location: string) {
    super(message, { location });
    this.inputName = inputName;
  }
}
