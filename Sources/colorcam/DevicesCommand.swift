#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Stream

/// `colorcam devices`: lists V4L2 capture devices with their formats, sizes and frame rates.
enum DevicesCommand {
    static let command = Command(
        name: "devices", summary: "list V4L2 cameras: driver, formats, sizes, frame rates", help: help,
        run: { try run($0) })

    static let help = """
    usage: colorcam devices [--device D]

    Lists every video capture device (/dev/video*, or just D): driver, card, and for each pixel format the sizes
    and frame rates offered. Formats with identical size/rate tables are grouped. Formats colorcam converts are
    marked with the planar layout they become (e.g. 'YUYV→422'); '(no)' marks formats colorcam cannot use.
    Nodes that are not capture devices are named on one line at the end.

    exit codes: 0 at least one capture device listed, 69 none found
    """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, command: "devices", valued: ["device"])
        _ = try a.positionals(exactly: 0, usage: "devices [--device D]")
        let paths = a.string("device").map { [$0] } ?? videoNodes()
        var listed = 0
        var others: [String] = []
        var text = ""
        for path in paths {
            let device: V4L2Device
            do {
                device = try V4L2Device(path: path)
            } catch let error as StreamError {
                if a.string("device") != nil { throw error }
                others.append("\(path) (\(error.message))")
                continue
            }
            defer { device.close() }
            text += try describe(device)
            listed += 1
        }
        print(text, terminator: "")
        if !others.isEmpty { print("not capture devices: " + others.joined(separator: ", ")) }
        if listed == 0 {
            throw StreamError(.unavailable, file: "/dev", "no V4L2 capture device found"
                + (paths.isEmpty ? " (no /dev/video* nodes)" : ""))
        }
        return 0
    }

    /// `/dev/videoN` nodes in numeric order.
    static func videoNodes() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
            .map { "/dev/" + $0 }
    }

    static func describe(_ device: V4L2Device) throws -> String {
        let caps = device.capabilities
        var text = "\(device.path): \(caps.card) (driver \(caps.driver), \(caps.busInfo))\n"
        var groups: [(formats: [String], table: String)] = []
        for format in try device.formats() {
            let f = format.pixelFormat
            var label = f.fourCC.trimmingCharacters(in: .whitespaces)
            label += f.planarChroma.map { "→\($0)" } ?? "(no)"
            if format.isEmulated { label += "(emulated)" }
            let table = try sizeTable(device, f)
            if let last = groups.last, last.table == table {
                groups[groups.count - 1].formats.append(label)
            } else {
                groups.append(([label], table))
            }
        }
        for group in groups {
            text += "  " + group.formats.joined(separator: " ") + "\n" + group.table
        }
        return text
    }

    static func sizeTable(_ device: V4L2Device, _ format: V4L2PixelFormat) throws -> String {
        switch try device.frameSizes(for: format) {
        case nil:
            return "    (sizes not enumerated)\n"
        case .stepwise(let minW, let maxW, let stepW, let minH, let maxH, let stepH)?:
            let rates = try device.frameIntervals(for: format, widthPx: maxW, heightPx: maxH)
            return "    \(minW)x\(minH) to \(maxW)x\(maxH) step \(stepW)x\(stepH); at \(maxW)x\(maxH): \(rates.description)\n"
        case .discrete(let sizes)?:
            var text = ""
            for size in sizes {
                let rates = try device.frameIntervals(for: format, widthPx: size.widthPx, heightPx: size.heightPx)
                text += "    \(size.widthPx)x\(size.heightPx): \(rates.description)\n"
            }
            return text
        }
    }
}
