// How far one provider's outputs are from another's (GPU against CPU), per output: float outputs
// by max |got - want| relative to max(1, max |want|); integer outputs (class labels) by the share
// of elements that differ. Used by `npm run bench -- gpu` and test/gpu/providers.gpu.test.ts.
import type { AnyTensor } from '../../src/models/onnx.ts';

export interface OutputAgreement {
  name: string;
  kind: 'float' | 'labels';
  /** float: max |got - want|; labels: elements that differ. */
  diff: number;
  /** float: diff / max(1, max |want|); labels: diff / element count. */
  relative: number;
  count: number;
}

export function outputAgreement(got: Record<string, AnyTensor>, want: Record<string, AnyTensor>): OutputAgreement[] {
  return Object.entries(want).map(([name, w]) => {
    const a = got[name]!.data;
    const b = w.data;
    if (a instanceof Float32Array && b instanceof Float32Array) {
      let diff = 0;
      let scale = 1;
      for (let i = 0; i < b.length; i++) {
        diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
        scale = Math.max(scale, Math.abs(b[i]!));
      }
      return { name, kind: 'float', diff, relative: diff / scale, count: b.length };
    }
    let differ = 0;
    for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) differ++;
    return { name, kind: 'labels', diff: differ, relative: differ / b.length, count: b.length };
  });
}
