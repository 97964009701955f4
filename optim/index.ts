/**
 * poptfjs optimizers: constructed as `new optim.SGD(modelOrVariables, { lr })`.
 */
export { Optimizer, type OptimizerTarget, type OptimizerState, type ParameterState } from './optimizer.js';
export { SGD, type SGDOptions } from './sgd.js';
