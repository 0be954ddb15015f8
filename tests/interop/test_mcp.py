"""The real `sidenote` binary, driven by the official MCP Python SDK (mcp==2.3.0) over stdio
(`sidenote mcp`) and Streamable HTTP (`sidenote serve` → /mcp).

`mode="auto"` makes the SDK open with `server/discover` (protocol 2026-07-28, stateless);
`mode="legacy"` uses the `initialize` handshake (2025-11-25).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from conftest import (
    ALL_TOOLS,
    IMAGE_ID,
    READ_TOOLS,
    WRITE_TOOLS,
    HttpServer,
    Notifications,
    cli,
    connect,
    enable_writes,
    journal_actors,
)

pytestmark = pytest.mark.anyio

TRANSPORTS = ["stdio", "http"]
MODES = ["auto", "legacy"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def server(transport: str, request: pytest.FixtureRequest) -> HttpServer | None:
    """The HTTP server when the transport is http (stdio needs none)."""
    if transport == "http":
        return request.getfixturevalue("http_server")
    return None


def text(result: Any) -> str:
    assert result.content, result
    return result.content[0].text


def payload(result: Any) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


async def tool_names(client: Any) -> list[str]:
    res = await client.list_tools(cache_mode="refresh")
    return [t.name for t in res.tools]


# ---------------------------------------------------------------- handshake and listing


@pytest.mark.parametrize("mode", MODES)
async def test_negotiation_and_default_tool_set(transport: str, server: HttpServer | None, workspace: Path, mode: str) -> None:
    async with connect(transport, workspace, server, mode=mode) as client:
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert client.protocol_version == expected
        assert client.server_info is not None and client.server_info.name == "sidenote"
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        # Read tools on, write tools off by default: exactly the read set, in registry order.
        assert await tool_names(client) == READ_TOOLS
        tools = (await client.list_tools(cache_mode="refresh")).tools
        assert all(t.input_schema["type"] == "object" for t in tools)
        assert all(t.annotations and t.annotations.read_only_hint for t in tools)


async def test_write_tools_listed_once_enabled(transport: str, server: HttpServer | None, workspace: Path) -> None:
    enable_writes(workspace)
    cli(workspace, "config", "set", "mcp.tool.read_image.enabled", "false")
    async with connect(transport, workspace, server) as client:
        assert await tool_names(client) == [t for t in ALL_TOOLS if t != "read_image"]


async def test_disabled_tool_is_hidden_and_refused_with_how_to_enable(transport: str, server: HttpServer | None, workspace: Path) -> None:
    async with connect(transport, workspace, server) as client:
        assert "create_note" not in await tool_names(client)
        res = await client.call_tool("create_note", {"title": "nope"})
        assert res.is_error
        assert "sidenote config set mcp.tool.create_note.enabled true" in text(res)
    # ...and nothing was written.
    assert not [r for r in journal_actors(workspace) if r[0].startswith("mcp:")]


async def test_unknown_tool_is_a_jsonrpc_invalid_params_error(transport: str, server: HttpServer | None, workspace: Path) -> None:
    async with connect(transport, workspace, server, mode="legacy") as client:
        with pytest.raises(MCPError) as e:
            await client.call_tool("no_such_tool", {})
        assert e.value.error.code == -32602
        assert "no_such_tool" in e.value.error.message


# ---------------------------------------------------------------- every tool, valid and invalid

# tool -> (valid arguments builder, invalid arguments, text the validation error must contain)
INVALID = {
    "search_notes": ({"query": 5}, "'query'"),
    "semantic_search_notes": ({}, "query"),
    "read_note": ({"id": "x", "offset": -1}, "offset"),
    "list_notebooks": (None, None),
    "list_tags": (None, None),
    "create_note": ({"body": "no title"}, "title"),
    "update_note": ({"id": 42}, "'id'"),
    "delete_note": ({}, "id"),
    "manage_tags": ({"note_id": "x", "add": "not-a-list"}, "add"),
    "create_notebook": ({"title": ["x"]}, "title"),
    "read_image": ({"id": IMAGE_ID, "resolution": "giant"}, "resolution"),
}


async def test_every_tool_with_valid_and_invalid_arguments(transport: str, server: HttpServer | None, workspace: Path) -> None:
    enable_writes(workspace)
    async with connect(transport, workspace, server) as client:
        assert await tool_names(client) == ALL_TOOLS
        nb = payload(await client.call_tool("create_notebook", {"title": "Interop"}))
        assert nb["title"] == "Interop" and len(nb["id"]) == 32
        note = payload(await client.call_tool("create_note", {"title": "Valid call", "body": "alpha beta", "notebook_id": nb["id"]}))
        nid = note["id"]
        valid: dict[str, dict[str, Any]] = {
            "search_notes": {"query": "alpha"},
            "semantic_search_notes": {"query": "alpha"},
            "read_note": {"id": nid, "max_chars": 5},
            "list_notebooks": {},
            "list_tags": {},
            "create_note": {"title": "Another"},
            "update_note": {"id": nid, "append": " gamma"},
            "manage_tags": {"note_id": nid, "add": ["interop"]},
            "create_notebook": {"title": "Second"},
            "read_image": {"id": IMAGE_ID, "resolution": "low"},
            "delete_note": {"id": nid},  # last: it trashes the note the others use
        }
        for tool, args in valid.items():
            res = await client.call_tool(tool, args)
            if tool == "semantic_search_notes":
                # No semantic index yet: a clear, recoverable tool error.
                assert res.is_error and "semantic index" in text(res).lower(), text(res)
            elif tool == "read_image":
                assert not res.is_error, res
                assert res.content[0].type == "image" and res.content[0].mime_type.startswith("image/")
                assert len(res.content[0].data) > 20
            else:
                assert not res.is_error, f"{tool}: {text(res)}"
        for tool, (args, needle) in INVALID.items():
            if args is None:
                continue
            res = await client.call_tool(tool, args)
            assert res.is_error, f"{tool} accepted invalid {args}"
            assert needle in text(res), f"{tool}: {text(res)!r} should mention {needle}"
        # A recoverable error from a handler (not from the schema).
        res = await client.call_tool("read_note", {"id": "f" * 32})
        assert res.is_error and "not found" in text(res).lower()


# ---------------------------------------------------------------- round trip and journal


@pytest.mark.parametrize("mode", MODES)
async def test_round_trip_create_read_update_search_tag_trash(transport: str, server: HttpServer | None, workspace: Path, mode: str) -> None:
    enable_writes(workspace)
    client_name = f"roundtrip-{transport}-{mode}"
    async with connect(transport, workspace, server, mode=mode, name=client_name) as client:
        created = payload(await client.call_tool("create_note", {"title": "Packing list", "body": "tent\nstove"}))
        nid = created["id"]

        read = payload(await client.call_tool("read_note", {"id": nid}))
        assert read["title"] == "Packing list" and "tent" in read["body"]

        payload(await client.call_tool("update_note", {"id": nid, "append": "\nheadlamp", "replace_text": {"find": "stove", "replace": "gas stove"}}))
        read = payload(await client.call_tool("read_note", {"id": nid}))
        assert "headlamp" in read["body"] and "gas stove" in read["body"]

        found = payload(await client.call_tool("search_notes", {"query": "headlamp"}))
        assert [r["id"] for r in found["results"]] == [nid]

        tagged = payload(await client.call_tool("manage_tags", {"note_id": nid, "add": ["camping"]}))
        assert "camping" in json.dumps(tagged)
        tags = payload(await client.call_tool("list_tags", {}))
        assert "camping" in [t["title"] for t in tags["tags"]]
        found = payload(await client.call_tool("search_notes", {"query": "tag:camping"}))
        assert [r["id"] for r in found["results"]] == [nid]

        trashed = payload(await client.call_tool("delete_note", {"id": nid}))
        assert trashed["trashed"] is True
        gone = await client.call_tool("read_note", {"id": nid})
        assert gone.is_error
        found = payload(await client.call_tool("search_notes", {"query": "headlamp"}))
        assert found["results"] == []

    # Every write is journaled with the client's name as the actor.
    rows = [r for r in journal_actors(workspace) if r[2] == nid]
    kinds = [k for _, k, _ in rows]
    assert kinds[0] == "note_create" and kinds[-1] == "note_trash", kinds
    assert "tag_add" in kinds and "note_update" in kinds
    assert {a for a, _, _ in rows} == {f"mcp:{client_name}"}


# ---------------------------------------------------------------- tools/list_changed


async def test_list_changed_sent_when_a_switch_changes_legacy(transport: str, server: HttpServer | None, workspace: Path) -> None:
    notes = Notifications()
    async with connect(transport, workspace, server, mode="legacy", notifications=notes) as client:
        assert "create_note" not in await tool_names(client)
        await anyio.sleep(0.3)  # let the session's watcher start (and the GET stream open)
        cli(workspace, "config", "set", "mcp.tool.create_note.enabled", "true")
        await notes.wait_for("notifications/tools/list_changed")
        assert "create_note" in await tool_names(client)
        res = await client.call_tool("create_note", {"title": "now allowed"})
        assert not res.is_error, text(res)


async def test_list_changed_via_subscriptions_listen_2026(transport: str, server: HttpServer | None, workspace: Path) -> None:
    async with connect(transport, workspace, server, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True) as sub:
            assert sub.honored.tools_list_changed
            cli(workspace, "config", "set", "mcp.tool.manage_tags.enabled", "true")
            events = []
            with anyio.fail_after(10):
                async for event in sub:
                    events.append(event)
                    break
            assert events, "the subscription ended without a tools/list_changed event"
        assert "manage_tags" in await tool_names(client)


# ---------------------------------------------------------------- HTTP only: auth, guards, raw wire


def rpc(method: str, params: dict | None = None, id: int | None = 1) -> dict:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        msg["id"] = id
    if params is not None:
        msg["params"] = params
    return msg


ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def first_json(resp: httpx2.Response) -> dict:
    """The JSON-RPC message of a JSON or SSE response."""
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        for line in resp.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                return json.loads(line[5:])
        raise AssertionError(f"no data in SSE response: {resp.text!r}")
    return resp.json()


INIT_2025_11 = rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}})


def test_http_auth_401_and_dns_rebinding_403(http_server: HttpServer) -> None:
    url, tok = http_server.mcp_url, http_server.token
    with httpx2.Client(timeout=10) as h:
        r = h.post(url, json=INIT_2025_11, headers=ACCEPT)
        assert r.status_code == 401 and "error" in r.json() and "token" in r.json()["error"].lower()
        r = h.post(url, json=INIT_2025_11, headers={**ACCEPT, "Authorization": "Bearer wrong"})
        assert r.status_code == 401 and "Invalid" in r.json()["error"]
        r = h.post(f"{url}?token=wrong", json=INIT_2025_11, headers=ACCEPT)
        assert r.status_code == 401
        # Right token, in the header or the query.
        r = h.post(url, json=INIT_2025_11, headers={**ACCEPT, "Authorization": f"Bearer {tok}"})
        assert r.status_code == 200, r.text
        assert first_json(r)["result"]["protocolVersion"] == "2025-11-25"
        r = h.post(f"{url}?token={tok}", json=INIT_2025_11, headers=ACCEPT)
        assert r.status_code == 200, r.text
        # Foreign Host / Origin: 403 even with the right token; loopback names are fine.
        auth = {**ACCEPT, "Authorization": f"Bearer {tok}"}
        r = h.post(url, json=INIT_2025_11, headers={**auth, "Host": "evil.example"})
        assert r.status_code == 403
        r = h.post(url, json=INIT_2025_11, headers={**auth, "Origin": "http://evil.example"})
        assert r.status_code == 403
        r = h.post(url, json=INIT_2025_11, headers={**auth, "Host": f"localhost:{http_server.port}", "Origin": f"http://localhost:{http_server.port}"})
        assert r.status_code == 200, r.text
        # Other paths: not found (JSON), still behind the Host guard.
        r = h.get(f"{http_server.url}/nope")
        assert r.status_code == 404


def test_http_versions_discover_and_unknown_method(http_server: HttpServer) -> None:
    auth = {**ACCEPT, "Authorization": f"Bearer {http_server.token}"}
    url = http_server.mcp_url
    with httpx2.Client(timeout=10) as h:
        for version in ["2025-06-18", "2025-11-25"]:
            body = rpc("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}})
            r = h.post(url, json=body, headers=auth)
            assert r.status_code == 200, r.text
            assert first_json(r)["result"]["protocolVersion"] == version
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        modern = {**auth, "MCP-Protocol-Version": "2026-07-28"}
        r = h.post(url, json=rpc("server/discover", {"_meta": meta}), headers={**modern, "Mcp-Method": "server/discover"})
        assert r.status_code == 200, r.text
        result = first_json(r)["result"]
        assert "2026-07-28" in result["supportedVersions"] and result["resultType"] == "complete"
        t0 = time.monotonic()
        r = h.post(url, json=rpc("no/such_method", {"_meta": meta}), headers={**modern, "Mcp-Method": "no/such_method"})
        assert time.monotonic() - t0 < 2
        msg = first_json(r) if r.status_code == 200 else r.json()
        assert msg["error"]["code"] == -32601, msg


def test_stdio_unknown_method_answers_at_once(workspace: Path) -> None:
    """A stdio server must answer an unknown first request (the SDK's server/discover probe
    on older servers) with -32601 at once; here any unknown method is checked raw."""
    import subprocess

    from conftest import BIN

    p = subprocess.Popen([BIN, "--workspace", str(workspace), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert p.stdin and p.stdout
        t0 = time.monotonic()
        p.stdin.write(json.dumps(INIT_2025_11) + "\n")
        p.stdin.flush()
        init = json.loads(p.stdout.readline())
        assert init["result"]["protocolVersion"] == "2025-11-25"
        p.stdin.write(json.dumps(rpc("notifications/initialized", id=None)) + "\n")
        p.stdin.write(json.dumps(rpc("bogus/method", {}, id=2)) + "\n")
        p.stdin.flush()
        resp = json.loads(p.stdout.readline())
        assert resp["id"] == 2 and resp["error"]["code"] == -32601
        assert time.monotonic() - t0 < 5
    finally:
        p.stdin.close() if p.stdin else None
        p.wait(timeout=10)
        # stdio mode exits cleanly when the client closes stdin
        assert p.returncode == 0
