// Checks that the snapshot printed in the json-schema-2020-12-preservation scenario kept the
// 2020-12 keywords of the focal tool's inputSchema, the checks the suite itself can only make
// through a tools/call echo. Usage: node preserved.mjs <results dir of that scenario>
import { readFileSync } from "node:fs";
import { join } from "node:path";

const snapshot = JSON.parse(readFileSync(join(process.argv[2], "stdout.txt"), "utf8"));
const tool = snapshot.tools.find((t) => t.name === "json_schema_2020_12_tool");
if (!tool) {
  console.error("preservation: the snapshot has no json_schema_2020_12_tool");
  process.exit(1);
}
const text = JSON.stringify(tool.definition.inputSchema);
const keywords = ["$schema", "$defs", "additionalProperties", "allOf", "anyOf", "if", "then", "else", "$anchor"];
const missing = keywords.filter((k) => !text.includes(JSON.stringify(k) + ":"));
if (missing.length > 0) {
  console.error(`preservation: keywords lost from the inputSchema: ${missing.join(", ")}`);
  process.exit(1);
}
console.log(`preservation: all ${keywords.length} keywords kept (${keywords.join(", ")})`);
