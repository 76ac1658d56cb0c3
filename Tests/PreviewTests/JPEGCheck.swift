import CTurboJPEG

/// Decodes a JPEG fully with libturbojpeg; returns its size, or nil when it is not a valid JPEG.
func decodedJPEGSize(_ bytes: [UInt8]) -> (widthPx: Int, heightPx: Int)? {
    guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[bytes.count - 2] == 0xFF,
        bytes[bytes.count - 1] == 0xD9
    else { return nil }
    guard let handle = tjInitDecompress() else { return nil }
    defer { tjDestroy(handle) }
    var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
    let headerOK = bytes.withUnsafeBufferPointer {
        tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colorspace)
    }
    guard headerOK == 0, width > 0, height > 0 else { return nil }
    var rgb = [UInt8](repeating: 0, count: Int(width) * Int(height) * 3)
    let decoded = bytes.withUnsafeBufferPointer { jpeg in
        rgb.withUnsafeMutableBufferPointer { out in
            tjDecompress2(
                handle, jpeg.baseAddress, UInt(jpeg.count), out.baseAddress, width, 0, height,
                Int32(TJPF_RGB.rawValue), 0)
        }
    }
    guard decoded == 0 else { return nil }
    return (Int(width), Int(height))
}
