"""Fixtures for driving the real `sidenote` binary with the official MCP Python SDK.

The binary is `$SIDENOTE_BIN`, else `$CARGO_TARGET_DIR/debug/sidenote`, else
`<repo>/target/debug/sidenote`. Every test gets its own workspace directory.
"""

from __future__ import annotations

import os
import re
import sqlite3
import struct
import subprocess
import sys
import zlib
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

REPO = Path(__file__).resolve().parents[2]

READ_TOOLS = [
    "search_notes",
    "semantic_search_notes",
    "read_note",
    "list_notebooks",
    "list_tags",
    "read_image",
]
WRITE_TOOLS = ["create_note", "update_note", "delete_note", "manage_tags", "create_notebook"]
# The registry's fixed order.
ALL_TOOLS = [
    "search_notes",
    "semantic_search_notes",
    "read_note",
    "list_notebooks",
    "list_tags",
    "create_note",
    "update_note",
    "delete_note",
    "manage_tags",
    "create_notebook",
    "read_image",
]
IMAGE_ID = "0123456789abcdef0123456789abcdef"


def sidenote_bin() -> str:
    if os.environ.get("SIDENOTE_BIN"):
        return os.environ["SIDENOTE_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR") or str(REPO / "target")
    return str(Path(target) / "debug" / "sidenote")


BIN = sidenote_bin()


def cli(ws: Path, *args: str) -> str:
    """Run `sidenote --workspace ws ARGS...`; return stdout, fail the test on a non-zero exit."""
    p = subprocess.run([BIN, "--workspace", str(ws), *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"sidenote {' '.join(args)} failed ({p.returncode}): {p.stderr}"
    return p.stdout


def enable_writes(ws: Path) -> None:
    for t in WRITE_TOOLS:
        cli(ws, "config", "set", f"mcp.tool.{t}.enabled", "true")


def journal_actors(ws: Path) -> list[tuple[str, str, str]]:
    """(actor, kind, item_id) of every journal row, oldest first (read-only peek at the db)."""
    con = sqlite3.connect(f"file:{ws / 'sidenote.db'}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in con.execute("select actor, kind, item_id from journal order by seq")]
    finally:
        con.close()


def _png(w: int, h: int) -> bytes:
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * w for _ in range(h))

    def chunk(t: bytes, d: bytes) -> bytes:
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh workspace holding one PNG attachment (id IMAGE_ID), imported from a Joplin RAW dir."""
    ws = tmp_path / "ws"
    raw = tmp_path / "raw"
    (raw / "resources").mkdir(parents=True)
    (raw / "resources" / f"{IMAGE_ID}.png").write_bytes(_png(64, 48))
    (raw / f"{IMAGE_ID}.md").write_text(
        f"red.png\n\nid: {IMAGE_ID}\nmime: image/png\nfile_extension: png\ntype_: 4\n"
    )
    cli(ws, "import", str(raw))
    return ws


@dataclass
class HttpServer:
    proc: subprocess.Popen
    url: str
    mcp_url: str
    token: str

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


@pytest.fixture
def http_server(workspace: Path) -> Any:
    """`sidenote serve --addr 127.0.0.1:0`, its printed URLs and the API token."""
    proc = subprocess.Popen(
        [BIN, "--workspace", str(workspace), "serve", "--addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=sys.stderr,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = mcp_url = None
        for _ in range(10):
            line = proc.stdout.readline()
            if not line:
                break
            if m := re.match(r"sidenote listening on (http://127\.0\.0\.1:\d+)$", line.strip()):
                url = m.group(1)
            if m := re.match(r"MCP: (http://\S+/mcp)$", line.strip()):
                mcp_url = m.group(1)
                break
        assert url and mcp_url, "serve did not print its URLs"
        assert not url.endswith(":0"), "serve printed port 0 instead of the real port"
        token = cli(workspace, "config", "get", "api.token").strip()
        assert re.fullmatch(r"[0-9a-f]{32,}", token), token
        yield HttpServer(proc, url, mcp_url, token)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Notifications:
    """Collects server notifications a client receives."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method:
            self.methods.append(method)
            self.event.set()
            self.event = anyio.Event()

    async def wait_for(self, method: str, timeout: float = 10.0) -> None:
        with anyio.fail_after(timeout):
            while method not in self.methods:
                await self.event.wait()


@asynccontextmanager
async def connect(
    transport: str,
    ws: Path,
    server: HttpServer | None = None,
    *,
    mode: str = "auto",
    name: str = "pytest-client",
    notifications: Notifications | None = None,
) -> AsyncIterator[Client]:
    """An SDK `Client` connected to the binary over `transport` ("stdio" or "http")."""
    http = None
    if transport == "stdio":
        params = StdioServerParameters(command=BIN, args=["--workspace", str(ws), "mcp"])
        target: Any = stdio_client(params, errlog=sys.stderr)
    else:
        assert server is not None
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {server.token}"},
            timeout=httpx2.Timeout(30.0, read=300.0),
        )
        target = streamable_http_client(server.mcp_url, http_client=http)
    try:
        async with Client(
            target,
            mode=mode,
            read_timeout_seconds=20,
            client_info=Implementation(name=name, version="1.0"),
            message_handler=notifications,
        ) as client:
            yield client
    finally:
        if http is not None:
            await http.aclose()
