/**
 * poptfjs optimizers, constructed as `new optim.Adam(modelOrVariables, { lr, betas, ... })`,
 * their parameter groups, variable and constant attributes, state dicts and
 * automatic loss scaling.
 */
export {
  Optimizer,
  type OptimizerTarget,
  type OptimizerType,
  type OptimizerOptions,
  type OptimizerSettings,
  type GroupValues,
  type GlobalValues,
  type StateSlot,
  type SlotPrecision,
} from './optimizer.js';
export type { OptimizerState, ParameterState, OptimizerStateData, OptimizerStateRecord, TensorData } from './optimizer_state.js';
export { type OptimizerStateDict, type StateDictParamGroup, OPTIMIZER_STATE_DICT_FORMAT, OPTIMIZER_STATE_DICT_VERSION } from './optimizer_state_dict.js';
export type { AccumType, HyperValue } from './optimizer_options.js';
export type { ParamGroup, ParamGroupSpec, ParamRef } from './param_groups.js';
export { VariableAttributes } from './variable_attributes.js';
export { SGD, type SGDOptions, type SGDGroupAttributes, type SGDAttributes } from './sgd.js';
export { Adam, type AdamOptions, type AdamGroupAttributes, type AdamAttributes } from './adam.js';
export { AdamW, type AdamWOptions, type AdamWGroupAttributes, type AdamWAttributes } from './adamw.js';
export { RMSprop, type RMSpropOptions, type RMSpropGroupAttributes, type RMSpropAttributes } from './rmsprop.js';
export { LAMB, type LAMBOptions, type LAMBGroupAttributes, type LAMBAttributes } from './lamb.js';
export {
  BIN_EDGE_LOCATION,
  UPPER_COUNT_THRESHOLD,
  MIN_LOSS_SCALE,
  MAX_LOSS_SCALE,
  type GradientStatistics,
  gradientStatistics,
  nextLossScale,
} from './automatic_loss_scaling.js';
