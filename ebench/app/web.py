"""`ebench play --web`: the app served as a web page by textual-serve, each browser tab running its
own `ebench play` process (the app itself is unchanged: Textual's web driver draws it in the page).

The server is for its owner only, as Jupyter's is: a page from another site open in the same
browser must not drive the app (submit human baselines, run exec_code). So every request needs
the token printed at start (a cookie once the URL was opened), its Host must be an address this
server was reached at (DNS rebinding), an Origin, when sent, must be the served one (cross-site
websockets), and the number of app processes is capped."""

from __future__ import annotations

import asyncio
import functools
import hmac
import ipaddress
import logging
import secrets
import shlex
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..sessions.attempts import VIA_VARIABLE, WEB

if TYPE_CHECKING:
    from aiohttp import web
    from aiohttp.typedefs import Middleware

log = logging.getLogger("ebench.web")

# Names a browser on this machine uses for a loopback address; no DNS answer can stand behind them.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

NO_TOKEN = "403: this server needs its token: open the URL that `ebench play --web` printed (http://...?token=...)\n"
WRONG_HOST = "403: this server is not reached at that name: open the URL that `ebench play --web` printed\n"
FOREIGN_ORIGIN = "403: a page from another site cannot use this server\n"


class WebServeError(InputError):
    """The server cannot start (an address in use, an unknown host); the message is the one line to print."""


def play_command_line(play_args: list[str]) -> str:
    """The shell command run for each browser connection: `ebench play` with `play_args`, by this
    interpreter (so the served app is this installation, whatever PATH says), with EBENCH_VIA=web
    so that a person's attempts record that they were made in a browser."""
    return f"{VIA_VARIABLE}={WEB} " + shlex.join([sys.executable, "-m", "ebench", "play", *play_args])


def unusable(host: str, port: int, exc: OSError) -> WebServeError:
    return WebServeError(f"cannot serve on {host}:{port}: {exc.strerror}; choose another --port")


def check_address(host: str, port: int) -> None:
    """Refuse, before anything is printed, an address the server could not listen on."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise WebServeError(f"--host {host}: {exc.strerror}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp will: a port in TIME_WAIT is free
            try:
                probe.bind(address)
            except OSError as exc:
                raise unusable(host, port, exc) from None


def ip_address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """`text` as an IP address (an IPv4 address mapped into IPv6 as the IPv4 one), None when it is a name."""
    try:
        address = ipaddress.ip_address((text or "").split("%", 1)[0])  # without an IPv6 zone
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


@functools.lru_cache(maxsize=16)  # asked at every request, and a name may need a resolver
def is_loopback(host: str) -> bool:
    """Whether listening on `host` keeps the server to this machine: every address it names is a loopback one."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    address = ip_address(host)
    if address is not None:
        return address.is_loopback
    try:
        resolved = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return False
    return bool(resolved) and all((ip := ip_address(str(entry[4][0]))) is not None and ip.is_loopback for entry in resolved)


def exposure_warning(host: str, port: int) -> str | None:
    """The one-line warning for a server others may reach (None when `host` is a loopback address)."""
    if is_loopback(host):
        return None
    return (
        f"warning: --host {host} is not a loopback address: anyone who can reach port {port} and has the token "
        "controls the app, and exec_code runs their Python on this machine"
    )


def url_host(host: str) -> str:
    """`host` as written in a URL (an IPv6 address in brackets)."""
    address = ip_address(host)
    return f"[{host}]" if address is not None and address.version == 6 and ":" in host else host


def split_host_header(value: str) -> tuple[str, int] | None:
    """A Host header's name (lower case, an IPv6 address without brackets) and port (80 when left
    out, as a browser leaves it out); None when it is malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else ""
    else:
        name, _, port_text = value.partition(":")
    if not name or (port_text and not port_text.isdigit()):
        return None
    return name, int(port_text) if port_text else 80


def host_allowed(host_header: str | None, *, bound_host: str, port: int, local_address: str | None) -> bool:
    """Whether a request's Host names this server. A DNS-rebinding page reaches the server under its
    own domain name, so its Host is refused: the port must be the served one, and the name a loopback
    name or the --host given; for a server bound beyond loopback (0.0.0.0, an interface), also this
    machine's host name or the IP address the connection arrived at (`local_address`)."""
    parsed = split_host_header(host_header) if host_header else None
    if parsed is None or parsed[1] != port:
        return False
    name = parsed[0]
    if name in LOOPBACK_NAMES or name == bound_host.lower().strip("[]"):
        return True
    if is_loopback(bound_host):
        return False
    if name == socket.gethostname().lower():
        return True
    address = ip_address(name)
    return address is not None and address == ip_address(local_address)


def origin_allowed(origin: str | None, *, scheme: str, host_header: str) -> bool:
    """Whether a request's Origin (sent by browsers with websockets and cross-site requests) is this
    server's, as the Host names it; no Origin (a page's own navigation, a program) is allowed."""
    if origin is None:
        return True
    from yarl import URL

    try:
        url = URL(origin)
        asked = (url.scheme, (url.host or "").lower(), url.port)
    except ValueError:
        return False
    served = split_host_header(host_header)
    return served is not None and asked == (scheme, served[0], served[1])


