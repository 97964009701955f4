/**
 * Checking, before anything runs, that poptfjs can import a model: its
 * default-domain (and `ai.graphcore`) opsets, every node's operator, and the
 * element types of its inputs and initializers. Everything unsupported is
 * reported at once.
 */
import { nodeLabel } from './graph_evaluation.js';
import { OnnxError, OnnxUnsupportedError, type UnsupportedFeature } from './proto/onnx_errors.js';
import type { ModelProto, TypeProto } from './proto/onnx_proto.js';
import { elementTypeName, tfjsDtypeOf } from './proto/onnx_element_type.js';
import { GRAPHCORE_DOMAIN, NEWEST_GRAPHCORE_OPSET, NEWEST_OPSET, isDefaultDomain, operatorVersion } from './operators/registry.js';

/** The opset version the model imports for the default domain, if it imports it. */
function defaultDomainOpset(model: ModelProto): number | undefined {
  return model.opset_import.find((o) => isDefaultDomain(o.domain))?.version;
}

/** The opset version the model imports for `ai.graphcore` (the one PopART's builder writes when it does not say). */
function graphcoreOpset(model: ModelProto): number {
  return model.opset_import.find((o) => o.domain === GRAPHCORE_DOMAIN)?.version ?? NEWEST_GRAPHCORE_OPSET;
}

/** Element types poptfjs computes with: the numeric ones tfjs holds, and BOOL (not STRING or complex). */
function computable(code: number): boolean {
  const dtype = tfjsDtypeOf(code);
  return dtype !== undefined && dtype !== 'string';
}

function typeProblem(type: TypeProto | undefined): string | undefined {
  if (!type) return undefined;
  if (!type.tensor_type) return 'a non-tensor type (sequence, map, optional or sparse tensor)';
  const code = type.tensor_type.elem_type ?? 0;
  if (code !== 0 && !computable(code)) return `element type ${elementTypeName(code)}`;
  return undefined;
}

function describeUnsupported(found: readonly UnsupportedFeature[]): string {
  const byWhat = new Map<string, string[]>();
  for (const f of found) byWhat.set(f.what, [...(byWhat.get(f.what) ?? []), f.where]);
  const parts = [...byWhat].map(([what, where]) => `${what} (${where.map((w) => `'${w}'`).join(', ')})`);
  return `the model uses ${byWhat.size} thing(s) poptfjs does not support: ${parts.join('; ')}`;
}

/**
 * Checks the model can be imported and returns its default-domain opset;
 * an {@link OnnxUnsupportedError} lists every unsupported operator (with the
 * nodes using it), opset and element type.
 */
export function checkModelSupported(model: ModelProto): number {
  const graph = model.graph;
  if (!graph) throw new OnnxError('the ONNX model has no graph');
  const opset = defaultDomainOpset(model);
  const found: UnsupportedFeature[] = [];
  if (opset !== undefined && opset > NEWEST_OPSET)
    found.push({ what: `default-domain opset ${opset} (poptfjs implements opsets up to ${NEWEST_OPSET})`, where: 'opset_import' });
  const graphcore = graphcoreOpset(model);
  if (graphcore > NEWEST_GRAPHCORE_OPSET)
    found.push({ what: `${GRAPHCORE_DOMAIN} opset ${graphcore} (poptfjs implements opset ${NEWEST_GRAPHCORE_OPSET})`, where: 'opset_import' });
  graph.node.forEach((node, index) => {
    const where = nodeLabel(node, index);
    if (node.domain === GRAPHCORE_DOMAIN) {
      if (!operatorVersion(node.op_type ?? '', graphcore, GRAPHCORE_DOMAIN)) found.push({ what: `operator ${node.domain}.${node.op_type}`, where });
    } else if (!isDefaultDomain(node.domain)) found.push({ what: `operator ${node.domain}.${node.op_type}`, where });
    else if (opset === undefined) found.push({ what: `operator ${node.op_type} without an opset_import entry for the default domain`, where });
    else if (!operatorVersion(node.op_type ?? '', opset)) found.push({ what: `operator ${node.op_type} (opset ${opset})`, where });
  });
  if (graph.sparse_initializer.length > 0) found.push({ what: 'sparse initializers', where: 'graph' });
  for (const tensor of graph.initializer) {
    const code = tensor.data_type ?? 0;
    if (!computable(code)) found.push({ what: `element type ${elementTypeName(code)}`, where: tensor.name ?? '' });
  }
  for (const value of [...graph.input, ...graph.output]) {
    const problem = typeProblem(value.type);
    if (problem) found.push({ what: problem, where: value.name ?? '' });
  }
  if (found.length > 0) throw new OnnxUnsupportedError(describeUnsupported(found), found);
  if (opset === undefined) throw new OnnxError('the model does not import the default ONNX operator set (no opset_import entry for domain "")');
  return opset;
}
