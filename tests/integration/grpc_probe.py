#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One raw gRPC call, for tests that must speak to rocenetd in ways rocectl
does not: over TCP with or without TLS, with hand-made request bytes.

    grpc_probe.py TARGET METHOD [--hex BYTES] [--string-field N:LEN] [--ca F] [--cert F --key F]

Prints one JSON line: {"code": "OK" | status name, "message": ..., "bytes": n}.
The request is given as the serialized protobuf in hex (empty: the empty
message), so no generated code is needed."""

from __future__ import annotations

import argparse
import json
import sys

import grpc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("method")
    ap.add_argument("--hex", default="")
    ap.add_argument("--string-field", metavar="NUMBER:LENGTH",
                    help="append a string field of LENGTH bytes (too long for --hex)")
    ap.add_argument("--ca")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--timeout", type=float, default=5)
    args = ap.parse_args()

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    if args.ca:
        creds = grpc.ssl_channel_credentials(
            root_certificates=read(args.ca),
            private_key=read(args.key) if args.key else None,
            certificate_chain=read(args.cert) if args.cert else None)
        channel = grpc.secure_channel(args.target, creds)
    else:
        channel = grpc.insecure_channel(args.target)
    request = bytes.fromhex(args.hex)
    if args.string_field:
        number, length = (int(x) for x in args.string_field.split(":"))
        varint, n = b"", length
        while True:
            varint += bytes([(n & 0x7F) | (0x80 if n >> 7 else 0)])
            n >>= 7
            if not n:
                break
        request += bytes([number << 3 | 2]) + varint + b"x" * length
    call = channel.unary_unary(args.method)
    try:
        reply = call(request, timeout=args.timeout)
        out = {"code": "OK", "message": "", "bytes": len(reply)}
    except grpc.RpcError as e:
        out = {"code": e.code().name, "message": e.details() or "", "bytes": 0}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
