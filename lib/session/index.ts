/**
 * The PopART-style Session API, reached as `popart` (`import { popart } from
 * 'poptfjs'`): run ONNX models on the simulated IPU with `InferenceSession`
 * and `TrainingSession`, build and edit models with `Builder`, and train with
 * PopART's optimizers.
 *
 * ```ts
 * const dataFlow = new popart.DataFlow(1, { output: popart.AnchorReturnType('All') });
 * const session = await popart.InferenceSession.create({ model: 'model.onnx', dataFlow, deviceInfo: new popart.DeviceManager().createCpuDevice() });
 * await session.prepareDevice();
 * const anchors = session.initAnchorArrays();
 * session.run(new popart.StepIO({ input: data }, anchors));
 * ```
 */
export { AnchorReturnType, AnchorReturnTypeId, AnchorReturnTypeSpec } from './anchor_return_type.js';
export { DataFlow, type AnchorsArgument } from './data_flow.js';
export { StepIO, type HostArray, type HostArrays } from './step_io.js';
export { StepIOCallback, type InputCallback, type InputCompleteCallback, type OutputCallback, type OutputCompleteCallback } from './step_io_callback.js';
export { SessionOptions, type ExecutionPhaseSettings, type SessionSettings } from './session_options.js';
export { VirtualGraphMode, RecomputationType, AdamMode, AdaptiveMode, WeightDecayMode, SGDAccumulatorAndMomentum } from './session_enums.js';
export { Session, type SessionTensorInfo } from './session.js';
export type { SessionArguments, InputShapeInfo, PopartArguments } from './session_arguments.js';
export type { WeightsIO } from './session_host_weights.js';
export type { SessionReport } from './session_report.js';
export { InferenceSession } from './inference_session.js';
export { TrainingSession, type TrainingSessionArguments } from './training_session.js';
export { Builder, DEFAULT_BUILDER_OPSET, type BuilderOptions } from './builder.js';
export type { AiOnnxOpset, OnnxOperator, MultiOutputOnnxOperator, OnnxAttributes, TensorId } from './ai_onnx_opset.js';
export { AiGraphcoreOpset, type LossOptions, type NllLossOptions } from './ai_graphcore_opset.js';
export type { AttributeValue, TensorValue, ElementTypeName } from './builder_values.js';
export { VIRTUAL_GRAPH_ATTRIBUTE, PIPELINE_STAGE_ATTRIBUTE, EXECUTION_PHASE_ATTRIBUTE } from './placement_attributes.js';
export { PopartOptimizer, type OptimizerValue, type OptimizerValueArgument } from './popart_optimizer.js';
export { SGD, ConstSGD, type SGDSettings } from './popart_sgd.js';
export { Adam, type AdamSettings } from './popart_adam.js';
export { Adaptive, type AdaptiveSettings } from './popart_adaptive.js';
export type { ModelSource } from './model_source.js';
export { DeviceManager, type DeviceInfo as DeviceDescription } from '../ipu/device_manager.js';
export { Device, Device as DeviceInfo } from '../ipu/device.js';
export { ConnectionType as DeviceConnectionType, ReductionType, MeanReductionStrategy } from '../option_vocabulary/enums.js';
export { SimulatedErrorCode } from '../ipu/simulated_errors.js';
export { Patterns } from '../ir/patterns/patterns.js';
export { getLogger } from '../common/log.js';
export {
  PopartException as popart_exception,
  PopartInternalException as popart_internal_exception,
  PopartRuntimeError as popart_runtime_error,
  PoplibsException as poplibs_exception,
  PoplarException as poplar_exception,
  PoplarRuntimeError as poplar_runtime_error,
  PoplarApplicationRuntimeError as poplar_application_runtime_error,
  PoplarSystemRuntimeError as poplar_system_runtime_error,
  RecoverableError as poplar_recoverable_runtime_error,
  UnrecoverableError as poplar_unrecoverable_runtime_error,
  PoplarUnknownRuntimeError as poplar_unknown_runtime_error,
  RecoveryAction,
} from '../common/errors.js';
