import ColorcamCore
import Testing

@Test(arguments: [
    (321, 241, ChromaFormat.yuv420(.jpeg), 321 * 241 + 2 * 161 * 121),
    (321, 241, .yuv422, 321 * 241 + 2 * 161 * 241),
    (321, 241, .yuv444, 3 * 321 * 241),
    (1, 1, .mono, 1),
    (640, 480, .yuv420(.mpeg2), 460_800)
])
func frameBytesRoundChromaUp(width: Int, height: Int, chroma: ChromaFormat, bytes: Int) {
    #expect(FrameGeometry(widthPx: width, heightPx: height, chroma: chroma).frameBytes == bytes)
}

@Test func y4mTagsRoundTrip() {
    for tag in ["420jpeg", "420paldv", "420mpeg2", "420", "422", "444", "mono"] {
        #expect(ChromaFormat(y4mTag: tag)?.y4mTag == tag)
    }
    #expect(ChromaFormat(y4mTag: "420p10") == nil)
}
