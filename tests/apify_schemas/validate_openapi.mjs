// Validates the web server's OpenAPI description (.actor/web_server_schema.json, the Actor's
// `webServerSchema`) with an OpenAPI validator (@seriousme/openapi-schema-validator: the
// official OpenAPI 3.x JSON schemas), resolves every $ref, and compiles every schema it
// holds with Ajv in strict mode (JSON Schema 2020-12, the dialect of OpenAPI 3.1), so an
// unknown keyword or a `format` JSON Schema does not define is an error.
//
// Usage: node validate_openapi.mjs FILE
// Prints "ok ..." lines, or every problem and exits 1. validate.mjs runs the same check.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** The JSON Schema 2020-12 formats (Validation, section 7.3). */
const STANDARD_FORMATS = [
    'date-time', 'date', 'time', 'duration', 'email', 'idn-email', 'hostname', 'idn-hostname',
    'ipv4', 'ipv6', 'uri', 'uri-reference', 'iri', 'iri-reference', 'uuid', 'uri-template',
    'json-pointer', 'relative-json-pointer', 'regex',
];

/** Every problem of the OpenAPI document at `path` (empty when it is valid). */
export async function openApiProblems(path) {
    const problems = [];
    const document = JSON.parse(readFileSync(path, 'utf8'));
    const validator = new Validator();
    const result = await validator.validate(document);
    if (!result.valid) {
        problems.push(`not a valid OpenAPI document: ${JSON.stringify(result.errors, null, 1)}`);
        return problems;
    }
    if (!String(document.openapi).startsWith('3.')) {
        problems.push(`openapi ${document.openapi}: the platform shows OpenAPI 3.x`);
    }
    try {
        validator.resolveRefs();
    } catch (error) {
        problems.push(`a $ref does not resolve: ${error.message}`);
    }
    // Every schema compiles, strictly, with only standard formats.
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    ajv.addKeyword('example');
    for (const format of STANDARD_FORMATS) {
        ajv.addFormat(format, true);
    }
    ajv.addSchema({ $id: 'openapi:components', components: document.components ?? {} });
    const schemas = [];
    const visit = (node, where) => {
        if (Array.isArray(node)) {
            node.forEach((item, n) => visit(item, `${where}/${n}`));
        } else if (node && typeof node === 'object') {
            for (const [key, value] of Object.entries(node)) {
                if (key === 'schema') {
                    schemas.push([`${where}/schema`, value]);
                } else if (key !== 'example' && key !== 'examples') {
                    visit(value, `${where}/${key}`);
                }
            }
        }
    };
    visit(document.paths, '#/paths');
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
        schemas.push([`#/components/schemas/${name}`, schema]);
    }
    const rebase = (schema) => JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"openapi:components#/components/'),
    );
    for (const [where, schema] of schemas) {
        try {
            ajv.compile(rebase(schema));
        } catch (error) {
            problems.push(`${where}: ${error.message}`);
        }
    }
    return problems;
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? '')).href) {
    const file = process.argv[2];
    if (!file) {
        console.error('usage: node validate_openapi.mjs FILE');
        process.exit(2);
    }
    const problems = await openApiProblems(resolve(file));
    if (problems.length > 0) {
        console.error(problems.join('\n'));
        process.exit(1);
    }
    console.log(`ok   ${file} (OpenAPI, @seriousme/openapi-schema-validator; every schema compiles in Ajv strict mode)`);
}
