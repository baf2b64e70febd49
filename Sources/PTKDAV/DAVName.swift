/// What kind of name a WebDAV client uses: the door shows ordinary names, never hidden ones,
/// and treats the sidecar files operating systems write beside others as its own decision.
public enum DAVName {
    /// A name's kind.
    public enum Kind: Sendable, Equatable {
        /// A name the store shows: a photo, a folder.
        case ordinary
        /// Starts with "." and is no sidecar: the store's own (.ptk, .incoming) or anything
        /// else dotted (.git, ., ..). Never listed, never written through the door.
        case hidden
        /// What an operating system's file manager writes beside files and in folders on any
        /// volume it mounts: macOS's AppleDouble "._*" files, ".DS_Store", ".localized",
        /// ".Trashes", ".Spotlight-V100", ".fseventsd", ".TemporaryItems", ".apdisk",
        /// ".VolumeIcon.icns", ".metadata_never_index*", ".com.apple.timemachine.donotpresent";
        /// Windows's "Thumbs.db", "ehthumbs.db", "ehthumbs_vista.db", "desktop.ini". Not photos;
        /// refusing them makes Finder fail whole copies (it writes "._x" for every "x").
        case sidecar
    }

    /// Names compared ASCII case-insensitively: the file managers write them on case-insensitive
    /// volumes as well (".DS_STORE" is the same file to Finder).
    private static let sidecars: Set<String> = [
        ".ds_store", ".localized", ".trashes", ".spotlight-v100", ".fseventsd", ".temporaryitems", ".apdisk",
        ".volumeicon.icns", ".com.apple.timemachine.donotpresent",
        "thumbs.db", "ehthumbs.db", "ehthumbs_vista.db", "desktop.ini",
    ]

    /// The kind of `name` (one decoded path component). By bytes: `hasPrefix(".")` compares
    /// Characters, and ".\u{301}x" begins with the Character ".\u{301}", a dotted name all the same.
    public static func kind(_ name: String) -> Kind {
        let lowered = asciiLowercased(name)
        if lowered.utf8.starts(with: "._".utf8) || sidecars.contains(lowered)
            || lowered.utf8.starts(with: ".metadata_never_index".utf8)
        {
            return .sidecar
        }
        return name.utf8.first == UInt8(ascii: ".") ? .hidden : .ordinary
    }
}
