"""A test peer: the official Python MCP SDK serving a surface described by a JSON file.

Usage:
    python surface_server.py SURFACE.json [--port N] [--json-response] [--stateless] [--watch-stdin]

The surface file (re-read on every HTTP request, so a test can change it between two runs):
    {
      "name": "py-peer", "version": "1.0.0", "instructions": "...",   # server identity
      "page_size": 2,                     # items per list page (0 or absent: one page)
      "tools": [ {raw tool objects} ],
      "resources": [ ... ],               # optional: no key, no resources capability
      "prompts": [ ... ],                 # optional: no key, no prompts capability
      "resource_templates": [ ... ],      # optional (listed with the resources capability)
      "notify_before_lists": false        # send a notification first (forces an SSE answer)
    }
Which capabilities are declared is fixed at start-up (by the keys present then).

Binds 127.0.0.1 (port 0 = any free port) and prints "READY <port>" once listening.
With --watch-stdin the process exits when its stdin reaches end of file, so a test
harness that dies without cleaning up does not leave the server behind.
"""

import argparse
import json
import os
import socket
import sys
import threading

import mcp.types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError


def load_surface(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def page_of(items, params, page_size):
    """Returns (items of the page, next cursor or None). Cursors are 'page-<offset>'."""
    cursor = params.cursor if params is not None else None
    start = 0
    if cursor is not None:
        if not cursor.startswith("page-") or not cursor[5:].isdigit():
            raise MCPError(code=-32602, message=f"invalid cursor {cursor!r}")
        start = int(cursor[5:])
    if not page_size or page_size <= 0:
        return items[start:], None
    end = start + page_size
    next_cursor = f"page-{end}" if end < len(items) else None
    return items[start:end], next_cursor


async def notify_if_asked(ctx, surface):
    if surface.get("notify_before_lists"):
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level="info", data="listing")
        )
        await ctx.session.send_notification(note, related_request_id=ctx.request_id)


def build_server(path):
    surface = load_surface(path)
    page_size = lambda s: s.get("page_size") or 0  # noqa: E731

    async def list_tools(ctx, params):
        current = load_surface(path)
        await notify_if_asked(ctx, current)
        items, next_cursor = page_of(current.get("tools", []), params, page_size(current))
        tools = [types.Tool.model_validate(item) for item in items]
        return types.ListToolsResult(tools=tools, next_cursor=next_cursor)

    async def list_resources(ctx, params):
        current = load_surface(path)
        await notify_if_asked(ctx, current)
        items, next_cursor = page_of(current.get("resources", []), params, page_size(current))
        resources = [types.Resource.model_validate(item) for item in items]
        return types.ListResourcesResult(resources=resources, next_cursor=next_cursor)

    async def list_resource_templates(ctx, params):
        current = load_surface(path)
        await notify_if_asked(ctx, current)
        all_templates = current.get("resource_templates", [])
        items, next_cursor = page_of(all_templates, params, page_size(current))
        templates = [types.ResourceTemplate.model_validate(item) for item in items]
        return types.ListResourceTemplatesResult(resource_templates=templates, next_cursor=next_cursor)

    async def list_prompts(ctx, params):
        current = load_surface(path)
        await notify_if_asked(ctx, current)
        items, next_cursor = page_of(current.get("prompts", []), params, page_size(current))
        prompts = [types.Prompt.model_validate(item) for item in items]
        return types.ListPromptsResult(prompts=prompts, next_cursor=next_cursor)

    return Server(
        surface.get("name", "py-peer"),
        version=surface.get("version", ""),
        instructions=surface.get("instructions"),
        on_list_tools=list_tools,
        on_list_resources=list_resources if "resources" in surface else None,
        on_list_resource_templates=list_resource_templates if "resources" in surface else None,
        on_list_prompts=list_prompts if "prompts" in surface else None,
    )


class RefreshIdentity:
    """ASGI wrapper: before each HTTP request, copy name/version/instructions from the file."""

    def __init__(self, app, server, path):
        self.app = app
        self.server = server
        self.path = path

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            surface = load_surface(self.path)
            self.server.name = surface.get("name", "py-peer")
            self.server.version = surface.get("version", "")
            self.server.instructions = surface.get("instructions")
            # The SDK caches the serverInfo stamp of modern results; identity may change here.
            self.server.__dict__.pop("_server_info_stamp_source", None)
        await self.app(scope, receive, send)


def exit_on_stdin_eof():
    sys.stdin.read()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("surface")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--watch-stdin", action="store_true")
    args = parser.parse_args()

    server = build_server(args.surface)
    app = server.streamable_http_app(
        json_response=args.json_response, stateless_http=args.stateless, host="127.0.0.1"
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    if args.watch_stdin:
        threading.Thread(target=exit_on_stdin_eof, daemon=True).start()
    config = uvicorn.Config(RefreshIdentity(app, server, args.surface), log_level="warning", lifespan="on")
    print(f"READY {port}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
