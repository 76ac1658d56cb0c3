/// The preview's single page (`/`): live MJPEG video, an SVG overlay of tracked-photo outlines (toggle), live stats,
/// a banner when the device is lost, and colour hints when the server has the `/photos` API (`PreviewPage+Hints`). Self-contained: no external scripts, styles or fonts.
enum PreviewPage {
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>colorcam live</title>
        <style>
          body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: #111; color: #ddd; }
          header { padding: 8px 12px; display: flex; gap: 16px; align-items: center; }
          h1 { font-size: 16px; margin: 0; }
          #banner { display: none; background: #a00; color: #fff; padding: 8px 12px; font-weight: bold; }
          #banner.shown { display: block; }
          main { display: flex; flex-wrap: wrap; gap: 12px; padding: 0 12px 12px; }
          #view { position: relative; display: inline-block; line-height: 0; background: #000; }
          #video { max-width: 100%; min-width: 320px; min-height: 240px; }
          #outlines { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; }
          #outlines polygon { fill: none; stroke: #3f3; stroke-width: 3; vector-effect: non-scaling-stroke; }
          #outlines text { fill: #3f3; font-size: 20px; }
          table { border-collapse: collapse; min-width: 260px; }
          td { padding: 2px 8px; border-bottom: 1px solid #333; }
          td.v { text-align: right; font-variant-numeric: tabular-nums; }
        \(hintsStyle)
        </style>
        </head>
        <body>
        <div id="banner" role="alert"></div>
        <header>
          <h1>colorcam live</h1>
          <label><input type="checkbox" id="toggle" checked> outlines</label>
          <span id="status">connecting…</span>
        </header>
        <main>
          <div id="view">
            <img id="video" src="/stream.mjpg" alt="live video">
            <svg id="outlines" viewBox="0 0 640 480" preserveAspectRatio="none"></svg>
        \(hintsMarkup)
          </div>
          <div>
          <table>
            <tbody>
              <tr><td>frame</td><td class="v" id="sequence">–</td></tr>
              <tr><td>output fps</td><td class="v" id="fps">–</td></tr>
              <tr><td>lag (ms)</td><td class="v" id="lag">–</td></tr>
              <tr><td>in flight</td><td class="v" id="inflight">–</td></tr>
              <tr><td>model</td><td class="v" id="model">–</td></tr>
              <tr><td>frames output</td><td class="v" id="output">–</td></tr>
              <tr><td>preview streams</td><td class="v" id="streams">–</td></tr>
            </tbody>
            <tbody id="drops"></tbody>
          </table>
        \(hintsPanel)
          </div>
        </main>
        <script>
        "use strict";
        const svgNS = "http://www.w3.org/2000/svg";
        const $ = (id) => document.getElementById(id);
        function setText(id, value) { $(id).textContent = value; }
        function drawOutlines(stats) {
          const svg = $("outlines");
          while (svg.firstChild) svg.removeChild(svg.firstChild);
          if (!$("toggle").checked || !stats.widthPx) return;
          svg.setAttribute("viewBox", "0 0 " + stats.widthPx + " " + stats.heightPx);
          for (const quad of stats.overlays) {
            const polygon = document.createElementNS(svgNS, "polygon");
            polygon.setAttribute("points", quad.corners.map((p) => p[0] + "," + p[1]).join(" "));
            svg.appendChild(polygon);
            const label = document.createElementNS(svgNS, "text");
            label.setAttribute("x", quad.corners[0][0] + 4);
            label.setAttribute("y", quad.corners[0][1] + 22);
            label.textContent = "#" + quad.trackId;
            svg.appendChild(label);
          }
        }
        function showStats(stats) {
          setText("sequence", stats.sequence);
          setText("fps", stats.outputFps.toFixed(1));
          setText("lag", stats.lagMs.toFixed(1));
          setText("inflight", stats.inFlight);
          setText("model", stats.model || "none");
          setText("output", stats.framesOutput);
          setText("streams", stats.streams);
          const drops = $("drops");
          drops.textContent = "";
          for (const [reason, count] of Object.entries(stats.drops)) {
            const row = drops.insertRow();
            row.insertCell().textContent = "drops: " + reason;
            const cell = row.insertCell();
            cell.className = "v";
            cell.textContent = count;
          }
          const banner = $("banner");
          if (stats.health === "ok") {
            banner.className = "";
          } else {
            banner.className = "shown";
            banner.textContent = "camera lost: " + stats.healthReason + " — retrying";
          }
          setText("status", stats.health === "ok" ? "live" : "device lost");
          drawOutlines(stats);
          startHints(stats);
        }
        async function poll() {
          try {
            const response = await fetch("/stats.json", { cache: "no-store" });
            showStats(await response.json());
          } catch (error) {
            setText("status", "server unreachable");
          }
          setTimeout(poll, 500);
        }
        \(hintsScript)
        $("toggle").addEventListener("change", () => { if (!$("toggle").checked) drawOutlines({}); });
        $("video").addEventListener("error", () => {
          setText("status", "stream lost, reconnecting…");
          setTimeout(() => { $("video").src = "/stream.mjpg?" + Date.now(); }, 1000);
        });
        poll();
        </script>
        </body>
        </html>

        """
}
