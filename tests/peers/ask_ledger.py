"""Calls every tool of an MCP server with the official Python SDK client and prints what it saw.

Usage: python ask_ledger.py URL MODE CALLS_JSON
  URL         the server's MCP endpoint
  MODE        the SDK's connect mode: "auto" (server/discover, 2026-07-28) or "legacy"
              (initialize handshake)
  CALLS_JSON  a JSON object {tool name: arguments}

Prints one JSON object: {"protocol_version", "tools": [{name, annotations, has_output_schema}],
"results": {tool name: {"is_error", "structured", "text"}}}. The Rust test judges it.
"""

import asyncio
import json
import sys

from mcp import Client


async def main(url: str, mode: str, calls: dict) -> None:
    out = {"tools": [], "results": {}}
    async with Client(url, mode=mode, cache=None) as client:
        listing = await client.list_tools()
        for tool in listing.tools:
            annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
            out["tools"].append(
                {"name": tool.name, "annotations": annotations, "has_output_schema": tool.output_schema is not None}
            )
        for name, arguments in calls.items():
            result = await client.call_tool(name, arguments)
            texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
            out["results"][name] = {
                "is_error": bool(result.is_error),
                "structured": result.structured_content,
                "text": "".join(texts),
            }
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
