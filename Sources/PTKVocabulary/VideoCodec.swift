/// A video's coding, as its MP4 sample description names it in four letters (`avc1`, `hvc1`):
/// the name people know it by, and what a browser is asked whether it plays (issue 58).
public enum VideoCodec {
    /// `text` when it is a sample description's name: four letters, digits or spaces (what
    /// the library keeps and pages show; a hostile file may name anything), else nil.
    public static func fourCC(_ text: String) -> String? {
        let b = Array(text.utf8)
        guard b.count == 4,
            b.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7a) || $0 == 0x20 })
        else { return nil }
        return text
    }

    /// The common name of the coding `fourCC` ("H.264" for avc1 and avc3, "HEVC" for hvc1
    /// and hev1), else the four letters as they are.
    public static func commonName(_ fourCC: String) -> String {
        known[fourCC]?.name ?? fourCC
    }

    /// A `codecs` parameter a browser's `canPlayType` knows for the coding `fourCC` (a common
    /// profile of it: "avc1.640028", High at level 4.0), nil for one ptk does not know. Asked
    /// with `video/mp4; codecs="…"`, it tells a browser that cannot play HEVC (Chromium on
    /// Linux) before it loads any of the file.
    public static func browserCodec(_ fourCC: String) -> String? {
        known[fourCC]?.browser ?? nil
    }

    private static let known: [String: (name: String, browser: String?)] = [
        "avc1": ("H.264", "avc1.640028"), "avc3": ("H.264", "avc3.640028"),
        "hvc1": ("HEVC", "hvc1.1.6.L120.90"), "hev1": ("HEVC", "hev1.1.6.L120.90"),
        "av01": ("AV1", "av01.0.08M.08"), "vp09": ("VP9", "vp09.00.40.08"),
        "mp4v": ("MPEG-4 Part 2", "mp4v.20.9"), "jpeg": ("Motion JPEG", nil),
        "apcn": ("ProRes 422", nil), "apch": ("ProRes 422 HQ", nil),
    ]
}
