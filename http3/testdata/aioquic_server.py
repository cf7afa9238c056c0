#!/usr/bin/env python3
"""A minimal HTTP/3 server on aioquic for the HTTP/3 client's interop test
(http3/client_test.go, TestClientInteropAioquic).

usage: aioquic_server.py CERTFILE KEYFILE RUNSIZE

Listens on 127.0.0.1 on a free UDP port, prints "PORT n" on standard output
once ready, and serves until standard input closes:

  GET  /hello     200 "Hello, World!" (content-type: text/plain)
  POST /echo      the body, with x-body-sha256
  POST /trailers  "request trailers: NAME: VALUE, ..." with response
                  trailers x-body-sha256 and x-server-trailer: riptide-h3
  GET  /c/RUN/I   answered once RUNSIZE requests of RUN are open at once
                  (503 after 20 s)
"""

import asyncio
import hashlib
import socket
import sys

from aioquic.asyncio import serve
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ProtocolNegotiated, QuicEvent

RUN_SIZE = int(sys.argv[3])
runs = {}  # RUN -> [count, asyncio.Event]


class Request:
    def __init__(self, headers):
        self.headers = dict(headers)
        self.body = bytearray()
        self.trailers = []
        self.headers_seen = True


class Protocol(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = None
        self.requests = {}

    def quic_event_received(self, event: QuicEvent):
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self.h3 = H3Connection(self._quic)
        if self.h3 is None:
            return
        for ev in self.h3.handle_event(event):
            if isinstance(ev, HeadersReceived):
                req = self.requests.get(ev.stream_id)
                if req is None:
                    req = Request(ev.headers)
                    self.requests[ev.stream_id] = req
                else:
                    req.trailers = ev.headers
                if ev.stream_ended:
                    self.handle(ev.stream_id, req)
            elif isinstance(ev, DataReceived):
                req = self.requests[ev.stream_id]
                req.body += ev.data
                if ev.stream_ended:
                    self.handle(ev.stream_id, req)

    def handle(self, stream_id, req):
        del self.requests[stream_id]
        asyncio.ensure_future(self.respond(stream_id, req))

    def send(self, stream_id, status, headers, body, trailers=None):
        self.h3.send_headers(stream_id, [(b":status", str(status).encode())] + headers)
        self.h3.send_data(stream_id, bytes(body), end_stream=not trailers)
        if trailers:
            self.h3.send_headers(stream_id, trailers, end_stream=True)
        self.transmit()

    async def respond(self, stream_id, req):
        path = req.headers.get(b":path", b"").decode()
        text = [(b"content-type", b"text/plain")]
        if path == "/hello":
            self.send(stream_id, 200, text, b"Hello, World!")
        elif path == "/echo":
            self.send(stream_id, 200, [(b"x-body-sha256", hashlib.sha256(req.body).hexdigest().encode())], req.body)
        elif path == "/trailers":
            got = ", ".join(n.decode() + ": " + v.decode() for n, v in req.trailers)
            self.send(stream_id, 200, text, ("request trailers: " + got).encode(),
                      [(b"x-body-sha256", hashlib.sha256(req.body).hexdigest().encode()),
                       (b"x-server-trailer", b"riptide-h3")])
        elif path.startswith("/c/"):
            run = path.split("/")[2]
            r = runs.setdefault(run, [0, asyncio.Event()])
            r[0] += 1
            if r[0] == RUN_SIZE:
                r[1].set()
            try:
                await asyncio.wait_for(r[1].wait(), 20)
                self.send(stream_id, 200, text, b"all open at once")
            except asyncio.TimeoutError:
                self.send(stream_id, 503, text, b"fewer open at once")
        else:
            self.send(stream_id, 404, text, b"not found")


async def main():
    config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN, max_datagram_frame_size=None)
    config.load_cert_chain(sys.argv[1], sys.argv[2])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    await serve("127.0.0.1", port, configuration=config, create_protocol=Protocol)
    print("PORT", port, flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(main())
