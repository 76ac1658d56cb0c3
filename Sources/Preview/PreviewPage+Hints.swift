/// The preview page's colour hints (when the server has the `/photos` API): a click on an outlined photo opens a
/// colour picker — first the model's suggestions at that point (the most likely colours of its ab distribution there,
/// `GET /photos/ID/suggestions`), then the colour shown there now, the most used colours on that photo (its pixels'
/// chroma binned by hue) and colours around the hue circle, all at that point's lightness, and a free picker — and the chosen colour is sent as a hint (`POST /photos/ID/hints`). Hints
/// of the photos in view are drawn on them (through each photo's corners), listed per photo with a remove button, can be dragged
/// (`PUT`), and undone (button or Ctrl+Z: the inverse request).
extension PreviewPage {
    static let hintsStyle = """
          #hintmarks { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; }
          #hintmarks circle { stroke: #fff; stroke-width: 2; vector-effect: non-scaling-stroke; pointer-events: all;
                              cursor: move; }
          #picker { position: absolute; display: none; background: #222; border: 1px solid #666; padding: 8px;
                    line-height: 1.4; z-index: 2; width: 208px; }
          #picker.shown { display: block; }
          #picker button.swatch { width: 28px; height: 28px; margin: 2px; border: 1px solid #888; cursor: pointer; }
          #picker button.swatch.now, #picker button.swatch.suggestion { width: 44px; }
          #hintlist li { margin: 2px 0; }
          #hintlist span.chip { display: inline-block; width: 14px; height: 14px; vertical-align: middle;
                                border: 1px solid #888; margin-right: 4px; }
        """

    static let hintsMarkup = """
            <svg id="hintmarks" viewBox="0 0 640 480" preserveAspectRatio="none"></svg>
            <div id="picker" role="dialog" aria-label="hint colour">
              <div id="pickertitle"></div>
              <div id="swatches"></div>
              <label>other: <input type="color" id="freecolor" value="#808080"></label>
              <button id="freeok">use</button> <button id="pickercancel">cancel</button>
            </div>
        """

    static let hintsPanel = """
          <section id="hints" hidden>
            <h2 style="font-size:14px;margin:8px 0 4px">colour hints</h2>
            <div>click a photo to give a colour; drag a dot to move it.
              <button id="undo" disabled>undo</button></div>
            <ul id="hintlist"></ul>
          </section>
        """

