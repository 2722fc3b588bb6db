// The TF op -> handler table (tf2onnx's `@tf_op("Conv2D")` registry as a plain typed object). Each
// family file exports its handlers by op name; an op named by two families fails at load.
import type { OpHandler } from '../context.ts';
import { ACTIVATION_OPS } from './activation.ts';
import { CONV_OPS } from './conv.ts';
import { ELEMENTWISE_OPS } from './elementwise.ts';
import { GRAPH_OPS } from './graph.ts';
import { REDUCE_OPS } from './reduce.ts';
import { RESIZE_OPS } from './resize.ts';
import { SHAPE_OPS } from './shape.ts';

function register(...families: Array<Record<string, OpHandler>>): Readonly<Record<string, OpHandler>> {
  // No prototype: an op named "constructor" or "toString" must find no handler, not Object's.
  const table = Object.create(null) as Record<string, OpHandler>;
  for (const family of families) {
    for (const [op, handler] of Object.entries(family)) {
      if (op in table) throw new Error(`TF.js importer: op ${op} has two handlers`);
      table[op] = handler;
    }
  }
  return Object.freeze(table);
}

export const OP_HANDLERS = register(GRAPH_OPS, ELEMENTWISE_OPS, ACTIVATION_OPS, CONV_OPS, REDUCE_OPS, RESIZE_OPS, SHAPE_OPS);
