"""The viewer's Starlette application: routes, templates and static files.

Every page is built and rendered in a small thread pool of the app's own (the store is read
there; the event loop only moves bytes), so a page that reads a 100,000-case run does not hold
up the others, and a PostgreSQL store gets at most :data:`READER_THREADS` connections.

Templates are Jinja2 with autoescaping on for everything, and a ``finalize`` hook through which
every value a template prints passes first: texts have their control and invisible characters
made visible (:func:`evalkit.reports.escape.visible`: an RTL override, an escape sequence, a NUL
or a lone surrogate shows as its escape) and are scrubbed of secrets
(:func:`evalkit.privacy.scrub`). Only addresses built by :mod:`.urls` and the server-drawn trend
chart are marked safe.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import sys
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..errors import StorageError
from ..privacy import scrub
from ..reports.escape import visible
from ..run.continuing import status_label
from ..run_figures import answered_text
from ..storage.urls import redact_url
from . import urls
from .compare_page import build_compare_page
from .guard import Guard
from .run_page import SORTS, build_case_page, build_run_page
from .set_pages import build_set_page, build_sets_page
from .settings import ViewerSettings
from .state import ViewerState, progress_state

__all__ = ["READER_THREADS", "build_app"]

#: Threads that build pages (each holds its own connection to the store).
READER_THREADS = 4
#: The files under ``static/`` the viewer serves, with their content types.
STATIC_FILES = {"viewer.css": "text/css; charset=utf-8", "viewer.js": "text/javascript; charset=utf-8"}


def _finalize(value: Any) -> Any:
    """What a template prints for ``value``: safe markup as it is, nothing for ``None``, any other
    value as text made visible and scrubbed (autoescaping then escapes it)."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return str(value)
    return scrub(visible(str(value)))


def _safe_url(make: Callable[..., str]) -> Callable[..., Markup]:
    """A :mod:`.urls` function whose result a template prints as it is (it is percent-encoded)."""

    @functools.wraps(make)
    def call(*args: Any, **kwargs: Any) -> Markup:
        return Markup(escape(make(*args, **kwargs)))

    return call


#: How much of an id a list or a heading shows (its own page and links keep it whole).
ID_CHARS = 160


def _short(text: Any, limit: int = ID_CHARS) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (a 1 MB id is still a cell)."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _exact(text: str) -> Any:
    """An id as a form field's value must carry it — escaped, neither made visible nor scrubbed —
    when it can travel in a form; else its visible form (the form then finds no such run)."""
    if text.isprintable() and not any("\ud800" <= c <= "\udfff" for c in text):
        return Markup(escape(text))
    return text


def _day(timestamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(timestamp)) if timestamp else "—"


def _date(timestamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp)) if timestamp else "—"


def _percent(value: Any) -> str:
    return "—" if value is None else f"{float(value) * 100:.1f}%"


def _verdict_class(word: str) -> str:
    if word in ("PASSED", "BASELINE", "NO REGRESSION"):
        return "good"
    if word.startswith(("NOT COMPARED", "PENDING")) and "GATE FAILED" not in word:
        return "neutral"
    return "bad"


