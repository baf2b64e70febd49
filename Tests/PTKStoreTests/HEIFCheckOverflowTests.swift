import PTKDigest
import PTKTestSupport
import PTKTestTags
import Testing

@testable import PTKStore

/// Sizes a HEIF declares at their largest (an `ispe` of 0xFFFFFFFF x 0xFFFFFFFF, a sequence
/// parameter set of 33-bit sides): what the check computes from them must not overflow (a
/// trap takes ptkd down for everyone).
@Suite("HEIF check arithmetic on the largest declared sizes", .tags(.unit))
struct HEIFCheckOverflowTests {
    static func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func u32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    /// A HEIF whose primary item 1 is `primaryType` with `data` in mdat, referring by dimg to
    /// items 2... (`layers` of them, HEVC images without data); every image has the one ispe
    /// `side` x `side` and the HEVC ones the hvcC `hvcC`.
    static func file(primaryType: String, data: [UInt8], layers: Int, side: UInt32, hvcC: [UInt8]) -> [UInt8] {
        let ids = Array(1...(1 + layers))
        let types = [primaryType] + Array(repeating: "hvc1", count: layers)
        let infes = zip(ids, types).flatMap { isoFullBox("infe", version: 2, u16($0) + u16(0) + Array($1.utf8) + [0]) }
        let iinf = isoFullBox("iinf", u16(ids.count) + infes)
        let iref =
            layers == 0
            ? [] : isoFullBox("iref", isoBox("dimg", u16(1) + u16(layers) + ids.dropFirst().flatMap { u16($0) }))
        let ipco = isoBox("ipco", isoFullBox("ispe", u32(side) + u32(side)) + isoBox("hvcC", hvcC))
        let associations: [UInt8] = ids.flatMap { id -> [UInt8] in
            u16(id) + (types[id - 1] == "hvc1" ? [2, 0x81, 0x82] : [1, 0x81])
        }
        let iprp = isoBox("iprp", ipco + isoFullBox("ipma", u32(UInt32(ids.count)) + associations))
        let hdlr = isoFullBox("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
        // iloc version 0, 4-byte offsets and lengths: item 1 in mdat, the others without extents.
        func meta(_ offset: UInt32) -> [UInt8] {
            let places =
                u16(1) + u16(0) + u16(1) + u32(offset) + u32(UInt32(data.count))
                + ids.dropFirst().flatMap { u16($0) + u16(0) + u16(0) }
            let iloc = isoFullBox("iloc", [0x44, 0x00] + u16(ids.count) + places)
            return isoFullBox("meta", hdlr + isoFullBox("pitm", u16(1)) + iloc + iinf + iref + iprp)
        }
        let head = heifFileType() + meta(0)
        return heifFileType() + meta(UInt32(head.count + 8)) + isoBox("mdat", data)
    }

    /// hvcC with 4-byte lengths and the NAL units `units` (one array).
    static func hvcC(_ units: [[UInt8]]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 21) + [0xFF]
        if units.isEmpty { return out + [0] }
        out += [1, 0x80 | 33] + u16(units.count)
        for u in units { out += u16(u.count) + u }
        return out
    }

