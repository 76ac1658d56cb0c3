enum TraceReportCommand {
    static let command = Command(name: "trace-report", summary: "summarise a trace: fps, drops, lag, verdict",
                                 help: "usage: colorcam trace-report TRACE.json", run: { _ in 70 })
}
