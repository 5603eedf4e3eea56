// Lists and calls every tool of an MCP server with the official TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned in tests/peers/package.json) and prints what it saw.
//
// Usage: node ask_ledger.mjs NODE_DIR URL CALLS_JSON
//   NODE_DIR    where tests/peers/install.sh installed the npm peers (target/peers/node)
//   URL         the server's MCP endpoint
//   CALLS_JSON  a JSON object {tool name: arguments}
//
// Prints one JSON object: {"protocol_version", "warnings": [every console.warn line, e.g. the
// validator's "unknown format ... ignored"], "tools": [{name, annotations, has_output_schema}],
// "results": {tool name: {"is_error", "structured", "text"}}}. The SDK client checks each
// structured result against the tool's outputSchema and throws when it does not match; the
// script then exits 1 with the error on stderr. The Rust test (tests/serve.rs) judges the rest.

import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const [nodeDir, url, callsJson] = process.argv.slice(2);
if (!nodeDir || !url || !callsJson) {
    console.error('usage: node ask_ledger.mjs NODE_DIR URL CALLS_JSON');
    process.exit(2);
}

const warnings = [];
const warn = console.warn.bind(console);
console.warn = (...args) => {
    warnings.push(args.map(String).join(' '));
    warn(...args);
};

const require = createRequire(join(resolve(nodeDir), 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const client = new Client({ name: 'mcp-surface-ledger-test', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
try {
    await client.connect(transport);
    const out = { protocol_version: transport.protocolVersion ?? null, warnings, tools: [], results: {} };
    const { tools } = await client.listTools();
    for (const tool of tools) {
        out.tools.push({
            name: tool.name,
            annotations: tool.annotations ?? null,
            has_output_schema: tool.outputSchema !== undefined,
        });
    }
    for (const [name, args] of Object.entries(JSON.parse(callsJson))) {
        const result = await client.callTool({ name, arguments: args });
        out.results[name] = {
            is_error: result.isError === true,
            structured: result.structuredContent ?? null,
            text: (result.content ?? []).filter((block) => block.type === 'text').map((block) => block.text).join(''),
        };
    }
    console.log(JSON.stringify(out));
} catch (error) {
    console.error(`the TypeScript SDK client failed: ${error?.stack ?? error}`);
    process.exitCode = 1;
} finally {
    await client.close().catch(() => {});
}
