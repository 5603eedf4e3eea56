"""A test peer: the official Python MCP SDK serving a surface file, optionally behind the SDK's
own OAuth resource-server protection, over Streamable HTTP or the legacy HTTP+SSE transport.

Usage:
    python auth_server.py SURFACE.json [--transport streamable-http|sse] [--auth]
                          [--accept-token TOKEN] [--watch-stdin]

The surface file is the one of surface_server.py. With --auth the server is an OAuth resource
server (AuthSettings + a token verifier): every anonymous request gets the SDK's 401 with
`resource_metadata`, and the RFC 9728 document is served at the path-inserted well-known URL.
The verifier refuses every token but the one given with --accept-token (a client holding it
reads the surface; any other token gets the SDK's 401 invalid_token). A surface file key `"protected": false` opens the door for
the next requests (the protection is switched off inside the server, as if its operator
removed it); `true` or no key keeps it on. The client under test never sends a credential.

Streamable HTTP serves /mcp; sse serves GET /sse and POST /messages/.
Binds 127.0.0.1 on a free port and prints "READY <port>" once listening.
"""

import argparse
import os
import socket
import sys
import threading

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.responses import Response
from starlette.routing import Mount, Route

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from mcp.server.sse import SseServerTransport
from mcp.server.transport_security import TransportSecuritySettings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from surface_server import RefreshIdentity, build_server, load_surface  # noqa: E402

ISSUER = "https://auth.example.test"
SCOPES = ["mcp:tools"]
# Only the server itself ever uses this value (see OpenDoor); no test client sends it.
INTERNAL_TOKEN = "internal-open-door"


class RefuseEveryToken:
    """A token verifier for a server whose authorization server nobody can reach; it knows
    only its own open-door token and, when given, the one token a test client may hold."""

    accepted = None

    async def verify_token(self, token):
        if token == INTERNAL_TOKEN:
            return AccessToken(token=token, client_id="open-door", scopes=SCOPES)
        if RefuseEveryToken.accepted is not None and token == RefuseEveryToken.accepted:
            return AccessToken(token=token, client_id="test-client", scopes=SCOPES)
        return None


class OpenDoor:
    """ASGI wrapper: when the surface file says "protected": false, the request is let through
    as if authorized, which switches the protection off without restarting the server."""

    def __init__(self, app, path):
        self.app = app
        self.path = path

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and load_surface(self.path).get("protected", True) is False:
            headers = [(k, v) for (k, v) in scope["headers"] if k.lower() != b"authorization"]
            headers.append((b"authorization", f"Bearer {INTERNAL_TOKEN}".encode()))
            scope = dict(scope, headers=headers)
        await self.app(scope, receive, send)


def security():
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def auth_settings(port, resource_path):
    return AuthSettings(
        issuer_url=ISSUER,
        resource_server_url=f"http://127.0.0.1:{port}{resource_path}",
        required_scopes=SCOPES,
        validate_token_resource=False,
    )


def streamable_app(server, port, protected):
    if not protected:
        return server.streamable_http_app(host="127.0.0.1")
    return server.streamable_http_app(
        host="127.0.0.1", auth=auth_settings(port, "/mcp"), token_verifier=RefuseEveryToken()
    )


def sse_app(server, port, protected):
    sse = SseServerTransport("/messages/", security_settings=security())

    async def handle_sse(scope, receive, send):
        async with sse.connect_sse(scope, receive, send) as streams:
            await server.run(streams[0], streams[1], server.create_initialization_options())
        await Response()(scope, receive, send)

    async def sse_endpoint(request):
        return await handle_sse(request.scope, request.receive, request._send)

    if not protected:
        routes = [
            Route("/sse", endpoint=sse_endpoint, methods=["GET"]),
            Mount("/messages/", app=sse.handle_post_message),
        ]
        return Starlette(routes=routes)
    settings = auth_settings(port, "/sse")
    metadata_url = build_resource_metadata_url(settings.resource_server_url)
    routes = [
        Route("/sse", endpoint=RequireAuthMiddleware(handle_sse, SCOPES, metadata_url), methods=["GET"]),
        Mount("/messages/", app=RequireAuthMiddleware(sse.handle_post_message, SCOPES, metadata_url)),
    ]
    routes.extend(
        create_protected_resource_routes(
            resource_url=settings.resource_server_url,
            authorization_servers=[settings.issuer_url],
            scopes_supported=SCOPES,
        )
    )
    middleware = [
        Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(RefuseEveryToken())),
        Middleware(AuthContextMiddleware),
    ]
    return Starlette(routes=routes, middleware=middleware)


def exit_on_stdin_eof():
    sys.stdin.read()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("surface")
    parser.add_argument("--transport", choices=["streamable-http", "sse"], default="streamable-http")
    parser.add_argument("--auth", action="store_true")
    parser.add_argument("--accept-token")
    parser.add_argument("--watch-stdin", action="store_true")
    args = parser.parse_args()
    RefuseEveryToken.accepted = args.accept_token

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]

    server = build_server(args.surface)
    if args.transport == "sse":
        app = sse_app(server, port, args.auth)
    else:
        app = streamable_app(server, port, args.auth)
    app = RefreshIdentity(OpenDoor(app, args.surface), server, args.surface)
    if args.watch_stdin:
        threading.Thread(target=exit_on_stdin_eof, daemon=True).start()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"READY {port}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