    static let hintsScript = """
        const hints = { enabled: false, photos: [], undo: [], frame: { w: 640, h: 480 }, drag: null };
        async function api(method, path, body) {
          const init = { method, headers: {} };
          if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
          const response = await fetch(path, init);
          const data = await response.json().catch(() => ({}));
          if (!response.ok) throw new Error(data.error || (method + " " + path + ": " + response.status));
          return data;
        }
        // Homography from the unit square to a photo's corners (top-left, top-right, bottom-right, bottom-left).
        function squareToQuad(c) {
          const [x0, y0] = c[0], [x1, y1] = c[1], [x2, y2] = c[2], [x3, y3] = c[3];
          const dx1 = x1 - x2, dx2 = x3 - x2, dy1 = y1 - y2, dy2 = y3 - y2;
          const sx = x0 - x1 + x2 - x3, sy = y0 - y1 + y2 - y3, det = dx1 * dy2 - dx2 * dy1;
          const g = (sx * dy2 - dx2 * sy) / det, h = (dx1 * sy - sx * dy1) / det;
          return [x1 - x0 + g * x1, x3 - x0 + h * x3, x0, y1 - y0 + g * y1, y3 - y0 + h * y3, y0, g, h];
        }
        function toFrame(c, u, v) {
          const m = squareToQuad(c), w = m[6] * u + m[7] * v + 1;
          return [(m[0] * u + m[1] * v + m[2]) / w, (m[3] * u + m[4] * v + m[5]) / w];
        }
        function inside(c, x, y) {
          let sign = 0;
          for (let i = 0; i < 4; i++) {
            const [ax, ay] = c[i], [bx, by] = c[(i + 1) % 4];
            const cross = (bx - ax) * (y - ay) - (by - ay) * (x - ax);
            if (cross !== 0) { if (sign === 0) sign = Math.sign(cross); else if (Math.sign(cross) !== sign) return false; }
          }
          return true;
        }
        function area(c) {
          let s = 0;
          for (let i = 0; i < 4; i++) s += c[i][0] * c[(i + 1) % 4][1] - c[(i + 1) % 4][0] * c[i][1];
          return Math.abs(s) / 2;
        }
        function framePoint(event) {
          const r = $("video").getBoundingClientRect();
          return [(event.clientX - r.left) * hints.frame.w / r.width, (event.clientY - r.top) * hints.frame.h / r.height];
        }
        // sRGB <-> CIE Lab (D65), for colours at the clicked point's lightness.
        function toLinear(c) { c /= 255; return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); }
        function fromLinear(c) { const v = c <= 0.0031308 ? 12.92 * c : 1.055 * Math.pow(c, 1 / 2.4) - 0.055; return Math.round(255 * Math.min(1, Math.max(0, v))); }
        function rgbToLab([r, g, b]) {
          r = toLinear(r); g = toLinear(g); b = toLinear(b);
          const f = (t) => t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116;
          const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047), y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
          const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
          return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
        }
        function labToRgb([l, a, bb]) {
          const fy = (l + 16) / 116, fx = fy + a / 500, fz = fy - bb / 200;
          const inv = (t) => t * t * t > 216 / 24389 ? t * t * t : (116 * t - 16) / (24389 / 27);
          const x = 0.95047 * inv(fx), y = inv(fy), z = 1.08883 * inv(fz);
          return [fromLinear(3.2406 * x - 1.5372 * y - 0.4986 * z), fromLinear(-0.9689 * x + 1.8758 * y + 0.0415 * z),
                  fromLinear(0.0557 * x - 0.2040 * y + 1.0570 * z)];
        }
        function hex(rgb) { return "#" + rgb.map((v) => v.toString(16).padStart(2, "0")).join(""); }
        function frameCanvas() {
          const canvas = document.createElement("canvas");
          canvas.width = hints.frame.w; canvas.height = hints.frame.h;
          const ctx = canvas.getContext("2d");
          try { ctx.drawImage($("video"), 0, 0, canvas.width, canvas.height); } catch (e) { return null; }
          return ctx;
        }
        function colourNow(ctx, x, y) {
          if (!ctx) return [128, 128, 128];
          const d = ctx.getImageData(Math.max(0, Math.round(x) - 2), Math.max(0, Math.round(y) - 2), 5, 5).data;
          const sum = [0, 0, 0];
          for (let i = 0; i < d.length; i += 4) { sum[0] += d[i]; sum[1] += d[i + 1]; sum[2] += d[i + 2]; }
          return sum.map((s) => Math.round(s / (d.length / 4)));
        }
        // The colours the model gave this photo: its pixels' chroma by hue (30-degree bins), the three most used
        // hues' mean chroma, at lightness l.
        function modelColours(ctx, photo, l) {
          if (!ctx) return [];
          const bins = Array.from({ length: 12 }, () => ({ n: 0, a: 0, b: 0 }));
          const w = hints.frame.w, h = hints.frame.h, data = ctx.getImageData(0, 0, w, h).data;
          for (let i = 0; i < 32; i++) {
            for (let j = 0; j < 32; j++) {
              const [x, y] = toFrame(photo.corners, (i + 0.5) / 32, (j + 0.5) / 32);
              const k = 4 * (Math.min(h - 1, Math.max(0, Math.round(y))) * w + Math.min(w - 1, Math.max(0, Math.round(x))));
              const [, a, b] = rgbToLab([data[k], data[k + 1], data[k + 2]]);
              if (Math.hypot(a, b) < 6) continue;
              const bin = bins[Math.floor(((Math.atan2(b, a) * 180 / Math.PI) + 360) % 360 / 30)];
              bin.n += 1; bin.a += a; bin.b += b;
            }
          }
          return bins.filter((bin) => bin.n >= 8).sort((p, q) => q.n - p.n).slice(0, 3)
            .map((bin) => labToRgb([l, bin.a / bin.n, bin.b / bin.n]));
        }
        async function openPicker(photo, x, y, event) {
          const ctx = frameCanvas(), now = colourNow(ctx, x, y), lab = rgbToLab(now);
          let suggested = [];
          try {
            suggested = (await api("GET", "/photos/" + photo.id + "/suggestions?x=" + x.toFixed(1) + "&y=" + y.toFixed(1))).suggestions;
          } catch (error) { /* none: the other choices stay */ }
          const picker = $("picker"), swatches = $("swatches");
          setText("pickertitle", "photo #" + photo.id + ": this point is…");
          swatches.textContent = "";
          const choices = suggested.map((s) => ({ rgb: labToRgb([lab[0], s.a, s.b]), kind: "suggestion",
                                                  title: "the model's suggestion here (" + Math.round(100 * s.probability) + " %)" }));
          choices.push({ rgb: now, title: "as shown now", kind: "now" });
          for (const rgb of modelColours(ctx, photo, lab[0])) choices.push({ rgb, title: "the model's colour on this photo" });
          for (let h = 0; h < 360; h += 30) {
            const rad = h * Math.PI / 180;
            choices.push({ rgb: labToRgb([lab[0], 45 * Math.cos(rad), 45 * Math.sin(rad)]), title: "hue " + h });
          }
          for (const choice of choices) {
            const button = document.createElement("button");
            button.className = "swatch" + (choice.kind ? " " + choice.kind : "");
            button.style.background = hex(choice.rgb);
            button.title = choice.title + " " + hex(choice.rgb);
            button.dataset.color = hex(choice.rgb);
            button.addEventListener("click", () => addHint(photo.id, x, y, hex(choice.rgb)));
            swatches.appendChild(button);
          }
          $("freecolor").value = hex(now);
          $("freeok").onclick = () => addHint(photo.id, x, y, $("freecolor").value);
          const view = $("view").getBoundingClientRect();
          picker.style.left = Math.min(event.clientX - view.left, view.width - 220) + "px";
          picker.style.top = (event.clientY - view.top + 12) + "px";
          picker.className = "shown";
        }
        function closePicker() { $("picker").className = ""; }
        async function addHint(photoID, x, y, color) {
          closePicker();
          try {
            const before = new Set((hints.photos.find((p) => p.id === photoID) || { hints: [] }).hints.map((h) => h.id));
            const photo = await api("POST", "/photos/" + photoID + "/hints", { x, y, color });
            const added = photo.hints.filter((h) => !before.has(h.id));
            for (const h of added) pushUndo({ undo: () => api("DELETE", "/photos/" + photoID + "/hints/" + h.id) });
            setText("status", "hint given on photo #" + photoID);
          } catch (error) { setText("status", error.message); }
          refreshHints();
        }
        function pushUndo(step) { hints.undo.push(step); $("undo").disabled = false; }
        async function undo() {
          const step = hints.undo.pop();
          $("undo").disabled = hints.undo.length === 0;
          if (!step) return;
          try { await step.undo(); } catch (error) { setText("status", "undo: " + error.message); }
          refreshHints();
        }
        async function removeHint(photoID, hint) {
          try {
            await api("DELETE", "/photos/" + photoID + "/hints/" + hint.id);
            pushUndo({ undo: () => api("POST", "/photos/" + photoID + "/hints", { u: hint.u, v: hint.v, color: hint.color }) });
          } catch (error) { setText("status", error.message); }
          refreshHints();
        }
        function drawHints() {
          const svg = $("hintmarks");
          while (svg.firstChild) svg.removeChild(svg.firstChild);
          svg.setAttribute("viewBox", "0 0 " + hints.frame.w + " " + hints.frame.h);
          const list = $("hintlist");
          list.textContent = "";
          for (const photo of hints.photos.filter((p) => p.inView)) {
            for (const hint of photo.hints) {
              const li = document.createElement("li"), chip = document.createElement("span"), remove = document.createElement("button");
              chip.className = "chip"; chip.style.background = hint.color;
              li.appendChild(chip);
              li.appendChild(document.createTextNode("photo #" + photo.id + " hint " + hint.id + " " + hint.color + " "));
              remove.textContent = "✕"; remove.title = "remove"; remove.className = "remove";
              remove.addEventListener("click", () => removeHint(photo.id, hint));
              li.appendChild(remove);
              list.appendChild(li);
              const [x, y] = toFrame(photo.corners, hint.u, hint.v);
              const dot = document.createElementNS(svgNS, "circle");
              dot.setAttribute("cx", x); dot.setAttribute("cy", y); dot.setAttribute("r", 6);
              dot.setAttribute("fill", hint.color);
              dot.addEventListener("pointerdown", (event) => {
                event.preventDefault(); event.stopPropagation();
                hints.drag = { photo, hint, dot };
              });
              svg.appendChild(dot);
            }
          }
        }
        async function refreshHints() {
          if (!hints.enabled) return;
          try { hints.photos = (await api("GET", "/photos")).photos; drawHints(); } catch (error) { /* next poll */ }
        }
        function startHints(stats) {
          if (stats.widthPx) hints.frame = { w: stats.widthPx, h: stats.heightPx };
          if (hints.checked) return;
          hints.checked = true;
          fetch("/photos", { cache: "no-store" }).then((r) => {
            if (!r.ok) return;
            hints.enabled = true;
            $("hints").hidden = false;
            $("view").style.cursor = "crosshair";
            refreshHints();
            setInterval(refreshHints, 500);
          }).catch(() => { hints.checked = false; });
        }
        $("view").addEventListener("click", (event) => {
          if (!hints.enabled || event.target.closest("#picker")) return;
          const [x, y] = framePoint(event);
          const under = hints.photos.filter((p) => p.inView && inside(p.corners, x, y));
          if (under.length === 0) { closePicker(); setText("status", "no photo there"); return; }
          under.sort((a, b) => area(a.corners) - area(b.corners));
          openPicker(under[0], x, y, event);
        });
        window.addEventListener("pointermove", (event) => {
          if (!hints.drag) return;
          const [x, y] = framePoint(event);
          hints.drag.dot.setAttribute("cx", x); hints.drag.dot.setAttribute("cy", y);
        });
        window.addEventListener("pointerup", async (event) => {
          const drag = hints.drag;
          if (!drag) return;
          hints.drag = null;
          const [x, y] = framePoint(event);
          try {
            await api("PUT", "/photos/" + drag.photo.id + "/hints/" + drag.hint.id, { x, y });
            pushUndo({ undo: () => api("PUT", "/photos/" + drag.photo.id + "/hints/" + drag.hint.id, { u: drag.hint.u, v: drag.hint.v }) });
          } catch (error) { setText("status", error.message); }
          refreshHints();
        });
        $("pickercancel").addEventListener("click", closePicker);
        $("undo").addEventListener("click", undo);
        window.addEventListener("keydown", (event) => {
          if ((event.ctrlKey || event.metaKey) && event.key === "z") { event.preventDefault(); undo(); }
          if (event.key === "Escape") closePicker();
        });
        """
}