class _Pages:
    """The templates and the state, and the handler of each route."""

    def __init__(self, settings: ViewerSettings) -> None:
        self.settings = settings
        self.state = ViewerState(settings)
        self.executor = ThreadPoolExecutor(max_workers=READER_THREADS, thread_name_prefix="evalkit-view")
        self.static = {name: resources.files(__package__).joinpath("static", name).read_bytes() for name in STATIC_FILES}
        versions = {name: hashlib.sha256(body).hexdigest()[:12] for name, body in self.static.items()}
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader(__package__, "templates"),
            autoescape=True,
            finalize=_finalize,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.globals.update(
            run_url=_safe_url(urls.run_url),
            case_url=_safe_url(urls.case_url),
            set_url=_safe_url(urls.set_url),
            compare_url=_safe_url(urls.compare_url),
            progress_url=_safe_url(urls.progress_url),
            static=lambda name: Markup(escape(f"/static/{name}?v={versions[name]}")),
            date=_date,
            day=_day,
            percent=_percent,
            answered=answered_text,
            verdict_class=_verdict_class,
            sorts=SORTS,
            store=redact_url(settings.database_url),
        )
        # Marked safe: addresses made by .urls (percent-encoded), and the trend chart, which
        # evalkit draws with every string in it escaped (evalkit.reports.trend_chart).
        self.env.filters["link"] = lambda url: Markup(escape(url))
        self.env.filters["short"] = _short
        self.env.filters["exact"] = _exact
        self.env.filters["trend"] = Markup

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        body = self.env.get_template(template).render({"refresh": None, **context})
        return HTMLResponse(body, status_code=status)

    def not_found(self, what: str) -> HTMLResponse:
        return self.render("error.html", 404, title="Not found", message=what)

    # -- pages (run in a reader thread) ----------------------------------------------------------

    def sets(self, request: Request) -> Response:
        return self.render("sets.html", page=build_sets_page(self.state))

    def set(self, request: Request) -> Response:
        identifier = urls.query(request).get("id")
        page = build_set_page(self.state, identifier) if identifier is not None else None
        if page is None:
            return self.not_found("The store has no run of this set.")
        return self.render("set.html", page=page)

    def run(self, request: Request) -> Response:
        params = urls.query(request)
        run_id = params.get("id")
        page = build_run_page(self.state, run_id, params) if run_id is not None else None
        if page is None:
            return self.not_found("There is no run with this id in the store.")
        return self.render("run.html", page=page, refresh=_refresh_seconds(page.index_seconds) if page.live else None)

    def case(self, request: Request) -> Response:
        params = urls.query(request)
        run_id = params.get("run")
        page = build_case_page(self.state, run_id, params.get("id"), params.get("pos")) if run_id is not None else None
        if page is None:
            return self.not_found("There is no such case (or no such run) in the store.")
        return self.render("case.html", page=page, refresh=None)

    def compare(self, request: Request) -> Response:
        params = urls.query(request)
        base, run = params.get("base"), params.get("run")
        if base is None or run is None:
            return self.render("error.html", 400, title="Two runs are needed", message="Give the two runs: /compare?base=RUN_ID&run=RUN_ID.")
        page = build_compare_page(self.state, base, run, params)
        if page is None:
            return self.not_found("One of the two runs is not in the store.")
        if isinstance(page, str):
            return self.render("error.html", 400, title="These runs cannot be compared", message=page)
        return self.render("compare.html", page=page)

    def progress(self, request: Request) -> Response:
        run_id = urls.query(request).get("id")
        run = self.state.run(run_id) if run_id is not None else None
        if run is None:
            return JSONResponse({"error": "no such run"}, status_code=404)
        live = self.state.liveness(run)
        return JSONResponse({
            "state": progress_state(run, live), "status": run.status.value, "status_label": status_label(run, live),
            "answered": run.answered_count, "cases": run.case_count,
        })

    def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self.static:
            return Response("no such file\n", 404, media_type="text/plain")
        return Response(self.static[name], media_type=STATIC_FILES[name])

    # -- plumbing ------------------------------------------------------------------------------

    def route(self, handler: Callable[[Request], Response]) -> Callable[[Request], Any]:
        """An endpoint running ``handler`` in a reader thread, with store failures as a 503 page."""

        async def endpoint(request: Request) -> Response:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self.executor, self._answer, handler, request)

        return endpoint

    def _answer(self, handler: Callable[[Request], Response], request: Request) -> Response:
        try:
            return handler(request)
        except Exception as exc:  # noqa: BLE001 - one page's bug must not take the viewer down
            # a third-party store's own exception (its damaged file, its lost client) is the
            # store's failure, as every command says it: not a page's bug with a traceback
            said = self.state.store.failure_said(exc)
            if isinstance(said, StorageError):
                return self.render("error.html", 503, title="The results store failed", message=str(said))
            traceback.print_exc(file=sys.stderr)
            return Response("Internal error: this page could not be built; the traceback is in the viewer's output.\n", 500, media_type="text/plain")

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.state.close()


def _refresh_seconds(index_seconds: float) -> int:
    """How often a running run's page looks for new cases: every 5 s, less often for a run that
    takes long to read."""
    return max(5, min(60, round(index_seconds * 4)))


def build_app(settings: ViewerSettings) -> Any:
    """The app (see :func:`evalkit.view.create_app`), guarded by :class:`~.guard.Guard`."""
    pages = _Pages(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        try:
            yield
        finally:
            pages.close()

    routes = [
        Route("/", pages.route(pages.sets)),
        Route("/set", pages.route(pages.set)),
        Route("/run", pages.route(pages.run)),
        Route("/case", pages.route(pages.case)),
        Route("/compare", pages.route(pages.compare)),
        Route("/progress", pages.route(pages.progress)),
        Route("/static/{name}", pages.route(pages.asset)),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.viewer = pages
    return Guard(app, settings)
