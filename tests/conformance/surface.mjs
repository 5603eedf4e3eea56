// Checks the snapshot a scenario's client run printed, for what the suite can only observe
// through a tools/call (mcp-surface-ledger never calls a tool). Usage:
//   node surface.mjs <scenario> <results dir of that scenario>
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [scenario, dir] = process.argv.slice(2);
const snapshot = JSON.parse(readFileSync(join(dir, "stdout.txt"), "utf8"));
const tools = snapshot.tools.map((t) => t.name).sort();
const invalid = snapshot.invalid_tools.map((t) => `${t.name}:${t.reason}`).sort();

const expected = {
  // The valid tool stays in the surface; every tool with a bad x-mcp-header is left out and
  // reported with the reason.
  "http-invalid-tool-headers": {
    tools: ["valid_tool"],
    invalid: [
      "invalid_array_header", "invalid_colon_in_name", "invalid_control_char_name",
      "invalid_duplicate_diff_case", "invalid_duplicate_same_case", "invalid_empty_header",
      "invalid_non_ascii_name", "invalid_null_header", "invalid_number_header",
      "invalid_object_header", "invalid_space_in_name",
    ].map((name) => `${name}:invalid_header`).sort(),
  },
  // Valid x-mcp-header annotations (values needing Base64 are a call-time concern) are kept.
  "http-custom-headers": { tools: ["test_custom_headers", "test_custom_headers_null"], invalid: [] },
  // The listing of the SEP-1699 server is read (the reconnect itself is tested in
  // tests/mcp_transport.rs: the mock closes a stream only for tools/call).
  "sse-retry": { tools: ["test_reconnection"], invalid: [] },
}[scenario];
if (!expected) {
  console.error(`surface: no expectation for ${scenario}`);
  process.exit(1);
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
if (!same(tools, expected.tools) || !same(invalid, expected.invalid)) {
  console.error(`surface: ${scenario}: tools ${JSON.stringify(tools)}, invalid ${JSON.stringify(invalid)}`);
  console.error(`surface: expected tools ${JSON.stringify(expected.tools)}, invalid ${JSON.stringify(expected.invalid)}`);
  process.exit(1);
}
console.log(`surface: ${scenario}: ${tools.length} tool(s) kept, ${invalid.length} left out as expected`);
