/**
 * PopTorch's helper ops for use inside models.
 */
export { identityLoss, type LossReduction } from './identity_loss.js';
export { recomputationCheckpoint } from './recomputation_checkpoint.js';
export { ipuPrintTensor, type IpuPrintTensorOptions, type FloatFormat } from './ipu_print_tensor.js';
export { nop } from './nop.js';
export { customOp, registerCustomOp, unregisterCustomOp, type CustomOpAttribute, type CustomOpAttributes, type CustomOpDefinition } from './custom_op.js';
export { CPU, type HostFunction } from './cpu.js';
export { ctcBeamSearchDecoder } from './ctc_beam_search_decoder.js';
export { dynamicSlice } from './dynamic_slice.js';
export { dynamicUpdate } from './dynamic_update.js';
export { serializedMatMul, MatMulSerializationMode } from './serialized_mat_mul.js';
export { setAvailableMemory } from './set_available_memory.js';
export { MultiConv, MultiConvPlanType } from './multi_conv.js';
export { ipuHardwareIsAvailable, ipuHardwareVersion } from './ipu_hardware.js';
export { NameScope } from './name_scope.js';
export { Attribute } from './attribute.js';
export { forLoop, MAX_LOOP_ITERATIONS } from './for_loop.js';
export { cond } from './cond.js';
export { setOverlapForInput, setOverlapForOutput } from './host_overlap.js';
export { OverlapMode } from '../lib/ir/host_overlap.js';
