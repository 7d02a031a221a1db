"""A Python service Tori builds without a manifest: app.py is started with python3 app.py.

The standard library is enough here. A requirements.txt that lists packages would be
installed with pip (into .tori/python, on PYTHONPATH) before the start; packages reach the
sandbox only from where the zone's host reaches them.
"""
import json
import os
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/api/time":
            body = json.dumps({"now": datetime.now(timezone.utc).isoformat()}).encode()
            kind = "application/json"
        else:
            body = b"hello from python"
            kind = "text/plain; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8000"))
    print(f"listening on {port}")
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
