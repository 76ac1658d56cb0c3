import ColorcamCore
import Stream

/// The HTML report's fixed parts: markup skeleton, CSS and the timeline script (written for colorcam, no libraries,
/// no network).
///
/// What the script draws from the embedded `#trace-data` JSON (`TraceReport.writeData`):
/// - one `.lane[data-stage]` per stage; while a lane has at most `DOM_LIMIT` spans in view, each is a
///   `.span[data-frame]` element (hover: stage, frame, start, duration, lag / result age); with more, the lane is a
///   canvas of per-pixel bins (shade = share of time busy; hover: span count and durations in the bin);
/// - `.drop[data-reason]` markers coloured by reason (legend in the toolbar), binned on a canvas when too many;
/// - step graphs of `in_flight` (and `queue_depth` when present) and a per-inference lag graph;
/// - zoom with the wheel or the +/− buttons, pan by dragging, "fit" to see everything.
/// The URL fragment `#from=S&to=S` (seconds from the start of the run) sets the initial view.
/// When the first render is done the body gets `data-ready="1"` and `data-render-ms` (ms since navigation start).
enum TraceReportPage {
    /// The timeline section: toolbar, axis, one lane per stage, drops, counter graphs, tooltip.
    static func timelineMarkup(stages: [String]) -> String {
        var html = """
            <section id="timeline">
            <div class="toolbar"><button id="zoom-in" title="zoom in">+</button>
            <button id="zoom-out" title="zoom out">−</button>
            <button id="zoom-fit" title="show the whole run">fit</button>
            <span id="view-range"></span><span id="legend" class="legend"></span>
            <span class="hint">wheel: zoom · drag: pan · hover: details</span></div>
            <div id="tracks">
            <div class="row axis"><div class="label">time</div><div class="body"><canvas></canvas></div></div>

            """
        for (index, stage) in stages.enumerated() {
            html +=
                "<div class=\"row lane\" data-stage=\"\(stage)\" data-index=\"\(index)\">"
                + "<div class=\"label\">\(stage)</div><div class=\"body\"><canvas></canvas></div></div>\n"
        }
        html += """
            <div class="row drop-row"><div class="label">drops</div><div class="body"><canvas></canvas></div></div>

            """
        for (counter, label) in [("in_flight", "in flight"), ("lag", "infer lag ms"), ("queue_depth", "queue depth")] {
            html +=
                "<div class=\"row counter\" data-counter=\"\(counter)\"><div class=\"label\">\(label)</div>"
                + "<div class=\"body\"><canvas></canvas></div></div>\n"
        }
        html += """
            </div>
            <div id="tooltip" hidden></div>
            </section>

            """
        return html
    }

    static let style = """
        body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #1d1d1f; background: #fff; }
        h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 20px 0 6px; }
        .file { color: #555; font-family: monospace; margin-bottom: 8px; }
        .simulated { background: #fff3cd; border: 2px solid #e0a800; padding: 6px 10px; font-weight: 700;
          margin: 6px 0; }
        .verdict { font-size: 16px; font-weight: 700; padding: 8px 12px; margin: 6px 0 12px; border-radius: 4px; }
        .verdict.pass { background: #d4f4dd; color: #0b5d1e; } .verdict.fail { background: #fbd5d5; color: #8a1010; }
        .toolbar { display: flex; gap: 8px; align-items: center; margin-bottom: 4px; flex-wrap: wrap; }
        .toolbar button { font: inherit; min-width: 32px; }
        .legend span { display: inline-block; margin-right: 10px; }
        .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 3px; vertical-align: -1px; }
        .hint { color: #777; margin-left: auto; }
        #tracks { border: 1px solid #ccc; user-select: none; cursor: grab; }
        #tracks.dragging { cursor: grabbing; }
        .row { display: flex; border-top: 1px solid #eee; }
        .row .label { flex: 0 0 100px; padding: 0 6px; font-size: 12px; color: #333; background: #f7f7f7;
          border-right: 1px solid #ddd; display: flex; align-items: center; }
        .row .body { position: relative; flex: 1 1 auto; overflow: hidden; }
        .row canvas { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }
        .axis .body { height: 20px; } .lane .body { height: 26px; } .drop-row .body { height: 16px; }
        .counter .body { height: 44px; } .counter.empty { display: none; }
        .span { position: absolute; top: 3px; height: 20px; min-width: 1px; }
        .span.wide { box-shadow: inset -1px 0 0 rgba(255,255,255,.7); }
        .span:hover, .drop:hover { outline: 2px solid #000; z-index: 2; }
        .span.related, .drop.related { outline: 2px solid #f0c000; z-index: 1; }
        .drop { position: absolute; top: 2px; width: 3px; height: 12px; margin-left: -1px; }
        #tooltip { position: fixed; pointer-events: none; background: rgba(20,20,20,.92); color: #fff;
          padding: 5px 8px; border-radius: 3px; font: 12px/1.35 monospace; white-space: pre; z-index: 10; }
        table { border-collapse: collapse; } th, td { text-align: left; padding: 3px 10px; border-bottom: 1px solid #eee;
          vertical-align: top; } th { font-weight: 600; white-space: nowrap; }
        tr.note td, tr.note th { background: #fff3cd; } tr.fail td, tr.fail th { color: #8a1010; }
        tr.pass td:nth-child(2) { color: #0b5d1e; font-weight: 700; } tr.fail td:nth-child(2) { font-weight: 700; }

        """
}
