/**
 * Typed access to the attributes of an ONNX node, with the operator's
 * defaults and errors that name the node and the attribute.
 */
import type { HostTensor } from './host_tensor.js';
import { OnnxError } from './onnx_errors.js';
import { ATTRIBUTE_TYPE, type AttributeProto } from './onnx_proto.js';
import { tensorFromProto } from './tensor_proto_data.js';

const TYPE_NAMES = new Map<number, string>(Object.entries(ATTRIBUTE_TYPE).map(([name, code]) => [code, name]));

/** The attributes of one node. */
export class NodeAttributes {
  private readonly byName = new Map<string, AttributeProto>();

  /** `where` names the node in errors. */
  constructor(
    attributes: readonly AttributeProto[],
    private readonly where: string,
  ) {
    for (const a of attributes) if (a.name) this.byName.set(a.name, a);
  }

  /** True if the node sets attribute `name`. */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  private get(name: string, type: number): AttributeProto | undefined {
    const a = this.byName.get(name);
    if (a === undefined) return undefined;
    const actual = a.type ?? inferType(a);
    if (actual !== type) {
      throw new OnnxError(`${this.where}: attribute '${name}' is ${TYPE_NAMES.get(actual) ?? actual}, expected ${TYPE_NAMES.get(type)}`, {
        location: this.where,
      });
    }
    return a;
  }

  private missing(name: string): never {
    throw new OnnxError(`${this.where}: required attribute '${name}' is missing`, { location: this.where });
  }

  /** An INT attribute, or `fallback` when absent (an error when absent without fallback). */
  int(name: string, fallback?: number): number {
    const a = this.get(name, ATTRIBUTE_TYPE.INT);
    if (a) return a.i ?? 0;
    return fallback ?? this.missing(name);
  }

  /** An INTS attribute, or `fallback`/undefined when absent. */
  ints(name: string): number[] | undefined;
  ints(name: string, fallback: number[]): number[];
  ints(name: string, fallback?: number[]): number[] | undefined {
    const a = this.get(name, ATTRIBUTE_TYPE.INTS);
    return a ? a.ints.map(Number) : fallback;
  }

  /** A FLOAT attribute, or `fallback` when absent. */
  float(name: string, fallback?: number): number {
    const a = this.get(name, ATTRIBUTE_TYPE.FLOAT);
    if (a) return a.f ?? 0;
    return fallback ?? this.missing(name);
  }

  /** A FLOATS attribute, or `fallback`/undefined when absent. */
  floats(name: string): number[] | undefined;
  floats(name: string, fallback: number[]): number[];
  floats(name: string, fallback?: number[]): number[] | undefined {
    const a = this.get(name, ATTRIBUTE_TYPE.FLOATS);
    return a ? a.floats.map(Number) : fallback;
  }

  /** A STRING attribute (UTF-8), or `fallback` when absent. */
  string(name: string, fallback?: string): string {
    const a = this.get(name, ATTRIBUTE_TYPE.STRING);
    if (a) return new TextDecoder().decode(a.s ?? new Uint8Array());
    return fallback ?? this.missing(name);
  }

  /** A STRINGS attribute, or undefined when absent. */
  strings(name: string): string[] | undefined {
    const a = this.get(name, ATTRIBUTE_TYPE.STRINGS);
    return a ? a.strings.map((s) => new TextDecoder().decode(s)) : undefined;
  }

  /** A TENSOR attribute, or undefined when absent. */
  tensor(name: string): HostTensor | undefined {
    const a = this.get(name, ATTRIBUTE_TYPE.TENSOR);
    return a?.t ? tensorFromProto(a.t) : undefined;
  }
}

/** The type of an attribute written without `type` (IR version 1 models). */
function inferType(a: AttributeProto): number {
  if (a.t) return ATTRIBUTE_TYPE.TENSOR;
  if (a.g) return ATTRIBUTE_TYPE.GRAPH;
  if (a.s !== undefined) return ATTRIBUTE_TYPE.STRING;
  if (a.i !== undefined) return ATTRIBUTE_TYPE.INT;
  if (a.f !== undefined) return ATTRIBUTE_TYPE.FLOAT;
  if (a.ints.length) return ATTRIBUTE_TYPE.INTS;
  if (a.floats.length) return ATTRIBUTE_TYPE.FLOATS;
  if (a.strings.length) return ATTRIBUTE_TYPE.STRINGS;
  if (a.tensors.length) return ATTRIBUTE_TYPE.TENSORS;
  if (a.graphs.length) return ATTRIBUTE_TYPE.GRAPHS;
  return ATTRIBUTE_TYPE.UNDEFINED;
}
