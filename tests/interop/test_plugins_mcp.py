"""Plugin tools over MCP (issue 7), driven by the official MCP Python SDK: the example plugin's
`plan_trip_packing` is listed and callable over stdio and Streamable HTTP; installing and
removing a plugin while `sidenote serve` runs sends `tools/list_changed`; a misbehaving plugin
gives a clear tool error while the server keeps serving.

Needs `serve` and `mcp` to load `<workspace>/plugins` at start
(`sidenote_plugins::PluginHost::load_all`) and follow changes (`PluginHost::watch`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import REPO, HttpServer, Notifications, cli, connect

pytestmark = pytest.mark.anyio

EXAMPLE = REPO / "examples" / "plugins" / "vacation-packing"
TRIP = {"destination": "Lake District", "days": 5, "companions": ["dog"]}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def installed(workspace: Path) -> Path:
    """The workspace with the example plugin installed (before any server starts)."""
    out = cli(workspace, "plugin", "install", str(EXAMPLE))
    assert "plan_trip_packing" in out, out
    return workspace


@pytest.fixture
def server(installed: Path, transport: str, request: pytest.FixtureRequest) -> HttpServer | None:
    if transport == "http":
        return request.getfixturevalue("http_server")
    return None


def text(result: Any) -> str:
    assert result.content, result
    return result.content[0].text


async def tool_names(client: Any) -> list[str]:
    return [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]


def write_plugin(root: Path, plugin_id: str, script: str) -> Path:
    d = root / plugin_id
    d.mkdir(parents=True)
    manifest = {"id": plugin_id, "name": plugin_id, "version": "0.1.0", "main": "main.js"}
    (d / "manifest.json").write_text(json.dumps(manifest))
    (d / "main.js").write_text(script)
    return d


async def test_example_plugin_is_listed_and_callable(transport: str, installed: Path, server: HttpServer | None) -> None:
    async with connect(transport, installed, server) as client:
        tools = {t.name: t for t in (await client.list_tools(cache_mode="refresh")).tools}
        assert "plan_trip_packing" in tools
        tool = tools["plan_trip_packing"]
        assert "pack" in (tool.description or "")
        assert tool.input_schema["required"] == ["destination", "days", "companions"]

        res = await client.call_tool("plan_trip_packing", TRIP)
        assert not res.is_error, text(res)
        out = json.loads(text(res))
        assert out["region"]["id"] == "uk-uplands"
        assert out["pictures"]["source"] == "generated"
        dog = next(c for c in out["categories"] if c["name"] == "For the dog")
        assert {"id": "dog-food", "label": "Dog food", "quantity": 5} == {
            k: v for k, v in next(i for i in dog["items"] if i["id"] == "dog-food").items() if k != "note"
        }
        # the model-facing content is the plain JSON: no RenderSpec, no image bytes
        assert '"version": 1' not in text(res) and "data:image" not in text(res)
        # the RenderSpec for the human travels in _meta
        spec = (res.meta or {}).get("sidenote/render")
        assert spec is not None, res.meta
        assert spec["version"] == 1 and spec["type"] in {"list", "stack", "card", "table"}, spec

        # arguments are validated against the plugin's schema before it runs
        bad = await client.call_tool("plan_trip_packing", {"destination": "x", "days": 0, "companions": []})
        assert bad.is_error
        assert "days" in text(bad)


async def test_install_and_remove_while_serving_send_list_changed(workspace: Path, http_server: HttpServer, tmp_path: Path) -> None:
    notes = Notifications()
    async with connect("http", workspace, http_server, mode="legacy", notifications=notes) as client:
        assert "plan_trip_packing" not in await tool_names(client)
        await anyio.sleep(0.3)  # let the session's watcher start
        cli(workspace, "plugin", "install", str(EXAMPLE))
        await notes.wait_for("notifications/tools/list_changed", timeout=15)
        assert "plan_trip_packing" in await tool_names(client)
        res = await client.call_tool("plan_trip_packing", TRIP)
        assert not res.is_error, text(res)

        notes.methods.clear()
        cli(workspace, "plugin", "remove", "vacation-packing")
        await notes.wait_for("notifications/tools/list_changed", timeout=15)
        assert "plan_trip_packing" not in await tool_names(client)


async def test_a_misbehaving_plugin_errors_while_the_server_keeps_serving(transport: str, workspace: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    src = write_plugin(
        tmp_path / "src",
        "spinner",
        """
        joplin.ai.tools.register({ id: 'spin', description: 'loops forever', inputSchema: { type: 'object' },
          handler: async () => { for (;;) { try { while (true) {} } catch (e) {} } } });
        joplin.ai.tools.register({ id: 'boom', description: 'throws', inputSchema: { type: 'object' },
          handler: async () => { throw new RangeError('no trips to the moon'); } });
        joplin.ai.tools.register({ id: 'peek', description: 'fetches a host it may not', inputSchema: { type: 'object' },
          handler: async () => (await joplin.net.fetch('http://127.0.0.1:9/')).status });
        """,
    )
    cli(workspace, "plugin", "install", str(src))
    server = request.getfixturevalue("http_server") if transport == "http" else None
    async with connect(transport, workspace, server) as client:
        res = await client.call_tool("boom", {})
        assert res.is_error and "RangeError: no trips to the moon" in text(res), text(res)
        res = await client.call_tool("peek", {})
        assert res.is_error and "permission denied" in text(res), text(res)
        res = await client.call_tool("spin", {})
        assert res.is_error and "CPU budget" in text(res), text(res)
        # the server, the built-ins and the plugin's other tools keep working
        ok = await client.call_tool("list_notebooks", {})
        assert not ok.is_error, text(ok)
        res = await client.call_tool("boom", {})
        assert res.is_error and "no trips to the moon" in text(res)
