// Validates the Actor package with Apify's own validators (and the web server's OpenAPI
// description with validate_openapi.mjs) and checks real dataset rows against
// dataset_schema.json `fields`.
//
// Usage: node validate.mjs REPO_ROOT ROWS_DIR
//   REPO_ROOT  the repository root (holds .actor/, input_schema.json, dataset_schema.json)
//   ROWS_DIR   a folder of *.json files, each an array of dataset rows written by a test run
//
// Exits 1 and prints every problem when anything does not validate.

import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve, dirname } from 'node:path';

import { Ajv2019 } from 'ajv/dist/2019.js';
import {
    getActorSchemaValidator,
    getDatasetSchemaValidator,
    getInputSchemaValidator,
    getOutputSchemaValidator,
} from '@apify/json_schemas';

import { openApiProblems } from './validate_openapi.mjs';

const require = createRequire(import.meta.url);
const { validateInputSchema } = require('@apify/input_schema');

const [root, rowsDir] = process.argv.slice(2).map((p) => resolve(p));
if (!root || !rowsDir) {
    console.error('usage: node validate.mjs REPO_ROOT ROWS_DIR');
    process.exit(2);
}

const problems = [];
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const describe = (errors) => (errors || [])
    .map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`)
    .join('\n    ');

function check(label, validator, document) {
    if (validator(document)) {
        console.log(`ok   ${label}`);
    } else {
        problems.push(`${label}:\n    ${describe(validator.errors)}`);
    }
}

// actor.json and the files it points to.
const actorPath = join(root, '.actor', 'actor.json');
const actor = readJson(actorPath);
check('.actor/actor.json (actor schema)', getActorSchemaValidator(), actor);
const fromActor = (relative) => resolve(dirname(actorPath), relative);

// Input schema: the platform's own structural validation, then the JSON schema of input schemas.
const inputPath = fromActor(actor.input);
const inputSchema = readJson(inputPath);
try {
    validateInputSchema(new Ajv2019({ strict: false, allowUnionTypes: true }), inputSchema);
    console.log(`ok   ${actor.input} (@apify/input_schema validateInputSchema)`);
} catch (error) {
    problems.push(`${actor.input} (@apify/input_schema validateInputSchema):\n    ${error.message}`);
}
check(`${actor.input} (input schema)`, getInputSchemaValidator(), inputSchema);

// Dataset schema, its views referring to declared fields only.
const datasetPath = fromActor(actor.storages.dataset);
const datasetSchema = readJson(datasetPath);
check(`${actor.storages.dataset} (dataset schema)`, getDatasetSchemaValidator(), datasetSchema);
const declared = new Set(Object.keys(datasetSchema.fields?.properties ?? {}));
for (const [name, view] of Object.entries(datasetSchema.views ?? {})) {
    const used = [
        ...(view.transformation?.fields ?? []),
        ...Object.keys(view.display?.properties ?? {}),
    ];
    const unknown = used.filter((field) => !declared.has(field));
    if (unknown.length > 0) {
        problems.push(`dataset view ${name} uses undeclared fields: ${unknown.join(', ')}`);
    }
}

// Output schema.
check(`${actor.output} (output schema)`, getOutputSchemaValidator(), readJson(fromActor(actor.output)));

// The web server's OpenAPI description (the Standby tab).
if (typeof actor.webServerSchema === 'string') {
    const openApi = await openApiProblems(fromActor(actor.webServerSchema));
    if (openApi.length === 0) {
        console.log(`ok   ${actor.webServerSchema} (OpenAPI web server schema)`);
    } else {
        problems.push(`${actor.webServerSchema} (OpenAPI web server schema):\n    ${openApi.join('\n    ')}`);
    }
} else {
    problems.push('.actor/actor.json has no webServerSchema file');
}

// Real rows against `fields`; a row key the schema does not declare is a problem too.
const fieldsValidator = new Ajv2019({ strict: false, allowUnionTypes: true, allErrors: true })
    .compile(datasetSchema.fields);
const files = readdirSync(rowsDir).filter((name) => name.endsWith('.json')).sort();
if (files.length === 0) {
    problems.push(`no sample rows in ${rowsDir}: run the tests first (cargo test --test budget_run)`);
}
const kinds = new Map();
for (const file of files) {
    const rows = readJson(join(rowsDir, file));
    rows.forEach((row, index) => {
        const label = `${file} row ${index} (${row.record_type})`;
        kinds.set(row.record_type, (kinds.get(row.record_type) ?? 0) + 1);
        if (!fieldsValidator(row)) {
            problems.push(`${label}:\n    ${describe(fieldsValidator.errors)}`);
        }
        const undeclared = Object.keys(row).filter((key) => !declared.has(key));
        if (undeclared.length > 0) {
            problems.push(`${label} has fields the schema does not declare: ${undeclared.join(', ')}`);
        }
    });
}
for (const kind of ['server', 'change', 'summary']) {
    if (!kinds.has(kind) && files.length > 0) {
        problems.push(`the sample rows have no ${kind} row`);
    }
}
console.log(`     ${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')} rows from ${files.length} files checked`);

if (problems.length > 0) {
    console.error(`\n${problems.length} problems:\n- ${problems.join('\n- ')}`);
    process.exit(1);
}
console.log('all Apify package files and sample rows are valid');
