enum ReplayCommand {
    static let command = Command(name: "replay", summary: "run a recorded .y4m or PNG folder through the pipeline",
                                 help: "usage: colorcam replay INPUT", run: { _ in 70 })
}
