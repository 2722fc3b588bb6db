// Checks against the OpenAPI document: the document itself with a real OpenAPI 3.1 validator, and
// real answers with ajv (JSON Schema 2020-12, the dialect OpenAPI 3.1 uses) against the schema the
// document gives for that operation and status.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Doc = Record<string, any>;

/** The OpenAPI validator's verdict on the document (valid: true, or the errors). */
export async function validateDocument(doc: Doc): Promise<{ valid: boolean; version: string; errors?: unknown }> {
  const validator = new Validator();
  const r = await validator.validate(structuredClone(doc));
  return { valid: r.valid, version: validator.version, ...(r.valid ? {} : { errors: r.errors }) };
}

/** "/api/tasks/v1/get/{task_id}" as a JSON pointer segment. */
const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export interface AnswerCheck {
  /** The schema problems of `body` as the answer to `method template` with `status`; [] when it conforms. */
  problems(method: string, template: string, status: number, body: unknown, contentType?: string): string[];
  /** Throws, naming the operation and the problems, unless the answer conforms. */
  expect(method: string, template: string, res: { status: number; json: unknown; headers?: Headers }): void;
  /** Operations (e.g. "GET /health/live 200") whose answers were checked, for a coverage assertion. */
  readonly checked: Set<string>;
}

/** Where the document's components are reachable for ajv ("<DOC_ID>#/components/schemas/Task"). */
export const DOC_ID = 'https://openapi.test/doc.json';

/**
 * An ajv (2020-12) holding the document's components. Strict: the document's schemas must be plain
 * 2020-12 (an unknown keyword or a misplaced one is a mistake there); formats are checked.
 */
export function documentAjv(doc: Doc): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTuples: false, strictRequired: false });
  addFormats(ajv);
  // Holds the components only; `components` is not a schema keyword.
  ajv.addKeyword('components');
  ajv.addSchema({ $id: DOC_ID, components: doc.components });
  return ajv;
}

export function answerChecker(doc: Doc): AnswerCheck {
  const ajv = documentAjv(doc);
  const cache = new Map<string, ValidateFunction>();
  const checked = new Set<string>();

  function problems(method: string, template: string, status: number, body: unknown, contentType = 'application/json'): string[] {
    const op = doc.paths?.[template]?.[method.toLowerCase()];
    if (!op) return [`the document has no operation ${method} ${template}`];
    const response = op.responses?.[String(status)] ?? op.responses?.default;
    if (!response) return [`${method} ${template} documents no ${status} answer (it documents ${Object.keys(op.responses ?? {}).join(', ')})`];
    const mediaType = contentType.split(';')[0]!.trim();
    if (!response.content?.[mediaType]) return [`${method} ${template} ${status} documents no ${mediaType} content`];
    checked.add(`${method.toUpperCase()} ${template} ${status}`);
    if (mediaType !== 'application/json') return [];
    const at = `#/paths/${pointer(template)}/${method.toLowerCase()}/responses/${status}/content/${pointer(mediaType)}/schema`;
    let validate = cache.get(at);
    if (!validate) {
      // The response schema, with its "#/components/..." references pointing into the document.
      const schema = JSON.parse(JSON.stringify(response.content[mediaType].schema).replace(/"\$ref":"#\//g, `"$ref":"${DOC_ID}#/`));
      validate = ajv.compile(schema);
      cache.set(at, validate);
    }
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
  }

  return {
    problems,
    checked,
    expect(method, template, res) {
      const type = res.headers?.get('content-type') ?? 'application/json';
      const found = problems(method, template, res.status, res.json, type);
      if (found.length) throw new Error(`${method} ${template} -> ${res.status} does not match the document:\n  ${found.join('\n  ')}\nbody: ${JSON.stringify(res.json).slice(0, 600)}`);
    },
  };
}
