/// The audits' hostile HEICs (issue 54: a grid or overlay whose output is not its ispe, a coded
/// image larger than its ispe; a second ispe, an empty NAL unit, an item placed twice, two
/// pictures in one image), which every door refuses as not a photo, with the reason: each
/// file in Tests/Fixtures/heif/hostile by name, with the words of that reason.
public enum HostileHEICs {
    /// The files' names and the words their refusal carries.
    public static let files = [
        "grid-20000.heic": "makes a 20000x20000 image", "overlay-20000.heic": "makes a 20000x20000 image",
        "coded-2048.heic": "is coded 2048x2048", "coded-in-band.heic": "is coded 2048x2048",
        // The second image audit's (what libheif 1.15 reads otherwise than the check did).
        "ispe2-grid-7500.heic": "has 2 ispe properties", "nal-zero.heic": "a NAL unit of 0 bytes",
        "iloc-twice.heic": "iloc places item 1 twice", "pictures-2.heic": "holds 2 pictures",
    ]

    /// The bytes of the file `name` (nil when the fixture cannot be read).
    public static func bytes(_ name: String) -> [UInt8]? { readFile(fixturePath("heif/hostile/" + name)) }
}