def same_token(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8", "replace"), token.encode())


def access_guard(token: str, *, bound_host: str, port: int) -> Middleware:
    """The aiohttp middleware in front of every route: Host, then Origin, then the token (in the
    URL, or the cookie that opening the URL set). GET / with the token sets the cookie and
    redirects to the URL without it, so the token stays out of the address bar and the history."""
    from aiohttp import web

    # One name per port: cookies ignore ports, and two servers on one machine must not overwrite each other's.
    cookie = f"ebench-token-{port}"

    def refuse(text: str) -> web.Response:
        return web.Response(status=403, text=text, headers={"Cache-Control": "no-store"})

    @web.middleware
    async def guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        host = request.headers.get("Host")
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        if not host_allowed(host, bound_host=bound_host, port=port, local_address=str(sockname[0]) if sockname else None):
            return refuse(WRONG_HOST)
        assert host is not None
        if not origin_allowed(request.headers.get("Origin"), scheme=request.scheme, host_header=host):
            return refuse(FOREIGN_ORIGIN)
        in_url = same_token(request.query.get("token"), token)
        if not in_url and not same_token(request.cookies.get(cookie), token):
            return refuse(NO_TOKEN)
        if in_url and request.path == "/" and request.method == "GET":
            rest = request.rel_url.with_query([(key, value) for key, value in request.query.items() if key != "token"])
            response: web.StreamResponse = web.Response(status=303, headers={"Location": str(rest), "Cache-Control": "no-store"})
            response.set_cookie(cookie, token, path="/", httponly=True, samesite="Strict")
            return response
        response = await handler(request)
        if not response.prepared:  # a websocket's headers are sent already
            # No other site may frame the app (clicks steered through an invisible frame), nor learn its URLs.
            response.headers.setdefault("X-Frame-Options", "DENY")
            response.headers.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
            response.headers.setdefault("Referrer-Policy", "no-referrer")
            response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    return guard


def serve(play_args: list[str], host: str, port: int, max_tabs: int) -> None:
    """Serve `ebench play <play_args>` on http://host:port until Ctrl+C (or SIGTERM), then return;
    at most `max_tabs` app processes at once. Raises WebServeError when the address cannot be listened on."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server, to_int

    token = secrets.token_urlsafe(32)
    announcement = (
        f"ebench in the browser: http://{url_host(host)}:{port}/?token={token}, "
        f"each tab running {shlex.join(['ebench', 'play', *play_args])} (Ctrl+C stops)"
    )
    warning = exposure_warning(host, port)

    class EBenchServer(Server):
        def __init__(self, command: str, **options: Any) -> None:
            super().__init__(command, **options)
            self.open_tabs: set[asyncio.Task[Any]] = set()

        def initialize_logging(self) -> None:
            # Warnings and errors only (an app process that failed to start, a tab refused): not a line per request.
            logging.basicConfig(level=logging.WARNING, format="%(message)s")

        async def _make_app(self) -> web.Application:
            # textual-serve's routes, behind the guard, with the static files served one by one (no listing).
            app = web.Application(middlewares=[access_guard(token, bound_host=host, port=port)])
            aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
            app.add_routes(
                [
                    web.get("/", self.handle_index, name="index"),
                    web.get("/ws", self.handle_websocket, name="websocket"),
                    web.get("/download/{key}", self.handle_download, name="download"),
                    web.get("/static/{path:.+}", self.handle_static, name="static"),
                ]
            )
            app.on_startup.append(self.on_startup)
            app.on_shutdown.append(self.on_shutdown)
            return app

        async def on_startup(self, app: Any) -> None:
            pass  # no banner: the announcement is printed once the server listens (`serve`)

        def serve(self, debug: bool = False) -> None:
            # textual-serve's own, but announcing once the address is bound: aiohttp calls `print` after
            # binding, whereas on_startup runs before (a URL printed then could be refused).
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            for signal_number in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signal_number, self.request_exit)

            def announce(*_: object) -> None:
                if warning:
                    print(warning, file=sys.stderr, flush=True)
                print(announcement, flush=True)

            web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop, print=announce)

        async def handle_index(self, request: web.Request) -> web.Response:
            # The page's websocket goes to the address the browser used, not to --host (0.0.0.0 is no
            # address to connect to); the Host was checked by the guard.
            scheme = "wss" if request.secure else "ws"
            context = {
                "font_size": to_int(request.query.get("fontsize", "16"), 16),
                "app_websocket_url": f"{scheme}://{request.host}/ws",
                "config": {"static": {"url": "/static/"}},
                "application": {"name": self.title},
            }
            return aiohttp_jinja2.render_template("app_index.html", request, context)

        async def handle_static(self, request: web.Request) -> web.StreamResponse:
            """A file of textual-serve's static folder; anything else (a folder, a path out of it) is 404."""
            root = self.statics_path.resolve()
            path = (root / request.match_info["path"]).resolve()
            if not path.is_relative_to(root) or not path.is_file():
                raise web.HTTPNotFound()
            return web.FileResponse(path)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            # Checked and counted with no await in between: two tabs opening at once cannot both take the last place.
            if len(self.open_tabs) >= max_tabs:
                log.warning(f"a tab was refused: {max_tabs} already open (--max-tabs {max_tabs})")
                raise web.HTTPServiceUnavailable(
                    text=f"503: {max_tabs} tabs are open already (ebench play --web --max-tabs {max_tabs}): close one and reload\n"
                )
            tab = asyncio.current_task()
            assert tab is not None
            self.open_tabs.add(tab)  # until its app process has ended
            try:
                return await super().handle_websocket(request)
            finally:
                self.open_tabs.discard(tab)

        async def on_shutdown(self, app: Any) -> None:
            # A cancelled tab tells its app to quit and waits for it (textual-serve's own handling). Left
            # open, a tab would hold the server for aiohttp's shutdown timeout, and its app process
            # would outlive the event loop (a traceback at exit).
            for tab in self.open_tabs:
                tab.cancel()
            await asyncio.gather(*self.open_tabs, return_exceptions=True)

    check_address(host, port)
    server = EBenchServer(play_command_line(play_args), host=host, port=port, title="ebench")
    try:
        server.serve()
    except OSError as exc:  # taken between the check and the bind
        raise unusable(host, port, exc) from None
