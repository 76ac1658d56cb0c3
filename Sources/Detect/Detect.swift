/// Detect: finds photos in frames, tracks them, rectifies and composites them (see README.md).
/// The detector lands with the detect issue; this namespace anchors the module until then.
public enum Detect {}
