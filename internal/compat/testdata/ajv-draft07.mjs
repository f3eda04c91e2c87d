// Compiles every published schema with Ajv's default export (JSON Schema draft-07, strict mode
// on, as a draft-07 client would) and validates every example instance against its schema.
// Prints one JSON report on stdout; the Go test compares each verdict with the 2020-12
// validator's.
//
// Usage: node ajv-draft07.mjs PLAN.json
// PLAN: {"schemas": {"KEY": "/abs/schema.json"}, "instances": [{"schema": "KEY", "file": "/abs/instance.json"}]}
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const report = { ajv: null, schemas: {}, instances: [] };
const warnings = [];
const ajv = new Ajv({
  allErrors: true,
  logger: { log() {}, warn: (...args) => warnings.push(args.join(' ')), error: (...args) => warnings.push(args.join(' ')) },
});
report.ajv = ajv.defaultMeta(); // the meta-schema a schema without $schema is read against

const compiled = {};
for (const [key, file] of Object.entries(plan.schemas)) {
  warnings.length = 0;
  try {
    compiled[key] = ajv.compile(JSON.parse(readFileSync(file, 'utf8')));
    report.schemas[key] = { ok: true, warnings: [...warnings] };
  } catch (err) {
    report.schemas[key] = { ok: false, error: String(err?.message ?? err), warnings: [...warnings] };
  }
}
for (const { schema, file } of plan.instances) {
  const validate = compiled[schema];
  if (!validate) {
    report.instances.push({ schema, file, valid: null });
    continue;
  }
  const valid = validate(JSON.parse(readFileSync(file, 'utf8')));
  report.instances.push({
    schema,
    file,
    valid,
    errors: valid ? [] : validate.errors.map((e) => `${e.instancePath || '/'} ${e.message}`),
  });
}
process.stdout.write(JSON.stringify(report) + '\n');
