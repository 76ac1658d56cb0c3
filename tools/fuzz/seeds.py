"""Writes the seed corpora for the libFuzzer targets in tools/fuzz/targets, one small file per seed.

    python3 tools/fuzz/seeds.py OUT_DIR        → OUT_DIR/{y4m,onnx,trace,http,infer-response}/seed-*

The seeds mirror what the project's own tests and tools produce: the Y4M streams the Stream tests write (every
chroma tag, odd sizes, `Xts_us` frame parameters, truncated tails), the small conformance models of
tools/conformance/models.py (when the `onnx` package is installed; a hand-encoded model otherwise), colorcam traces
as Tests/TraceAnalysisTests/TraceReportTests.swift builds them (array and object form, cut at several points like a killed
writer), and the preview server's requests (Tests/PreviewTests). Deterministic: the same files every run.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "seed-" + name), "wb") as f:
        f.write(data)


# ---- Y4M -------------------------------------------------------------------------------------------------------

CHROMA = {"420jpeg": (2, 2), "420paldv": (2, 2), "420mpeg2": (2, 2), "420": (2, 2), "422": (2, 1), "444": (1, 1),
          "mono": None}


def frame_bytes(w, h, chroma):
    sub = CHROMA[chroma]
    if sub is None:
        return w * h
    cw, ch = -(-w // sub[0]), -(-h // sub[1])
    return w * h + 2 * cw * ch


def y4m(w, h, chroma, frames, extra="", frame_params=None, tag=True):
    head = f"YUV4MPEG2 W{w} H{h} F30:1 Ip A1:1" + (f" C{chroma}" if tag else "") + extra + "\n"
    out = bytearray(head.encode())
    size = frame_bytes(w, h, chroma)
    for i in range(frames):
        params = frame_params(i) if frame_params else ""
        out += b"FRAME" + params.encode() + b"\n" + bytes((i * 37 + k * 11) & 0xFF for k in range(size))
    return bytes(out)


def y4m_seeds(out):
    d = os.path.join(out, "y4m")
    for chroma in CHROMA:
        write(d, f"{chroma}-3x3", y4m(3, 3, chroma, 2))
    write(d, "default-chroma-4x2", y4m(4, 2, "420jpeg", 2, tag=False))
    write(d, "timestamps", y4m(4, 4, "420jpeg", 3, frame_params=lambda i: f" Xts_us={i * 33333}"))
    write(d, "negative-ts", y4m(2, 2, "444", 2, frame_params=lambda i: f" Xts_us=-{i + 1} Xother"))
    write(d, "colorrange-full", y4m(2, 2, "420mpeg2", 1, extra=" XCOLORRANGE=FULL"))
    write(d, "colorrange-limited", y4m(5, 3, "422", 1, extra=" XCOLORRANGE=LIMITED XYSCSS=420JPEG"))
    write(d, "no-frames", y4m(8, 8, "mono", 0))
    write(d, "rate-ntsc", b"YUV4MPEG2 W2 H2 F30000:1001 I? A0:0 Cmono\nFRAME\n\x10\x20\x30\x40")
    whole = y4m(4, 4, "420jpeg", 2, frame_params=lambda i: f" Xts_us={i}")
    write(d, "truncated-payload", whole[:-5])
    write(d, "truncated-frame-line", whole[:whole.rindex(b"FRAME") + 3])
    write(d, "garbage-after-frame", y4m(2, 2, "mono", 1) + b"FRAMX\n")


# ---- ONNX ------------------------------------------------------------------------------------------------------

def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, wire, payload):
    key = varint(number << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def tiny_model():
    """A hand-encoded ModelProto: Conv with a raw-data weight, a float-list bias, attributes of every kind."""
    weight = field(1, 2, varint(2) + varint(1) + varint(1) + varint(1)) + field(2, 0, 1) + field(8, 2, b"w") \
        + field(9, 2, struct.pack("<2f", 0.5, -1.0))
    bias = field(1, 0, 2) + field(2, 0, 1) + field(8, 2, b"b") + field(4, 2, struct.pack("<2f", 0.1, 0.2))
    shape_i64 = field(1, 0, 1) + field(2, 0, 7) + field(8, 2, b"s") + field(7, 0, 3)
    attrs = [field(1, 2, b"kernel_shape") + field(8, 2, varint(1) + varint(1)) + field(20, 0, 7),
             field(1, 2, b"alpha") + field(2, 5, struct.pack("<f", 0.2)) + field(20, 0, 1),
             field(1, 2, b"group") + field(3, 0, 1) + field(20, 0, 2),
             field(1, 2, b"auto_pad") + field(4, 2, b"NOTSET") + field(20, 0, 3),
             field(1, 2, b"scales") + field(7, 2, struct.pack("<2f", 1, 2)) + field(20, 0, 6),
             field(1, 2, b"value") + field(5, 2, bias) + field(20, 0, 4)]
    node = field(1, 2, b"x") + field(1, 2, b"w") + field(1, 2, b"b") + field(2, 2, b"y") + field(3, 2, b"conv0") \
        + field(4, 2, b"Conv") + b"".join(field(5, 2, a) for a in attrs)
    dims = b"".join(field(1, 2, field(1, 0, v)) for v in (1, 1, 2, 2)) + field(1, 2, field(2, 2, b"N"))
    value_info = field(1, 2, b"x") + field(2, 2, field(1, 2, field(1, 0, 1) + field(2, 2, dims)))
    graph = field(1, 2, node) + field(2, 2, b"g") + field(5, 2, weight) + field(5, 2, bias) \
        + field(5, 2, shape_i64) + field(11, 2, value_info) + field(12, 2, field(1, 2, b"y"))
    return field(1, 0, 8) + field(7, 2, graph) + field(8, 2, field(1, 2, b"") + field(2, 0, 17))


def onnx_seeds(out, limit_bytes=16 * 1024, limit_count=40):
    d = os.path.join(out, "onnx")
    write(d, "tiny-conv", tiny_model())
    try:
        sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
        import models  # noqa: E402  (needs numpy and onnx, which `make conformance` installs)
    except ImportError as error:
        print(f"seeds.py: no conformance models ({error}); ONNX seeds are the hand-encoded model only",
              file=sys.stderr)
        return
    written = 0
    for name, model, _shape in models.operator_cases():
        data = model.SerializeToString()
        if len(data) <= limit_bytes and written < limit_count:
            write(d, name, data)
            written += 1


# ---- traces ----------------------------------------------------------------------------------------------------

def trace_events(frames, infer_us=40_000, simulated=False):
    ev = ['{"name":"process_name","ph":"M","pid":1,"args":{"name":"colorcam"}}',
          '{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"capture"}}',
          '{"name":"config","ph":"i","s":"g","pid":1,"tid":6,"ts":0,"args":{"command":"replay","source":'
          '"clip.y4m","pace":"realtime","source_fps":30,"max_in_flight":1,"queue":1,"model":"m.onnx","simulated":'
          + ("true" if simulated else "false") + ',"simulate_inference_ms":40,"simulate_jitter_ms":0,'
          '"simulate_mode":"fixed","output_deadline_us":100000}}']
    free = 0
    for f in range(frames):
        ts = f * 1_000_000 // 30
        start = max(ts, free)
        free = start + infer_us
        ev.append(f'{{"name":"capture","ph":"X","pid":1,"tid":1,"ts":{ts},"dur":200,'
                  f'"args":{{"frame":{f},"capture_ts_us":{ts}}}}}')
        ev.append(f'{{"name":"frame","ph":"s","pid":1,"tid":1,"ts":{ts + 200},"id":{f}}}')
        ev.append(f'{{"name":"infer","ph":"X","pid":1,"tid":3,"ts":{start},"dur":{infer_us},"args":{{"frame":{f},'
                  f'"requested_ts_us":{ts},"lag_us":{start - ts},"queued_us":0,"photo":-1,"reason":"frame",'
                  f'"simulated":{"true" if simulated else "false"}}}}}')
        ev.append(f'{{"name":"in_flight","ph":"C","pid":1,"tid":6,"ts":{ts},"args":{{"value":1}}}}')
        ev.append(f'{{"name":"composite","ph":"X","pid":1,"tid":4,"ts":{ts + 300},"dur":100,'
                  f'"args":{{"frame":{f},"result_frame":{f - 1}}}}}')
        ev.append(f'{{"name":"output","ph":"X","pid":1,"tid":5,"ts":{ts + 1000},"dur":500,"args":{{"frame":{f},'
                  f'"result_frame":{f - 1},"latency_us":1500,"result_age_us":33333}}}}')
        ev.append(f'{{"name":"frame","ph":"f","bp":"e","pid":1,"tid":5,"ts":{ts + 1500},"id":{f}}}')
    reasons = ["superseded", "busy", "late", "driver_gap", "decode_error"]
    for i, reason in enumerate(reasons):
        ev.append(f'{{"name":"drop","ph":"i","s":"t","pid":1,"tid":5,"ts":{i * 1000 + 7},'
                  f'"args":{{"frame":{i},"reason":"{reason}"}}}}')
    ev.append('{"name":"GC","ph":"X","pid":9,"tid":1,"ts":5,"dur":3,"args":{"note":"caf\\u00e9 \\ud83d\\ude00"}}')
    ev.append(f'{{"name":"summary","ph":"i","s":"g","pid":1,"tid":6,"ts":{frames * 33_334},'
              f'"args":{{"frames_captured":{frames},"frames_output":{frames},"trace_events_lost":0}}}}')
    return ev


def trace_text(events, closed=True):
    text = "[" + events[0] + "\n" + "".join("," + e + "\n" for e in events[1:])
    return text + ("]\n" if closed else "")


def trace_seeds(out):
    d = os.path.join(out, "trace")
    events = trace_events(6)
    whole = trace_text(events).encode()
    write(d, "pipeline", whole)
    write(d, "simulated-slow", trace_text(trace_events(12, infer_us=90_000, simulated=True)).encode())
    write(d, "no-closing-bracket", trace_text(events, closed=False).encode())
    write(d, "partial-last-event", whole[:len(whole) * 2 // 3])
    write(d, "object-form", ('{"displayTimeUnit":"ms","traceEvents":' + trace_text(events).rstrip()
                            + ',"otherData":{"version":[1,2.5e-3,null,true]}}').encode())
    write(d, "object-form-cut", ('{"traceEvents":' + trace_text(events).rstrip()).encode())
    write(d, "bom-empty-array", b"\xef\xbb\xbf[\n]\n")


# ---- HTTP ------------------------------------------------------------------------------------------------------

def http_seeds(out):
    d = os.path.join(out, "http")
    requests = {
        "get-root": b"GET / HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: test\r\n\r\n",
        "stats-pipelined": b"GET /stats.json?x=1 HTTP/1.1\r\nHost: a\r\n\r\nGET /metrics HTTP/1.1\r\nHost: a\r\n"
                           b"Connection: close\r\n\r\n",
        "http10-keepalive": b"GET /stream.mjpg HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "absolute-form": b"GET http://example.com:8080/frame.jpg HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "options-star": b"OPTIONS * HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
        "bare-lf": b"\r\n\nHEAD /healthz HTTP/1.1\nHost: x\nX-A:\t v \t\n\n",
        "folding": b"GET / HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n",
        "version-2": b"GET / HTTP/2.0\r\nHost: x\r\n\r\n",
        "two-hosts": b"GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n",
    }
    for name, request in requests.items():
        write(d, name + "-whole", b"\x00" + request)  # first byte: whole input at once, default limits
        write(d, name + "-bytewise", b"\x03" + request)  # one byte per feed, small limits
    write(d, "long-line", b"\x01GET /" + b"a" * 100 + b" HTTP/1.1\r\nHost: x\r\n\r\n")


# ---- remote inference answers ----------------------------------------------------------------------------------

def infer_response_seeds(out):
    """HTTP responses a v2 server gives colorcam: binary and JSON outputs of a [1, 2, 4, 4] tensor, metadata,
    chunked framing, errors. First byte: fragmentation/closed/limits (see targets/infer-response.swift)."""
    import json
    import struct
    d = os.path.join(out, "infer-response")
    values = struct.pack("<32f", *[i * 0.5 for i in range(32)])
    header = json.dumps({"model_name": "m", "outputs": [{"name": "ab", "datatype": "FP32", "shape": [1, 2, 4, 4],
                                                          "parameters": {"binary_data_size": 128}}]}).encode()
    body = header + values
    binary = (b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nInference-Header-Content-Length: "
              + str(len(header)).encode() + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    json_body = json.dumps({"outputs": [{"name": "ab", "datatype": "FP32", "shape": [1, 2, 4, 4],
                                         "data": [i * 0.5 for i in range(32)]}]}).encode()
    as_json = b"HTTP/1.1 200 OK\r\ncontent-length: " + str(len(json_body)).encode() + b"\r\n\r\n" + json_body
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               + b"".join(b"%x\r\n%s\r\n" % (len(json_body[i:i + 100]), json_body[i:i + 100])
                          for i in range(0, len(json_body), 100)) + b"0\r\n\r\n")
    meta_body = json.dumps({"name": "m", "inputs": [{"name": "L", "datatype": "FP32", "shape": [1, 1, 4, 4]}],
                            "outputs": [{"name": "ab", "datatype": "FP32", "shape": [-1, 2, 4, 4]}]}).encode()
    meta = b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(meta_body)).encode() + b"\r\n\r\n" + meta_body
    answers = {
        "binary": binary, "json": as_json, "chunked": chunked, "metadata": meta,
        "error-500": b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 17\r\n\r\n{\"error\": \"boom\"}",
        "unframed": b"HTTP/1.0 200 OK\r\n\r\n" + json_body,
        "url": b"http://[::1]:8080/v2/models/colorcam-default/versions/1",
    }
    for name, answer in answers.items():
        write(d, name + "-whole", b"\x00" + answer)
        write(d, name + "-pieces-closed", b"\x1e" + answer)  # 7 bytes a step, peer closed, default limits


def main():
    if len(sys.argv) != 2:
        print("usage: seeds.py OUT_DIR", file=sys.stderr)
        return 64
    out = sys.argv[1]
    y4m_seeds(out)
    onnx_seeds(out)
    trace_seeds(out)
    http_seeds(out)
    infer_response_seeds(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
