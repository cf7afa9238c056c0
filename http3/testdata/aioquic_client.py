#!/usr/bin/env python3
"""An HTTP/3 client on aioquic for riptide's interop tests (http3/interop_clients_test.go).

usage: aioquic_client.py HOST PORT CAFILE CASE [ARG]

Connects to HOST:PORT over QUIC (ALPN h3), verifying the server against
CAFILE with server name "localhost", runs one case on one connection and
prints one JSON object per response on standard output:
{"path", "status", "headers": [[name, value]...], "trailers": [...],
 "body_len", "body_sha256", "body_text" (first 200 bytes, for messages)}.

Cases:
  get              GET /hello
  post FILE        POST /echo with FILE's bytes as the body
  trailers VALUE   POST /trailers with a body and the request trailer
                   x-client-trailer: VALUE
  concurrent RUN   GET /c/RUN/0 ... /c/RUN/49, all opened before any reply
"""

import asyncio
import hashlib
import json
import ssl
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent

STREAMS = 50


class Response:
    def __init__(self, path):
        self.path = path
        self.headers = None
        self.trailers = []
        self.body = bytearray()
        self.done = asyncio.get_running_loop().create_future()

    def result(self):
        status = 0
        headers = []
        for name, value in self.headers or []:
            if name == b":status":
                status = int(value)
            else:
                headers.append([name.decode(), value.decode()])
        return {
            "path": self.path,
            "status": status,
            "headers": headers,
            "trailers": [[n.decode(), v.decode()] for n, v in self.trailers],
            "body_len": len(self.body),
            "body_sha256": hashlib.sha256(self.body).hexdigest(),
            "body_text": bytes(self.body[:200]).decode("latin-1"),
        }


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic)
        self.responses = {}

    def quic_event_received(self, event: QuicEvent):
        for ev in self.http.handle_event(event):
            resp = self.responses.get(getattr(ev, "stream_id", None))
            if resp is None:
                continue
            if isinstance(ev, HeadersReceived):
                if resp.headers is None:
                    resp.headers = ev.headers
                else:
                    resp.trailers = ev.headers
            elif isinstance(ev, DataReceived):
                resp.body += ev.data
            if getattr(ev, "stream_ended", False) and not resp.done.done():
                resp.done.set_result(None)

    def start(self, method, path, body=None, trailers=None):
        sid = self._quic.get_next_available_stream_id()
        resp = Response(path)
        self.responses[sid] = resp
        headers = [
            (b":method", method.encode()),
            (b":scheme", b"https"),
            (b":authority", b"localhost"),
            (b":path", path.encode()),
            (b"user-agent", b"aioquic-interop"),
        ]
        if body is not None and trailers is None:
            headers.append((b"content-length", str(len(body)).encode()))
        self.http.send_headers(sid, headers, end_stream=body is None)
        if body is not None:
            self.http.send_data(sid, body, end_stream=trailers is None)
        if trailers is not None:
            self.http.send_headers(sid, trailers, end_stream=True)
        self.transmit()
        return resp


async def run(host, port, cafile, case, arg):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name="localhost")
    config.verify_mode = ssl.CERT_REQUIRED
    config.load_verify_locations(cafile)
    async with connect(host, port, configuration=config, create_protocol=Client) as client:
        if case == "get":
            pending = [client.start("GET", "/hello")]
        elif case == "post":
            with open(arg, "rb") as f:
                pending = [client.start("POST", "/echo", body=f.read())]
        elif case == "trailers":
            pending = [client.start("POST", "/trailers", body=b"a body before trailers",
                                    trailers=[(b"x-client-trailer", arg.encode())])]
        elif case == "concurrent":
            pending = [client.start("GET", "/c/%s/%d" % (arg, i)) for i in range(STREAMS)]
        else:
            raise SystemExit("unknown case " + case)
        await asyncio.wait_for(asyncio.gather(*(r.done for r in pending)), 60)
        for r in pending:
            print(json.dumps(r.result()))


if __name__ == "__main__":
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    asyncio.run(run(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None))
