"""The viewer (`GET /`, `GET /static/<name>`): the files of `claude_mem/viewer`, under a strict CSP.

Only the files that ship in that directory are served, looked up by exact name in a table built
at import, so no request path ever reaches the filesystem. Every response forbids anything but
same-origin scripts, styles, images and connections, inline code included: stored memory is
untrusted text, and the viewer inserts it with `textContent` only.
"""

from __future__ import annotations

import os

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from claude_mem.viewer import STATIC_DIR

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


def shipped_files(directory: str) -> dict[str, str]:
    """name → absolute path of every servable file of the viewer directory (by extension)."""
    return {
        name: os.path.join(directory, name)
        for name in sorted(os.listdir(directory))
        if os.path.splitext(name)[1] in MEDIA_TYPES and os.path.isfile(os.path.join(directory, name))
    }


FILES = shipped_files(STATIC_DIR)


def serve(request: Request, name: str) -> Response:
    path = FILES.get(name)
    if path is None:
        raise HTTPException(404, "no such viewer file")
    # Revalidate on every load (ETag → 304): a worker upgrade must never leave a stale viewer behind.
    headers = {"content-security-policy": CONTENT_SECURITY_POLICY, "cache-control": "no-cache"}
    response = FileResponse(path, media_type=MEDIA_TYPES[os.path.splitext(name)[1]], headers=headers,
                            stat_result=os.stat(path))
    etag = response.headers["etag"]
    if etag in [tag.strip() for tag in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers={**headers, "etag": etag})
    return response


async def index(request: Request) -> Response:
    return serve(request, "index.html")


async def static(request: Request) -> Response:
    return serve(request, str(request.path_params["name"]))


ROUTES = [
    Route("/", index, methods=["GET", "HEAD"]),
    Route("/static/{name}", static, methods=["GET", "HEAD"]),
]
