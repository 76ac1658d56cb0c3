"""End-to-end checks of `colorcam trace-report TRACE.json --html report.html` in headless Chromium.

Records a real trace with `colorcam replay`, writes the page, then has Chromium run its script and dump the DOM
(`--dump-dom` after `--virtual-time-budget`) and take a screenshot. Checks one lane element per stage, one span
element per traced span (with its frame number) and one drop marker per drop, that the page is self-contained and
that the screenshot shows the painted timeline. Needs Debian's `chromium` (apt-get install -y chromium).
"""
import html
import json
import math
import os
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser

import pytest

from conftest import run

STAGES = ["capture", "detect", "infer", "composite", "output"]
INFER_RGB = (0xE1, 0x57, 0x59)  # STAGE_COLORS.infer in TraceReportPage+Script.swift
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@pytest.fixture(scope="session")
def chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "headless Chromium is required for the HTML report test: apt-get install -y chromium"
    return exe


def chromium_args(exe, *extra):
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1400,1000",
            "--virtual-time-budget=5000", *extra]


def dump_dom(exe, url):
    proc = subprocess.run(chromium_args(exe, "--dump-dom", url), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0 and "<html" in proc.stdout, f"chromium --dump-dom failed: {proc.stderr[-2000:]}"
    return proc.stdout


class Elements(HTMLParser):
    """Every element of a serialised DOM with its attributes and the attributes of its ancestors."""

    def __init__(self):
        super().__init__()
        self.stack = []
        self.elements = []

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "ancestors": list(self.stack)}
        self.elements.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i]["tag"] == tag:
                del self.stack[i:]
                return

    def with_class(self, name):
        return [e for e in self.elements if name in (e["attrs"].get("class") or "").split()]


def parse_dom(text):
    parser = Elements()
    parser.feed(text)
    return parser


def lane_of(element):
    for ancestor in reversed(element["ancestors"]):
        if "lane" in (ancestor["attrs"].get("class") or "").split():
            return ancestor["attrs"].get("data-stage")
    return None


def read_events(path):
    with open(path) as f:
        return json.load(f)


def decode_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB/RGBA non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, f"unexpected PNG format {header}"
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, channels)])
        previous = line
    return width, height, rows


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, colorcam):
    """A real 4-second replay trace with a 90 ms simulated inference (so frames are superseded and late)."""
    work = tmp_path_factory.mktemp("html")
    clip, trace = work / "clip.y4m", work / "trace.json"
    run(colorcam, "testclip", clip, "--seconds", "4", "--size", "320x240")
    run(colorcam, "replay", clip, "--simulate-inference-ms", "90", "--trace", trace, "--quiet")
    return work, trace


def write_page(colorcam, trace, page):
    proc = run(colorcam, "trace-report", trace, "--html", page, check=False)
    assert proc.returncode in (0, 1), f"trace-report --html exited {proc.returncode}: {proc.stderr}"
    assert "verdict:" in proc.stdout, "the text report is still printed with --html"
    assert page.exists() and not (page.parent / (page.name + ".partial")).exists()
    return page


