"""Fixtures of the package's tests: the checkout, the `agora` binary, a fake model server."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def agora_bin() -> str:
    """The command line built from this checkout (`AGORA_BIN`, else target/release or debug)."""
    candidates = [os.environ.get("AGORA_BIN")] + [str(ROOT / "target" / p / "agora") for p in ("release", "debug")]
    for c in candidates:
        if c and os.path.exists(c):
            return c
    pytest.fail("no agora binary: build it with `cargo build --release` or set AGORA_BIN")


def legal_answer(body: dict) -> str:
    """A legal answer for the request, chosen by a hash of its messages (as the Rust fake
    server of test-support does): the same request always gets the same answer."""
    h = int.from_bytes(hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).digest()[:8], "big")
    rf = body.get("response_format") or {}
    schema = (rf.get("json_schema") or {}).get("schema") or rf.get("schema") or {}
    field = next((f for f in schema.get("required", []) if f != "reasoning"), "action")
    prop = schema.get("properties", {}).get(field, {})
    if prop.get("enum"):
        value = prop["enum"][h % len(prop["enum"])]
    elif prop.get("type") == "integer":
        lo, hi = prop.get("minimum", 0), prop.get("maximum", 10)
        value = lo + h % max(hi - lo + 1, 1)
    elif prop.get("type") == "array":
        n, hi = prop.get("minItems", 1), prop.get("items", {}).get("maximum", 0)
        value = [(h >> (i * 3)) % (hi + 1) for i in range(n)]
    else:
        value = 0
    return json.dumps({field: value, "reason": "fake server"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _send(self, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self._send({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        content = legal_answer(body)
        self._send(
            {
                "id": "fake",
                "object": "chat.completion",
                "model": "fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            }
        )

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="session")
def fake_server() -> str:
    """An OpenAI-compatible fake model server on loopback; yields its `/v1` endpoint."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
