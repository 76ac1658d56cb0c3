enum TestClipCommand {
    static let command = Command(name: "testclip", summary: "write a synthetic moving test clip (.y4m)",
                                 help: "usage: colorcam testclip OUT.y4m", run: { _ in 70 })
}