def test_page_renders_one_lane_per_stage_and_one_span_per_event(recorded, colorcam, chromium):
    work, trace = recorded
    page = write_page(colorcam, trace, work / "report.html")
    text = page.read_text()
    assert "http://" not in text and "https://" not in text, "the page must not reference the network"
    assert "SIMULATED inference" in text

    events = read_events(trace)
    dom = parse_dom(dump_dom(chromium, page.as_uri()))
    body = [e for e in dom.elements if e["tag"] == "body"][0]
    assert body["attrs"].get("data-ready") == "1", "the page script did not finish its first render"

    lanes = dom.with_class("lane")
    assert sorted(e["attrs"]["data-stage"] for e in lanes) == sorted(STAGES), "one lane element per stage"
    spans = dom.with_class("span")
    for stage in STAGES:
        expected = sorted(e["args"]["frame"] for e in events if e.get("name") == stage and e.get("ph") == "X")
        shown = sorted(int(e["attrs"]["data-frame"]) for e in spans if lane_of(e) == stage)
        assert shown == expected, f"{stage}: {len(shown)} span elements, trace has {len(expected)} spans"
    outputs = [e for e in events if e.get("name") == "output" and e.get("ph") == "X"]
    assert len(outputs) > 60, "the 4 s replay should output most of its 120 frames"
    assert sum(1 for e in spans if lane_of(e) == "output") == len(outputs)

    drops = [e for e in events if e.get("name") == "drop"]
    markers = dom.with_class("drop")
    assert len(markers) == len(drops) > 0, "one marker per drop (the 90 ms inference supersedes frames)"
    assert sorted(m["attrs"]["data-reason"] for m in markers) == sorted(d["args"]["reason"] for d in drops)
    legend = {e["attrs"]["data-reason"] for e in dom.elements if e["ancestors"] and
              any(a["attrs"].get("id") == "legend" for a in e["ancestors"]) and "data-reason" in e["attrs"]}
    assert {"superseded", "busy", "late", "driver_gap", "decode_error"} <= legend

    counters = {e["attrs"]["data-counter"]: e["attrs"] for e in dom.with_class("counter")}
    assert int(counters["in_flight"]["data-count"]) > 0 and int(counters["lag"]["data-count"]) > 0
    summary = [e for e in dom.elements if e["attrs"].get("id") in ("summary", "timeline", "verdict")]
    assert [e["attrs"]["id"] for e in summary] == ["verdict", "timeline", "summary"], "timeline above the summary"


