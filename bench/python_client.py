"""The baseline of the whole-run benchmark: read every server's tool list with the official MCP
Python SDK client, the obvious script a user would write instead of the Actor.

    python bench/python_client.py URLS_FILE [--concurrency 20]

URLS_FILE holds one server URL a line. Each server is read with
`mcp.client.client.Client(url, mode="auto")` (server/discover, falling back to initialize) and
`list_tools`, following `next_cursor`; at most `--concurrency` servers are in flight. Prints one
JSON line: servers read, failures, tools seen, and the wall time of the reading part alone
(after the imports), so the caller can tell interpreter start-up from the work.
"""

import argparse
import asyncio
import json
import sys
import time

START = time.perf_counter()

from mcp.client.client import Client  # noqa: E402  (imports are part of the measured cost)


async def read_tools(url: str) -> int:
    """Connects to one server and returns how many tools it lists."""
    tools = 0
    async with Client(url, mode="auto") as client:
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools += len(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools


async def read_all(urls: list[str], concurrency: int) -> dict:
    gate = asyncio.Semaphore(concurrency)
    failures: list[str] = []

    async def one(url: str) -> int:
        async with gate:
            try:
                return await read_tools(url)
            except Exception as error:  # a failed server is counted, never fatal
                failures.append(f"{url}: {error!r}")
                return 0

    counts = await asyncio.gather(*(one(url) for url in urls))
    return {"tools": sum(counts), "failures": failures}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("urls_file")
    parser.add_argument("--concurrency", type=int, default=20)
    args = parser.parse_args()
    with open(args.urls_file, encoding="utf-8") as handle:
        urls = [line.strip() for line in handle if line.strip()]
    imported = time.perf_counter()
    outcome = asyncio.run(read_all(urls, args.concurrency))
    done = time.perf_counter()
    print(
        json.dumps(
            {
                "servers": len(urls),
                "failed": len(outcome["failures"]),
                "tools": outcome["tools"],
                "import_seconds": round(imported - START, 3),
                "read_seconds": round(done - imported, 3),
            }
        )
    )
    for failure in outcome["failures"][:5]:
        print(failure, file=sys.stderr)
    return 1 if outcome["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
