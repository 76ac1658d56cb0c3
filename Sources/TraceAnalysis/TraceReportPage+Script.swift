import ColorcamCore
import Stream

extension TraceReportPage {
    /// The timeline script (ES5-style, no modules): reads `#trace-data`, draws lanes, drops and graphs, handles
    /// hover, zoom and pan. Times inside are µs relative to the data's `origin_us`.
    static let script = #"""
        (function () {
        'use strict';
        var DOM_LIMIT = 2000;      // most span / drop elements per row; more in view are binned on the canvas
        var MIN_SPAN_US = 50;      // deepest zoom: 50 µs across the view
        var STAGE_COLORS = { capture: '#4e79a7', detect: '#76b7b2', infer: '#e15759', composite: '#b07aa1',
                             output: '#59a14f' };
        var REASON_COLORS = { superseded: '#f28e2b', busy: '#c9a400', late: '#d62728', driver_gap: '#7f3c8d',
                              decode_error: '#17becf' };

        var data = JSON.parse(document.getElementById('trace-data').textContent);
        var origin = data.origin_us;
        var fullEnd = Math.max(data.end_us, 1);

        function undelta(a) {
          var out = new Float64Array(a.length), sum = 0;
          for (var i = 0; i < a.length; i++) { sum += a[i]; out[i] = sum; }
          return out;
        }
        function lowerBound(arr, x) {
          var lo = 0, hi = arr.length;
          while (lo < hi) { var mid = (lo + hi) >> 1; if (arr[mid] < x) lo = mid + 1; else hi = mid; }
          return lo;
        }
        function ms(us) {
          var v = us / 1000, a = Math.abs(v);
          return a >= 100 ? v.toFixed(1) : a >= 10 ? v.toFixed(2) : v.toFixed(3);
        }
        function reasonColor(name) { return REASON_COLORS[name] || '#888'; }

        var lanes = data.lanes.map(function (d) {
          var start = undelta(d.start), maxDur = 0;
          for (var i = 0; i < d.dur.length; i++) if (d.dur[i] > maxDur) maxDur = d.dur[i];
          var row = document.querySelector('.lane[data-stage="' + d.stage + '"]');
          row.dataset.count = String(start.length);
          var body = row.querySelector('.body');
          var layer = document.createElement('div');
          body.appendChild(layer);
          return { stage: d.stage, start: start, dur: d.dur, frame: d.frame, extra: d.extra, maxDur: maxDur, row: row,
                   body: body, canvas: body.querySelector('canvas'), layer: layer, bins: null };
        });
        var laneByStage = {};
        lanes.forEach(function (lane) { laneByStage[lane.stage] = lane; });

        var drops = { ts: undelta(data.drops.ts), frame: data.drops.frame, reason: data.drops.reason,
                      reasons: data.drops.reasons, row: document.querySelector('.drop-row'), bins: null };
        drops.row.dataset.count = String(drops.ts.length);
        drops.body = drops.row.querySelector('.body');
        drops.canvas = drops.body.querySelector('canvas');
        drops.layer = document.createElement('div');
        drops.body.appendChild(drops.layer);

        var series = {};
        data.counters.forEach(function (c) {
          series[c.name] = { name: c.name, ts: undelta(c.ts), value: c.value, step: true, scale: 1, unit: '' };
        });
        var infer = laneByStage.infer;
        if (infer && infer.extra.lag_us) {
          var lagTs = [], lagValue = [];
          for (var i = 0; i < infer.start.length; i++) {
            if (infer.extra.lag_us[i] !== null) { lagTs.push(infer.start[i]); lagValue.push(infer.extra.lag_us[i]); }
          }
          series.lag = { name: 'request→start lag', ts: Float64Array.from(lagTs), value: lagValue, step: false,
                         scale: 1000, unit: ' ms' };
        }
        var counterRows = [];
        document.querySelectorAll('.counter').forEach(function (row) {
          var s = series[row.dataset.counter];
          if (!s || s.ts.length === 0) {
            if (row.dataset.counter === 'queue_depth') { row.classList.add('empty'); return; }
            s = { name: row.dataset.counter, ts: new Float64Array(0), value: [], step: true, scale: 1, unit: '' };
          }
          var max = 1;
          for (var i = 0; i < s.value.length; i++) if (s.value[i] > max) max = s.value[i];
          s.max = max;
          row.dataset.count = String(s.ts.length);
          var body = row.querySelector('.body');
          counterRows.push({ row: row, body: body, canvas: body.querySelector('canvas'), s: s });
        });

        var axisBody = document.querySelector('.axis .body');
        var axisCanvas = axisBody.querySelector('canvas');
        var tracks = document.getElementById('tracks');
        var tooltip = document.getElementById('tooltip');
        var pad = fullEnd * 0.01;
        var view = { t0: -pad, t1: fullEnd + pad };

        // Legend: one swatch per drop reason, with its count.
        (function () {
          var counts = drops.reasons.map(function () { return 0; });
          for (var i = 0; i < drops.reason.length; i++) counts[drops.reason[i]]++;
          var legend = document.getElementById('legend');
          legend.appendChild(document.createTextNode('drops: '));
          drops.reasons.forEach(function (name, k) {
            var item = document.createElement('span');
            item.dataset.reason = name;
            var swatch = document.createElement('i');
            swatch.style.background = reasonColor(name);
            item.appendChild(swatch);
            item.appendChild(document.createTextNode(name + ' ' + counts[k]));
            legend.appendChild(item);
          });
        })();

        function prepare(canvas, body) {
          var dpr = window.devicePixelRatio || 1, w = body.clientWidth, h = body.clientHeight;
          var pw = Math.max(1, Math.round(w * dpr)), ph = Math.max(1, Math.round(h * dpr));
          if (canvas.width !== pw || canvas.height !== ph) { canvas.width = pw; canvas.height = ph; }
          var ctx = canvas.getContext('2d');
          ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
          ctx.clearRect(0, 0, w, h);
          return { ctx: ctx, w: Math.max(1, w), h: h };
        }

        function renderAxis() {
          var c = prepare(axisCanvas, axisBody), span = view.t1 - view.t0, scale = c.w / span;
          var raw = span / Math.max(1, c.w / 110), step = Math.pow(10, Math.floor(Math.log10(raw)));
          step *= raw / step > 5 ? 10 : raw / step > 2 ? 5 : raw / step > 1 ? 2 : 1;
          var decimals = Math.max(0, Math.ceil(-Math.log10(step / 1e6) - 1e-9));
          c.ctx.fillStyle = '#333'; c.ctx.strokeStyle = '#999'; c.ctx.font = '11px sans-serif';
          for (var t = Math.ceil(view.t0 / step) * step; t <= view.t1; t += step) {
            var x = Math.round((t - view.t0) * scale) + 0.5;
            c.ctx.beginPath(); c.ctx.moveTo(x, c.h - 6); c.ctx.lineTo(x, c.h); c.ctx.stroke();
            c.ctx.fillText((t / 1e6).toFixed(decimals) + ' s', x + 3, c.h - 7);
          }
        }

        function renderLane(lane) {
          var c = prepare(lane.canvas, lane.body), scale = c.w / (view.t1 - view.t0);
          var i0 = lowerBound(lane.start, view.t0 - lane.maxDur), i1 = lowerBound(lane.start, view.t1);
          var color = STAGE_COLORS[lane.stage] || '#888';
          lane.bins = null;
          if (lane.start.length === 0) {
            lane.layer.replaceChildren();
            c.ctx.fillStyle = '#999'; c.ctx.font = '11px sans-serif';
            c.ctx.fillText('no ' + lane.stage + ' spans in this trace', 6, 17);
            return 0;
          }
          if (i1 - i0 <= DOM_LIMIT) {
            var fragment = document.createDocumentFragment(), shown = 0;
            for (var i = i0; i < i1; i++) {
              var s = lane.start[i], e = s + lane.dur[i];
              if (e < view.t0) continue;
              var el = document.createElement('div');
              var width = Math.max(1, (e - s) * scale);
              el.className = width >= 4 ? 'span wide' : 'span';
              el.style.left = ((s - view.t0) * scale).toFixed(2) + 'px';
              el.style.width = width.toFixed(2) + 'px';
              el.style.background = color;
              if (lane.frame[i] !== null) el.dataset.frame = String(lane.frame[i]);
              el.dataset.i = String(i);
              fragment.appendChild(el);
              shown++;
            }
            lane.layer.replaceChildren(fragment);
            return shown;
          }
          lane.layer.replaceChildren();
          var w = Math.ceil(c.w), busy = new Float64Array(w), count = new Uint32Array(w);
          var sum = new Float64Array(w), max = new Float64Array(w);
          for (var j = i0; j < i1; j++) {
            var a = (lane.start[j] - view.t0) * scale, b = a + lane.dur[j] * scale;
            if (b < 0) continue;
            var first = Math.max(0, Math.floor(a)), last = Math.min(w - 1, Math.floor(b));
            var home = Math.min(w - 1, first);
            count[home]++; sum[home] += lane.dur[j]; if (lane.dur[j] > max[home]) max[home] = lane.dur[j];
            for (var p = first; p <= last; p++) busy[p] += Math.min(b, p + 1) - Math.max(a, p);
          }
          c.ctx.fillStyle = color;
          for (var q = 0; q < w; q++) {
            if (count[q] === 0 && busy[q] === 0) continue;
            c.ctx.globalAlpha = 0.3 + 0.7 * Math.min(1, busy[q]);
            c.ctx.fillRect(q, 3, 1, 20);
          }
          c.ctx.globalAlpha = 1;
          lane.bins = { busy: busy, count: count, sum: sum, max: max, scale: scale };
          return i1 - i0;
        }

        function renderDrops() {
          var c = prepare(drops.canvas, drops.body), scale = c.w / (view.t1 - view.t0);
          var i0 = lowerBound(drops.ts, view.t0), i1 = lowerBound(drops.ts, view.t1 + 1);
          drops.bins = null;
          if (i1 - i0 <= DOM_LIMIT) {
            var fragment = document.createDocumentFragment();
            for (var i = i0; i < i1; i++) {
              var el = document.createElement('div'), name = drops.reasons[drops.reason[i]];
              el.className = 'drop';
              el.style.left = ((drops.ts[i] - view.t0) * scale).toFixed(2) + 'px';
              el.style.background = reasonColor(name);
              el.dataset.reason = name;
              if (drops.frame[i] !== null) el.dataset.frame = String(drops.frame[i]);
              el.dataset.i = String(i);
              fragment.appendChild(el);
            }
            drops.layer.replaceChildren(fragment);
            return;
          }
          drops.layer.replaceChildren();
          var w = Math.ceil(c.w), counts = drops.reasons.map(function () { return new Uint32Array(w); });
          for (var j = i0; j < i1; j++) {
            var p = Math.min(w - 1, Math.max(0, Math.floor((drops.ts[j] - view.t0) * scale)));
            counts[drops.reason[j]][p]++;
          }
          for (var q = 0; q < w; q++) {
            var y = 2;
            for (var k = 0; k < counts.length; k++) {
              if (counts[k][q] === 0) continue;
              c.ctx.fillStyle = reasonColor(drops.reasons[k]);
              c.ctx.fillRect(q, y, 1, 12 / counts.length + 2);
              y += 12 / counts.length;
            }
          }
          drops.bins = { counts: counts, scale: scale };
        }

        function renderCounter(cr) {
          var c = prepare(cr.canvas, cr.body), s = cr.s, scale = c.w / (view.t1 - view.t0);
          var top = 12, h = c.h - top - 3;
          function y(v) { return top + h - (v / s.max) * h; }
          c.ctx.fillStyle = '#777'; c.ctx.font = '10px sans-serif';
          c.ctx.fillText(s.ts.length ? 'max ' + (s.scale === 1 ? s.max : ms(s.max)) + s.unit : 'no samples', 4, 10);
          if (s.ts.length === 0) return;
          var i0 = Math.max(0, lowerBound(s.ts, view.t0) - 1), i1 = Math.min(s.ts.length, lowerBound(s.ts, view.t1) + 1);
          c.ctx.strokeStyle = s.step ? '#4e79a7' : '#e15759'; c.ctx.lineWidth = 1.25;
          var w = Math.ceil(c.w);
          if (i1 - i0 > 2 * w) {
            var lo = new Float64Array(w).fill(Infinity), hi = new Float64Array(w).fill(-Infinity);
            for (var i = i0; i < i1; i++) {
              var p = Math.min(w - 1, Math.max(0, Math.floor((s.ts[i] - view.t0) * scale)));
              if (s.value[i] < lo[p]) lo[p] = s.value[i];
              if (s.value[i] > hi[p]) hi[p] = s.value[i];
            }
            c.ctx.beginPath();
            for (var q = 0; q < w; q++) {
              if (hi[q] === -Infinity) continue;
              c.ctx.moveTo(q + 0.5, y(lo[q]) + 0.5); c.ctx.lineTo(q + 0.5, y(hi[q]) - 0.5);
            }
            c.ctx.stroke();
            return;
          }
          c.ctx.beginPath();
          for (var j = i0; j < i1; j++) {
            var x = (s.ts[j] - view.t0) * scale;
            if (j === i0) c.ctx.moveTo(x, y(s.value[j]));
            else if (s.step) { c.ctx.lineTo(x, y(s.value[j - 1])); c.ctx.lineTo(x, y(s.value[j])); }
            else c.ctx.lineTo(x, y(s.value[j]));
          }
          if (s.step) c.ctx.lineTo(c.w, y(s.value[i1 - 1]));
          c.ctx.stroke();
        }

        var pending = false;
        function render() {
          pending = false;
          related = []; relatedFrame = null;
          renderAxis();
          var binned = 0, shown = 0;
          lanes.forEach(function (lane) { shown += renderLane(lane); if (lane.bins) binned++; });
          renderDrops();
          counterRows.forEach(renderCounter);
          var span = view.t1 - view.t0;
          document.getElementById('view-range').textContent = 'view ' + (view.t0 / 1e6).toFixed(3) + '–' +
            (view.t1 / 1e6).toFixed(3) + ' s (' + ms(span) + ' ms), ' + shown + ' spans' +
            (binned ? ', ' + binned + ' lanes aggregated (zoom in for single spans)' : '');
        }
        function schedule() { if (!pending) { pending = true; window.requestAnimationFrame(render); } }

        function setView(t0, t1) {
          var span = Math.min(Math.max(t1 - t0, MIN_SPAN_US), fullEnd + 2 * pad);
          t0 = Math.min(Math.max(t0, -pad - span * 0.5), fullEnd + pad - span * 0.5);
          view.t0 = t0; view.t1 = t0 + span;
          schedule();
        }
        function zoomAt(fraction, factor) {
          var span = view.t1 - view.t0, t = view.t0 + fraction * span, next = span * factor;
          next = Math.min(Math.max(next, MIN_SPAN_US), fullEnd + 2 * pad);
          setView(t - fraction * next, t - fraction * next + next);
        }
        function fractionAt(clientX) {
          var r = axisBody.getBoundingClientRect();
          return Math.min(1, Math.max(0, (clientX - r.left) / Math.max(1, r.width)));
        }

        document.getElementById('zoom-in').addEventListener('click', function () { zoomAt(0.5, 0.5); });
        document.getElementById('zoom-out').addEventListener('click', function () { zoomAt(0.5, 2); });
        document.getElementById('zoom-fit').addEventListener('click', function () { setView(-pad, fullEnd + pad); });
        tracks.addEventListener('wheel', function (ev) {
          ev.preventDefault();
          if (Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
            var dt = ev.deltaX * (view.t1 - view.t0) / Math.max(1, axisBody.clientWidth);
            setView(view.t0 + dt, view.t1 + dt);
          } else {
            zoomAt(fractionAt(ev.clientX), Math.exp(ev.deltaY * 0.002));
          }
        }, { passive: false });

        var drag = null;
        tracks.addEventListener('mousedown', function (ev) {
          if (ev.button !== 0) return;
          drag = { x: ev.clientX, t0: view.t0, t1: view.t1 };
          tracks.classList.add('dragging');
          ev.preventDefault();
        });
        window.addEventListener('mousemove', function (ev) {
          if (!drag) return;
          var dt = (ev.clientX - drag.x) * (drag.t1 - drag.t0) / Math.max(1, axisBody.clientWidth);
          setView(drag.t0 - dt, drag.t1 - dt);
        });
        window.addEventListener('mouseup', function () { drag = null; tracks.classList.remove('dragging'); });
        window.addEventListener('resize', schedule);

        function at(t) { return (t / 1000).toFixed(3) + ' ms (ts ' + Math.round(origin + t) + ' µs)'; }
        function spanText(lane, i) {
          var ex = lane.extra, lines = [lane.stage + (lane.frame[i] !== null ? '  frame ' + lane.frame[i] : '')];
          lines.push('start      ' + at(lane.start[i]));
          lines.push('duration   ' + ms(lane.dur[i]) + ' ms');
          if (ex.lag_us && ex.lag_us[i] !== null) lines.push('lag        ' + ms(ex.lag_us[i]) + ' ms (request→start)');
          if (ex.queued_us && ex.queued_us[i] !== null) lines.push('queued     ' + ms(ex.queued_us[i]) + ' ms');
          if (ex.result_frame && ex.result_frame[i] !== null) {
            lines.push('result     ' + (ex.result_frame[i] < 0 ? 'none yet' : 'frame ' + ex.result_frame[i]));
          }
          if (ex.result_age_us && ex.result_age_us[i] !== null) {
            lines.push('result age ' + ms(ex.result_age_us[i]) + ' ms');
          }
          if (ex.latency_us && ex.latency_us[i] !== null) lines.push('latency    ' + ms(ex.latency_us[i]) + ' ms');
          if (ex.photos && ex.photos[i] !== null) lines.push('photos     ' + ex.photos[i]);
          return lines.join('\n');
        }
        function dropText(i) {
          return 'drop: ' + drops.reasons[drops.reason[i]] +
            (drops.frame[i] !== null ? '  frame ' + drops.frame[i] : '') + '\nat ' + at(drops.ts[i]);
        }
        function rowText(row, x, t) {
          var lines = [];
          if (row.classList.contains('lane')) {
            var lane = laneByStage[row.dataset.stage], p = Math.floor(x);
            if (lane.bins && p < lane.bins.count.length) {
              var b = lane.bins, n = b.count[p];
              lines.push(lane.stage + ': ' + n + ' spans start in this pixel (' + ms(1 / b.scale) + ' ms)');
              lines.push('busy       ' + Math.round(Math.min(1, b.busy[p]) * 100) + '%');
              if (n) lines.push('duration   mean ' + ms(b.sum[p] / n) + ' ms, max ' + ms(b.max[p]) + ' ms');
            }
          } else if (row.classList.contains('drop-row') && drops.bins) {
            var q = Math.floor(x);
            drops.reasons.forEach(function (name, k) {
              var n = q < drops.bins.counts[k].length ? drops.bins.counts[k][q] : 0;
              if (n) lines.push(name + ' ' + n);
            });
            if (lines.length) lines.unshift('drops in this pixel:');
          } else if (row.classList.contains('counter')) {
            var cr = counterRows.filter(function (r) { return r.row === row; })[0];
            if (cr && cr.s.ts.length) {
              var s = cr.s, k = lowerBound(s.ts, t);
              if (s.step) k = Math.max(0, s.ts[k] === t ? k : k - 1);
              else if (k > 0 && (k === s.ts.length || t - s.ts[k - 1] < s.ts[k] - t)) k--;
              k = Math.min(k, s.ts.length - 1);
              var v = s.scale === 1 ? String(s.value[k]) : ms(s.value[k]);
              lines.push(s.name + ' ' + v + s.unit + '\nat ' + at(s.ts[k]));
            }
          }
          lines.push('time ' + at(t));
          return lines.join('\n');
        }
        // Hovering a span or drop outlines every element of the same frame, so a frame can be followed across lanes.
        var related = [], relatedFrame = null;
        function relate(frame) {
          if (frame === relatedFrame) return;
          related.forEach(function (el) { el.classList.remove('related'); });
          related = frame === null ? [] : Array.prototype.slice.call(
            tracks.querySelectorAll('.span[data-frame="' + frame + '"], .drop[data-frame="' + frame + '"]'));
          related.forEach(function (el) { el.classList.add('related'); });
          relatedFrame = frame;
        }
        tracks.addEventListener('mousemove', function (ev) {
          if (drag) { tooltip.hidden = true; return; }
          var target = ev.target, text = null;
          relate(target.dataset && target.dataset.frame !== undefined ? target.dataset.frame : null);
          if (target.classList.contains('span')) {
            text = spanText(laneByStage[target.closest('.lane').dataset.stage], +target.dataset.i);
          } else if (target.classList.contains('drop')) {
            text = dropText(+target.dataset.i);
          } else {
            var row = target.closest('.row');
            if (row) {
              var r = axisBody.getBoundingClientRect(), x = ev.clientX - r.left;
              if (x >= 0) text = rowText(row, x, view.t0 + x * (view.t1 - view.t0) / Math.max(1, r.width));
            }
          }
          if (!text) { tooltip.hidden = true; return; }
          tooltip.textContent = text;
          tooltip.hidden = false;
          var left = ev.clientX + 14, top = ev.clientY + 14;
          if (left + tooltip.offsetWidth > window.innerWidth) left = ev.clientX - tooltip.offsetWidth - 8;
          if (top + tooltip.offsetHeight > window.innerHeight) top = ev.clientY - tooltip.offsetHeight - 8;
          tooltip.style.left = left + 'px'; tooltip.style.top = top + 'px';
        });
        tracks.addEventListener('mouseleave', function () { tooltip.hidden = true; relate(null); });

        // `#from=S&to=S` (seconds from the start of the run) opens the page on that range.
        (function () {
          var match = /from=([0-9.eE+-]+)&to=([0-9.eE+-]+)/.exec(window.location.hash);
          if (match && +match[2] > +match[1]) { view.t0 = +match[1] * 1e6; view.t1 = +match[2] * 1e6; }
        })();
        render();
        // For tests driving the page with synthetic events: draw now instead of on the next animation frame.
        window.colorcamTimeline = { renderNow: render, view: function () { return { t0: view.t0, t1: view.t1 }; } };
        document.body.dataset.renderMs = String(Math.round(performance.now()));
        document.body.dataset.ready = '1';
        })();

        """#
}