def test_screenshot_shows_the_timeline(recorded, colorcam, chromium):
    work, trace = recorded
    page = write_page(colorcam, trace, work / "shot.html")
    shot = work / "shot.png"
    proc = subprocess.run(chromium_args(chromium, f"--screenshot={shot}", page.as_uri()), capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0 and shot.exists(), f"chromium --screenshot failed: {proc.stderr[-2000:]}"
    width, height, rows = decode_png(shot)
    assert (width, height) == (1400, 1000)
    colours = {pixel for row in rows[::4] for pixel in row[::4]}
    assert len(colours) > 50, f"screenshot looks blank: {len(colours)} distinct colours"
    infer_pixels = sum(1 for row in rows for pixel in row if pixel == INFER_RGB)
    assert infer_pixels > 500, f"only {infer_pixels} pixels in the infer span colour: spans not painted"


def test_large_trace_opens_aggregated_and_zooms_to_spans(tmp_path, colorcam, chromium):
    """5 minutes at 30 fps: too many spans for elements, so lanes are binned; #from/#to zooms to 2 s of spans."""
    frames = 5 * 60 * 30
    lines = ['{"name":"config","ph":"i","s":"g","pid":1,"tid":6,"ts":0,"args":{"simulated":false}}']
    for frame in range(frames):
        ts = frame * 1_000_000 // 30
        lines.append(f'{{"name":"capture","ph":"X","pid":1,"tid":1,"ts":{ts},"dur":150,'
                     f'"args":{{"frame":{frame},"capture_ts_us":{ts}}}}}')
        lines.append(f'{{"name":"output","ph":"X","pid":1,"tid":5,"ts":{ts + 2000},"dur":300,'
                     f'"args":{{"frame":{frame},"result_frame":-1,"latency_us":2300}}}}')
    trace = tmp_path / "big.json"
    trace.write_text("[" + lines[0] + "\n" + "".join("," + line + "\n" for line in lines[1:]) + "]\n")
    page = write_page(colorcam, trace, tmp_path / "big.html")

    whole = parse_dom(dump_dom(chromium, page.as_uri()))
    assert len(whole.with_class("lane")) == 5
    assert whole.with_class("span") == [], "a 9000-span lane must be drawn aggregated, not as elements"
    view = [e for e in whole.elements if e["attrs"].get("id") == "view-range"]
    assert view, "view-range element missing"

    zoomed = parse_dom(dump_dom(chromium, page.as_uri() + "#from=10&to=12"))
    for stage in ("capture", "output"):
        frames_shown = sorted(int(e["attrs"]["data-frame"]) for e in zoomed.with_class("span") if lane_of(e) == stage)
        assert 58 <= len(frames_shown) <= 62, f"{stage}: {len(frames_shown)} spans in a 2 s view at 30 fps"
        assert 299 <= frames_shown[0] <= 301 and frames_shown == list(range(frames_shown[0], frames_shown[-1] + 1))


# Drives the page with synthetic events after its script ran; renderNow() draws synchronously (no animation frame).
PROBE = r"""<script>
(function () {
  var out = {}, tip = document.getElementById('tooltip'), tracks = document.getElementById('tracks');
  var timeline = window.colorcamTimeline;
  function hover(el) {
    var r = el.getBoundingClientRect();
    el.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + Math.min(1, r.width / 2),
                                                  clientY: r.top + r.height / 2}));
    return tip.hidden ? null : tip.textContent;
  }
  var output = document.querySelectorAll('.lane[data-stage="output"] .span')[5];
  out.outputFrame = output.dataset.frame;
  out.outputTip = hover(output);
  out.related = Array.prototype.map.call(document.querySelectorAll('.related'), function (el) {
    return [el.closest('.row').dataset.stage || 'drops', el.dataset.frame];
  });
  out.inferTip = hover(document.querySelector('.lane[data-stage="infer"] .span'));
  var drop = document.querySelector('.drop');
  out.dropReason = drop.dataset.reason;
  out.dropTip = hover(drop);
  var axis = document.querySelector('.axis .body').getBoundingClientRect();
  out.width = axis.width;
  out.initial = timeline.view();
  out.initialSpans = document.querySelectorAll('.span').length;
  tracks.dispatchEvent(new WheelEvent('wheel', {bubbles: true, cancelable: true, deltaY: -800,
                                                clientX: axis.left + axis.width / 2, clientY: axis.top + 5}));
  timeline.renderNow();
  out.zoomed = timeline.view();
  out.zoomedSpans = document.querySelectorAll('.span').length;
  tracks.dispatchEvent(new MouseEvent('mousedown', {bubbles: true, button: 0, clientX: 700, clientY: 300}));
  window.dispatchEvent(new MouseEvent('mousemove', {clientX: 400, clientY: 300}));
  window.dispatchEvent(new MouseEvent('mouseup', {clientX: 400, clientY: 300}));
  timeline.renderNow();
  out.panned = timeline.view();
  document.getElementById('zoom-out').click();
  timeline.renderNow();
  out.zoomedOut = timeline.view();
  document.getElementById('zoom-fit').click();
  timeline.renderNow();
  out.fit = timeline.view();
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def test_hover_zoom_and_pan(recorded, colorcam, chromium):
    work, trace = recorded
    page = write_page(colorcam, trace, work / "probe.html")
    page.write_text(page.read_text().replace("</body></html>", PROBE + "</body></html>"))
    dom = dump_dom(chromium, page.as_uri())
    start = dom.index('<pre id="probe">') + len('<pre id="probe">')
    out = json.loads(html.unescape(dom[start:dom.index("</pre>", start)]))

    assert out["outputTip"] is not None, "hovering an output span shows no tooltip"
    assert out["outputTip"].startswith(f"output  frame {out['outputFrame']}\n")
    for field in ("start", "duration", "latency"):
        assert f"\n{field} " in out["outputTip"], f"output tooltip lacks {field}: {out['outputTip']!r}"
    related = out["related"]
    assert {frame for _, frame in related} == {out["outputFrame"]}, "hover outlines only the same frame's elements"
    assert {"capture", "output"} <= {stage for stage, _ in related}, f"frame not followed across lanes: {related}"
    assert "lag" in out["inferTip"] and "ms (request→start)" in out["inferTip"], out["inferTip"]
    assert out["dropTip"].startswith(f"drop: {out['dropReason']}"), out["dropTip"]

    def span(view):
        return view["t1"] - view["t0"]

    initial, zoomed, panned = out["initial"], out["zoomed"], out["panned"]
    assert span(zoomed) == pytest.approx(span(initial) * math.exp(-1.6), rel=1e-6), "wheel zooms around the cursor"
    centre_shift = (zoomed["t0"] + zoomed["t1"]) / 2 - (initial["t0"] + initial["t1"]) / 2
    assert abs(centre_shift) <= span(initial) / out["width"], "zoomed around the cursor (mid-view, within 1 px)"
    assert 0 < out["zoomedSpans"] < out["initialSpans"], "zooming in shows fewer span elements"
    assert panned["t0"] - zoomed["t0"] == pytest.approx(300 * span(zoomed) / out["width"], rel=1e-6), "drag pans"
    assert span(out["zoomedOut"]) == pytest.approx(2 * span(zoomed), rel=1e-6)
    assert out["fit"] == pytest.approx(initial)


def test_trace_without_spans_still_renders(tmp_path, colorcam, chromium):
    """A run killed right after its config: no spans, drops or counters. Every lane says so; nothing breaks."""
    trace = tmp_path / "empty.json"
    trace.write_text('[{"name":"config","ph":"i","s":"g","pid":1,"tid":6,"ts":0,"args":{"simulated":false}}\n')
    page = write_page(colorcam, trace, tmp_path / "empty.html")
    dom = parse_dom(dump_dom(chromium, page.as_uri()))
    body = [e for e in dom.elements if e["tag"] == "body"][0]
    assert body["attrs"].get("data-ready") == "1", "the page script failed on a trace without spans"
    assert [e["attrs"]["data-count"] for e in dom.with_class("lane")] == ["0"] * 5
    assert dom.with_class("span") == [] and dom.with_class("drop") == []
    assert "closing ] missing" in page.read_text(), "the truncation warning is in the summary"


def test_unwritable_report_path_exits_74(recorded, colorcam, tmp_path):
    _, trace = recorded
    target = tmp_path / "no-such-dir" / "r.html"
    proc = run(colorcam, "trace-report", trace, "--html", target, check=False)
    assert proc.returncode == 74, proc.stderr
    assert str(target) in proc.stderr and proc.stderr.count("\n") == 1
    assert not target.parent.exists()


def test_html_to_stdout(recorded, colorcam):
    _, trace = recorded
    proc = run(colorcam, "trace-report", trace, "--html", "-", check=False)
    assert proc.returncode in (0, 1)
    assert proc.stdout.startswith("<!DOCTYPE html>") and proc.stdout.rstrip().endswith("</html>")
    assert "verdict:" not in proc.stdout.split("<body>")[0]


@pytest.mark.parametrize("args", [["--html", "-", "--json"], ["--html", ""], ["--html"]])
def test_html_usage_errors_exit_64(recorded, colorcam, args):
    _, trace = recorded
    proc = run(colorcam, "trace-report", trace, *args, check=False)
    assert proc.returncode == 64, proc.stderr
    assert proc.stderr.startswith("colorcam: ") and proc.stderr.count("\n") == 1
    assert not os.path.exists(".partial")


def test_page_of_a_real_model_run_shows_detect_and_each_colorization(colorcam, chromium, demo_scene, tmp_path):
    """The demo recording through the default model (no simulation): every stage's lane holds one span per traced
    span, the detect lane one per frame, and the page does not call the run simulated."""
    scene, _ = demo_scene
    trace, page = tmp_path / "trace.json", tmp_path / "report.html"
    run(colorcam, "replay", scene, "--pace", "asap", "--trace", trace, "--quiet")
    write_page(colorcam, trace, page)
    assert "SIMULATED" not in page.read_text()
    events = read_events(trace)
    dom = parse_dom(dump_dom(chromium, page.as_uri()))
    spans = dom.with_class("span")
    for stage in STAGES:
        expected = sorted(e["args"]["frame"] for e in events if e.get("name") == stage and e.get("ph") == "X")
        shown = sorted(int(e["attrs"]["data-frame"]) for e in spans if lane_of(e) == stage)
        assert shown == expected and expected, f"{stage}: {len(shown)} span elements, trace has {len(expected)}"
    assert len([e for e in spans if lane_of(e) == "detect"]) == 300