    /// An SPS NAL unit (escaped) declaring `width` x `height`.
    static func sps(width: UInt64, height: UInt64) -> [UInt8] {
        var bits: [Bool] = []
        func put(_ v: UInt64, _ n: Int) {
            for i in stride(from: n - 1, through: 0, by: -1) { bits.append(v >> UInt64(i) & 1 == 1) }
        }
        func ue(_ v: UInt64) {
            let n = 64 - (v + 1).leadingZeroBitCount
            put(0, n - 1)
            put(v + 1, n)
        }
        put(0, 4)
        put(0, 3)
        put(1, 1)
        for _ in 0..<12 { put(0xFF, 8) }  // profile_tier_level: ones, so no escapes are needed there
        ue(0)
        ue(1)
        ue(width)
        ue(height)
        put(1, 1)
        while bits.count % 8 != 0 { bits.append(false) }
        var raw: [UInt8] = []
        for i in stride(from: 0, to: bits.count, by: 8) {
            raw.append(bits[i..<i + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) })
        }
        var escaped: [UInt8] = [0x42, 0x01]
        var zeros = 0
        for b in raw {
            if zeros >= 2 && b <= 3 {
                escaped.append(3)
                zeros = 0
            }
            zeros = b == 0 ? zeros + 1 : 0
            escaped.append(b)
        }
        return escaped
    }

    @Test("the SPS builder declares what it is asked")
    func spsBuilder() throws {
        let coded = try HEVCPictureSize.of(sps: Self.sps(width: 304, height: 200)[...])
        #expect(coded.width == 304 && coded.height == 200)
        let large = try HEVCPictureSize.of(sps: Self.sps(width: 1 << 32 + 63, height: 1 << 32 + 63)[...])
        #expect(large.width == 1 << 32 + 63 && large.height == 1 << 32 + 63)
    }

    static func report(_ bytes: [UInt8]) throws -> HEIFCheck.Report {
        try HEIFCheck.check(size: Int64(bytes.count)) { (offset, count) throws(FormatError) -> [UInt8] in
            guard offset >= 0, Int(offset) + count <= bytes.count else { throw FormatError("read past the end") }
            return Array(bytes[Int(offset)..<Int(offset) + count])
        }
    }

    @Test(
        "an overlay of two layers of 0xFFFFFFFF x 0xFFFFFFFF: their pixels together are more than any budget, not an overflow"
    )
    func overlayLayersOfTheLargestSize() throws {
        let overlay: [UInt8] =
            [0, 1] + [UInt8](repeating: 0, count: 8) + Self.u32(.max) + Self.u32(.max)
            + [UInt8](repeating: 0, count: 16)
        let bytes = Self.file(primaryType: "iovl", data: overlay, layers: 2, side: .max, hvcC: Self.hvcC([]))
        #expect(try Self.report(bytes) == HEIFCheck.Report(pixels: .max, decodeProblem: nil))
    }

    @Test(
        "a sequence parameter set of (2^32 + 63) x (2^32 + 63) under an ispe of 0xFFFFFFFF x 0xFFFFFFFF: more pixels than any budget, not an overflow"
    )
    func codedSizeOfTheLargestSides() throws {
        let side: UInt64 = 1 << 32 + 63
        let bytes = Self.file(
            primaryType: "hvc1", data: [0, 0, 0], layers: 0, side: .max,
            hvcC: Self.hvcC([Self.sps(width: side, height: side)]))
        #expect(try Self.report(bytes) == HEIFCheck.Report(pixels: .max, decodeProblem: nil))
    }

    @Test(
        "the store's upload check, the way a peer's upload goes: HEIFCheck passes both files (the sizes are the decoding budget's to judge), libheif refuses them, not a photo; nothing kept"
    )
    func storeRefusesTheLargestSizes() throws {
        let overlay: [UInt8] =
            [0, 1] + [UInt8](repeating: 0, count: 8) + Self.u32(.max) + Self.u32(.max)
            + [UInt8](repeating: 0, count: 16)
        let side: UInt64 = 1 << 32 + 63
        let files = [
            ("overlay.heic", Self.file(primaryType: "iovl", data: overlay, layers: 2, side: .max, hvcC: Self.hvcC([]))),
            (
                "coded.heic",
                Self.file(
                    primaryType: "hvc1", data: [0, 0, 0], layers: 0, side: .max,
                    hvcC: Self.hvcC([Self.sps(width: side, height: side)]))
            ),
        ]
        let f = try StoreFixture()
        for (name, bytes) in files {
            let file = try f.store.begin(
                StoreRequest(name: name, size: Int64(bytes.count), sha256: SHA256.hex(of: bytes), type: .heic)
            ).get()
            try file.append(bytes)
            guard case .failure(let failure) = file.finish() else {
                Issue.record("\(name) was kept")
                continue
            }
            #expect(
                failure.kind == .notAPhoto
                    && failure.message.hasPrefix("not a well-formed HEIC: libheif cannot read it"), "\(failure)")
        }
        #expect(f.visible.isEmpty && f.incoming.isEmpty)
    }
}
