import PTKVocabulary

/// Live Photos (issue 58): an iPhone keeps a photo taken with Live Photo on as a still (HEIC or
/// JPEG) and a short video (MOV). The library pairs them when they are read, never by a stored
/// link (a link would outlive a file removed or renamed by hand): the SQL here derives each
/// photo's partner from its row: `live_id`, and `live_role` and `live_name`, which SQLite
/// derives from the name.
///
/// A still and a video of the same sender (the same `sender_name` and `sender_id`: one
/// sender's files never pair with another's, nor hide or take them along) are a pair when
/// - both carry the same content identifier (`live_id`: Apple's MakerNote tag 0x11 in the still,
///   `com.apple.quicktime.content.identifier` in the video), in any folder; else
/// - one of them carries none, and they have the same name but for its ending in the same
///   folder (`live_name`: "a/IMG_0042." for "a/IMG_0042.HEIC" and "a/IMG_0042.MOV"; a MOV only;
///   the stem's case counts), and both say when they were taken, within `window` milliseconds
///   of each other (a file's modification time says nothing of that).
///
/// A still's motion is the first video (by id) that pairs with it by identifier, else by name;
/// a video is the motion of the first still whose motion it is. A video that is some still's
/// motion is not an item of its own in the gallery (`notMotion`) or in `ptk list`; every other
/// one is.
///
/// Every lookup is one index probe: `photos_live_id` (live_role, live_id, sender_name,
/// sender_id) and `photos_live_name` (live_role, live_name, sender_name, sender_id) give the
/// rows of one key and one sender in id order, so "the first" stops at the first row, whatever
/// the library holds. A name's rows are few by construction (the stem's case counts; only the
/// endings' cases vary), so the name's time check reads at most a few dozen.
enum LivePhotos {
    /// How far apart (milliseconds) a still and a video of the same name may have been taken
    /// to be paired without an identifier. An iPhone's video starts some 1.5 s before its still.
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

    /// `live_name`'s expression: for a still or a MOV, its name up to and with its last "."
    /// (its case kept); NULL for anything else (an MP4 pairs by identifier only).
    static let nameSQL =
        "CASE WHEN \(ends(stillEndings + PhotoType.mov.endings)) THEN rtrim(name, replace(name, '.', '')) END"

    /// The indices every lookup of the pairing probes (made by schema 10).
    static let indicesSQL = """
        CREATE INDEX IF NOT EXISTS photos_live_id ON photos(live_role, live_id, sender_name, sender_id);
        CREATE INDEX IF NOT EXISTS photos_live_name ON photos(live_role, live_name, sender_name, sender_id);
        """

    /// SQL true when rows `a` and `b` (table aliases) come from the same sender.
    private static func sameSender(_ a: String, _ b: String) -> String {
        "\(a).sender_name IS \(b).sender_name AND \(a).sender_id IS \(b).sender_id"
    }

    /// The first row of `role` (1 still, 2 video), as `alias`, with the content identifier of
    /// row `of`, from its sender.
    private static func firstByID(role: Int, _ alias: String, of row: String) -> String {
        """
        (SELECT \(alias).id FROM photos \(alias) WHERE \(alias).live_role = \(role) AND \(alias).live_id = \(row).live_id \
        AND \(sameSender(alias, row)) ORDER BY \(alias).id LIMIT 1)
        """
    }

    /// SQL true when the rows `v` (a video) and `s` (a still) of one name and sender may pair
    /// by it: one of them carries no identifier, and both were taken within `window`.
    private static func byName(video v: String, still s: String) -> String {
        """
        \(v).live_name = \(s).live_name AND \(sameSender(v, s)) AND (\(v).live_id IS NULL OR \(s).live_id IS NULL) \
        AND abs(\(v).taken_ms - \(s).taken_ms) <= \(window)
        """
    }

    /// The id of the motion of row `still` when it is a still, else NULL: the first video with
    /// its identifier, else the first that pairs with it by name.
    static func motion(of still: String, alias v: String = "v") -> String {
        """
        (CASE WHEN \(still).live_role = 1 THEN coalesce(\(firstByID(role: 2, v, of: still)), \
        (SELECT \(v).id FROM photos \(v) WHERE \(v).live_role = 2 AND \(byName(video: v, still: still)) ORDER BY \(v).id LIMIT 1)) END)
        """
    }

    /// The id of the still of the row `photos` when it is a video that is some still's motion
    /// (the first such still), else NULL: the first still with its identifier when it is the
    /// first video with it; else the first still of its name whose motion it is.
    static let stillColumn = """
        (CASE WHEN photos.live_role = 2 THEN coalesce(\
        CASE WHEN photos.id = \(firstByID(role: 2, "v2", of: "photos")) THEN \(firstByID(role: 1, "s2", of: "photos")) END, \
        (SELECT s.id FROM photos s WHERE s.live_role = 1 AND \(byName(video: "photos", still: "s")) \
        AND photos.id = \(motion(of: "s")) ORDER BY s.id LIMIT 1)) END)
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
