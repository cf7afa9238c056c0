#!/usr/bin/env python3
"""A WebSocket-over-HTTP/3 (RFC 9220) client on aioquic, for riptide's
http3/websocket_test.go: an independent HTTP/3 and QPACK implementation.

usage: aioquic_websocket.py HOST PORT MESSAGE

Connects to HOST:PORT over QUIC (ALPN h3, certificate not verified), waits
for the server's SETTINGS, sends an extended CONNECT for /ws (:protocol
websocket, sec-websocket-version 13), and when answered 2xx sends MESSAGE
as a masked text frame on the request stream, reads the echo, sends a
close frame (1000) and reads the server's. Prints one JSON object:
{"connect_setting", "status", "echo", "close_code"}. The WebSocket frames
are written and parsed here (RFC 6455 section 5), not by riptide's codec.
"""

import asyncio
import json
import os
import ssl
import struct
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.h3.connection import FrameUnexpected
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent

ENABLE_CONNECT_PROTOCOL = 0x8


def frame(opcode, payload):
    """A final, masked client frame (payload under 64 KiB)."""
    key = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    else:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def parse(buf):
    """(opcode, payload, rest) of the first whole server frame, or None."""
    if len(buf) < 2:
        return None
    opcode, n, off = buf[0] & 0x0F, buf[1] & 0x7F, 2
    if buf[1] & 0x80:
        raise SystemExit("server frame is masked")
    if n == 126:
        if len(buf) < 4:
            return None
        n, off = struct.unpack("!H", buf[2:4])[0], 4
    elif n == 127:
        if len(buf) < 10:
            return None
        n, off = struct.unpack("!Q", buf[2:10])[0], 10
    if len(buf) < off + n:
        return None
    return opcode, bytes(buf[off:off + n]), buf[off + n:]


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic)
        self.sid = None
        self.headers = asyncio.get_running_loop().create_future()
        self.buf = bytearray()
        self.data = asyncio.Event()

    def quic_event_received(self, event: QuicEvent):
        for ev in self.http.handle_event(event):
            if getattr(ev, "stream_id", None) != self.sid:
                continue
            if isinstance(ev, HeadersReceived) and not self.headers.done():
                self.headers.set_result(ev.headers)
            elif isinstance(ev, DataReceived):
                self.buf += ev.data
                self.data.set()

    async def next_frame(self):
        while True:
            got = parse(self.buf)
            if got is not None:
                opcode, payload, rest = got
                self.buf = bytearray(rest)
                return opcode, payload
            self.data.clear()
            await self.data.wait()


async def run(host, port, message):
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name="localhost")
    config.verify_mode = ssl.CERT_NONE
    out = {"connect_setting": False, "status": 0, "echo": None, "close_code": None}
    async with connect(host, port, configuration=config, create_protocol=Client) as c:
        c.transmit()
        for _ in range(200):
            if c.http.received_settings is not None:
                break
            await asyncio.sleep(0.05)
        settings = c.http.received_settings or {}
        out["connect_setting"] = settings.get(ENABLE_CONNECT_PROTOCOL) == 1
        c.sid = c._quic.get_next_available_stream_id()
        c.http.send_headers(c.sid, [
            (b":method", b"CONNECT"),
            (b":protocol", b"websocket"),
            (b":scheme", b"https"),
            (b":authority", b"localhost"),
            (b":path", b"/ws"),
            (b"sec-websocket-version", b"13"),
        ], end_stream=False)
        c.transmit()
        headers = await asyncio.wait_for(c.headers, 20)
        out["status"] = int(dict(headers)[b":status"])
        if 200 <= out["status"] < 300:
            c.http.send_data(c.sid, frame(0x1, message.encode()), end_stream=False)
            c.transmit()
            opcode, payload = await asyncio.wait_for(c.next_frame(), 20)
            if opcode == 0x1:
                out["echo"] = payload.decode()
            c.http.send_data(c.sid, frame(0x8, struct.pack("!H", 1000)), end_stream=False)
            c.transmit()
            opcode, payload = await asyncio.wait_for(c.next_frame(), 20)
            if opcode == 0x8 and len(payload) >= 2:
                out["close_code"] = struct.unpack("!H", payload[:2])[0]
            try:
                c.http.send_data(c.sid, b"", end_stream=True)
                c.transmit()
            except FrameUnexpected:
                pass  # the server ended the stream after its close frame
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    asyncio.run(run(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
