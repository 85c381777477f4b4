"""A stdio MCP server paging 4 tools by 2 that talks while it pages
(tests/tap_stdio.rs): a notifications/message before every page-1 answer;
a notifications/tools/list_changed before the first page-1 answer and after
the first page-2 answer."""
import json, sys

TOOLS = [{"name": f"tool-{i}", "inputSchema": {"type": "object"}} for i in range(1, 5)]
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(id, result):
    send({"jsonrpc": "2.0", "id": id, "result": result})


first_pages = second_pages = 0
for line in sys.stdin:
    message = json.loads(line)
    id, method = message.get("id"), message.get("method")
    if id is None:
        continue
    if method == "initialize":
        answer(id, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "notifying", "version": "1"}})
    elif method == "tools/list" and (message.get("params") or {}).get("cursor") is None:
        first_pages += 1
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": f"page 1 #{first_pages}"}})
        if first_pages == 1:
            send(LIST_CHANGED)
        answer(id, {"tools": TOOLS[:2], "nextCursor": "2"})
    elif method == "tools/list":
        second_pages += 1
        answer(id, {"tools": TOOLS[2:]})
        if second_pages == 1:
            send(LIST_CHANGED)
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}})
