/**
 * The ONNX node attributes that place operations, as PopART's builder writes
 * them: the virtual graph (IPU), the pipeline stage and the execution phase.
 */

/** The IPU (virtual graph) of a node (`Builder.virtualGraph`). */
export const VIRTUAL_GRAPH_ATTRIBUTE = '__ipu_number';
/** The pipeline stage of a node (`Builder.pipelineStage`). */
export const PIPELINE_STAGE_ATTRIBUTE = '__pipeline_stage';
/** The execution phase of a node (`Builder.executionPhase`). */
export const EXECUTION_PHASE_ATTRIBUTE = '__execution_phase';

/** The placement attributes, by the Builder method that sets each. */
export const PLACEMENT_ATTRIBUTES = {
  virtualGraph: VIRTUAL_GRAPH_ATTRIBUTE,
  pipelineStage: PIPELINE_STAGE_ATTRIBUTE,
  executionPhase: EXECUTION_PHASE_ATTRIBUTE,
} as const;
