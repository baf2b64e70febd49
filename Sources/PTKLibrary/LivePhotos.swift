import PTKVocabulary

/// Live Photos (issue 58): an iPhone keeps a photo taken with Live Photo on as a still (HEIC or
/// JPEG) and a short video (MOV). The library pairs them when they are read, never by a stored
/// link (a link would outlive a file removed or renamed by hand): the SQL here derives each
/// photo's partner from three columns of its row, `live_id`, `live_role` and `live_name`.
///
/// A still and a video are a pair when
/// - both carry the same content identifier (`live_id`: Apple's MakerNote tag 0x11 in the still,
///   `com.apple.quicktime.content.identifier` in the video), or
/// - one of them carries none, and they have the same name but for its ending in the same
///   folder (`live_name`: "a/img_0042." for "a/IMG_0042.HEIC" and "a/IMG_0042.MOV"; MOV only),
///   and were taken, or last modified, within `window` milliseconds of each other.
///
/// A still's motion is the first video (by id) that pairs with it; a video belongs to the
/// first still whose motion it is. A video that is some still's motion is not an item of its
/// own in the gallery (`notMotion`) or in `ptk list`; every other one is.
enum LivePhotos {
    /// How far apart (milliseconds) a still and a video of the same name may have been taken,
    /// or modified, to be paired without an identifier. An iPhone's video starts some 1.5 s
    /// before its still.
    static let window = 5000

    /// The stills' endings (HEIC, HEIF, JPEG) and the videos' (MP4, MOV), lower case.
    static let stillEndings = PhotoType.allCases.filter { $0 == .jpeg || $0.isHEIF }.flatMap(\.endings)
    static let videoEndings = PhotoType.allCases.filter(\.isVideo).flatMap(\.endings)

    /// SQL true when column `name` ends in one of `endings` (any case).
    private static func ends(_ endings: [String], _ name: String = "name") -> String {
        "(" + Set(endings).sorted().map { "lower(\(name)) LIKE '%\($0)'" }.joined(separator: " OR ") + ")"
    }

    /// `live_role`'s expression: 1 for a still, 2 for a video, NULL for anything else.
    static let roleSQL = "CASE WHEN \(ends(stillEndings)) THEN 1 WHEN \(ends(videoEndings)) THEN 2 END"

    /// `live_name`'s expression: for a still or a MOV, its name up to and with its last ".", lower
    /// case; NULL for anything else (an MP4 pairs by identifier only).
    static let nameSQL =
        "CASE WHEN \(ends(stillEndings + PhotoType.mov.endings)) THEN lower(rtrim(name, replace(name, '.', ''))) END"

    /// SQL true when the row `video` and the row `still` (table aliases) pair.
    static func match(video v: String, still s: String) -> String {
        """
        (\(v).live_id = \(s).live_id OR ((\(v).live_id IS NULL OR \(s).live_id IS NULL) AND \(v).live_name = \(s).live_name \
        AND (abs(\(v).taken_ms - \(s).taken_ms) <= \(window) OR abs(\(v).mtime - \(s).mtime) <= \(window))))
        """
    }

    /// The id of the motion of the row `photos` when it is a still (the first video that pairs
    /// with it), else NULL.
    static func motion(of still: String) -> String {
        "(SELECT v.id FROM photos v WHERE \(still).live_role = 1 AND v.live_role = 2 AND \(match(video: "v", still: still)) ORDER BY v.id LIMIT 1)"
    }

    /// The id of the still of the row `photos` when it is a video that is some still's motion
    /// (the first such still), else NULL.
    static let stillColumn = """
        (SELECT s.id FROM photos s WHERE photos.live_role = 2 AND s.live_role = 1 AND \(match(video: "photos", still: "s")) \
        AND photos.id = \(motion(of: "s")) ORDER BY s.id LIMIT 1)
        """

    /// The motion column of the photo SELECT.
    static let motionColumn = motion(of: "photos")

    /// A WHERE condition on `photos`: not a video shown as a still's motion.
    static let notMotion = "(photos.live_role IS NOT 2 OR \(stillColumn) IS NULL)"

    /// A content identifier as a file gives it, when it is one: 1 to 64 letters, digits and
    /// dashes (Apple writes an upper-case UUID), in upper case; nil for anything else.
    static func contentID(_ raw: String?) -> String? {
        guard let raw, (1...64).contains(raw.utf8.count),
            raw.utf8.allSatisfy({
                $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0 & 0xDF)
            })
        else { return nil }
        return raw.uppercased()
    }
}
