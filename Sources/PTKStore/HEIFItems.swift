/// What a HEIF's `meta` box says of its items (ISO/IEC 23008-12 section 9, ISO/IEC 14496-12
/// section 8.11): their types, where their data is (`iloc`, `idat`), their properties (`ipco`,
/// `ipma`) and references (`iref`), and the primary item (`pitm`). Read from the box's bytes
/// alone, every count bounded by `HEIFLimits` before anything is kept for it, so a hostile
/// box costs at most what its limits allow. It judges nothing about images: `HEIFCheck` does.
public struct HEIFItems: Sendable {
    /// One item of `iinf`, with what `ipma` and `iloc` say of it.
    public struct Item: Sendable, Equatable {
        /// The item's ID, as `pitm`, `iref`, `ipma` and `iloc` name it.
        public var id: UInt32
        /// The four-character item type ("hvc1", "grid", "iovl", "Exif"); "" for an `infe` of
        /// version 0 or 1, which has none.
        public var type: String
        /// Indices into `properties` (0-based), in the order `ipma` associates them.
        public var properties: [Int] = []
        /// Where its data is, when `iloc` says.
        public var location: Location?
    }

    /// An item's data: extents in the file (`construction_method` 0) or in `idat` (1); method
    /// 2 (data made of other items' data) is kept as such, for the check to refuse.
    public struct Location: Sendable, Equatable {
        /// `construction_method`: 0 in the file, 1 in `idat`, 2 from other items (refused by the check).
        public var method: Int
        /// Added to every extent's offset (`base_offset`).
        public var baseOffset: UInt64
        /// Offsets (after `baseOffset`) and lengths; a length of 0 runs to the end of the file
        /// or of `idat`.
        public var extents: [Extent]
    }

    /// One extent of an item's data, in bytes.
    public struct Extent: Sendable, Equatable {
        /// Where it starts, after the location's `baseOffset`.
        public var offset: UInt64
        /// How many bytes; 0 runs to the end of the file or of `idat`.
        public var length: UInt64
    }

    /// One property of `ipco`: its type and its content (after the box header).
    public struct Property: Sendable, Equatable {
        /// The four-character property type ("ispe", "hvcC", "colr", "irot").
        public var type: String
        /// The content's place in `bytes`.
        public var body: Range<Int>
    }

    /// One `iref` entry: `from` refers to each of `to`, by `type` ("dimg", "thmb", "auxl", "cdsc").
    public struct Reference: Sendable, Equatable {
        /// The four-character reference type.
        public var type: String
        /// The referring item's ID.
        public var from: UInt32
        /// The referred items' IDs, in order (a grid's tiles in raster order for "dimg").
        public var to: [UInt32]
    }

    /// The `meta` box's bytes (its full-box header included), which `Property.body` and
    /// `idat` index.
    public let bytes: [UInt8]
    /// The primary item's ID (`pitm`); nil when there is no `pitm` box.
    public private(set) var primary: UInt32?
    /// Every item of `iinf`, by ID.
    public private(set) var items: [UInt32: Item] = [:]
    /// The properties of `ipco`, in order (`Item.properties` indexes them).
    public private(set) var properties: [Property] = []
    /// Every `iref` entry, in the order read.
    public private(set) var references: [Reference] = []
    /// The content of the `idat` box, when there is one.
    public private(set) var idat: Range<Int>?
    /// Every box read inside `meta` (its children, the entries of iinf, iref, ipco and the like).
    public private(set) var boxes = 0

    /// Reads `meta`, the content of a `meta` box (from its version and flags on).
    public init(meta: [UInt8]) throws(FormatError) {
        bytes = meta
        guard meta.count >= 4 else { throw FormatError("the meta box is too short for its version") }
        var ilocBody: Range<Int>?
        var ipmaBodies: [(Range<Int>, UInt8, UInt32)] = []
        var seen: Set<String> = []
        for child in try children(4..<meta.count, in: "meta") {
            // One of each: two would leave libheif and this check reading different ones.
            if ["pitm", "iloc", "iinf", "iref", "iprp", "idat"].contains(child.type) {
                guard seen.insert(child.type).inserted else { throw FormatError("a second \(child.type) box in meta") }
            }
            switch child.type {
            case "pitm":
                var r = try fullBox(child.body, "pitm")
                primary = r.version == 0 ? UInt32(try r.u16()) : try r.u32()
            case "iinf":
                try readItemInfo(child.body)
            case "iloc":
                ilocBody = child.body
            case "iref":
                try readReferences(child.body)
            case "iprp":
                for part in try children(child.body, in: "iprp") {
                    if part.type == "ipco" {
                        guard properties.isEmpty else { throw FormatError("a second ipco box") }
                        for p in try children(part.body, in: "ipco") {
                            guard properties.count < HEIFLimits.properties else {
                                throw FormatError("over \(HEIFLimits.properties) item properties")
                            }
                            properties.append(Property(type: p.type, body: p.body))
                        }
                    } else if part.type == "ipma" {
                        let r = try fullBox(part.body, "ipma")
                        ipmaBodies.append((r.position..<part.body.upperBound, r.version, r.flags))
                    }
                }
            case "idat":
                idat = child.body
            case "dinf", "grpl":
                // Containers libheif reads entry by entry: their boxes count too.
                _ = try children(child.body, in: child.type, nestedFullBox: child.type == "dinf" ? "dref" : nil)
            default:
                break
            }
        }
        if let ilocBody { try readLocations(ilocBody) }
        var associated: Set<UInt32> = []
        for (body, version, flags) in ipmaBodies {
            try readAssociations(body, version: version, wide: flags & 1 != 0, seen: &associated)
        }
        for r in references {
            referredIndex[ReferenceKey(item: r.from, type: r.type), default: []] += r.to
            for to in r.to { referringIndex[ReferenceKey(item: to, type: r.type), default: []].append(r.from) }
        }
    }

    private struct Child {
        var type: String
        var body: Range<Int>
    }

    /// The boxes inside `range` of `bytes`, each within it. `nestedFullBox`: a child of that type
    /// is a full box with an entry count whose boxes are counted as well (`dinf`'s `dref`).
    private mutating func children(_ range: Range<Int>, in parent: String, nestedFullBox: String? = nil)
        throws(FormatError) -> [Child]
    {
        var out: [Child] = []
        var at = range.lowerBound
        while at < range.upperBound {
            guard range.upperBound - at >= 8 else {
                throw FormatError("\(range.upperBound - at) stray bytes at the end of the \(parent) box")
            }
            boxes += 1
            guard boxes <= HEIFLimits.metaBoxes else {
                throw FormatError("over \(HEIFLimits.metaBoxes) boxes in the meta box")
            }
            var r = ByteReader(bytes, at..<range.upperBound)
            let size32 = try r.u32()
            let type = try r.type()
            var size = UInt64(size32)
            if size32 == 1 { size = try r.u64() } else if size32 == 0 { size = UInt64(range.upperBound - at) }
            let header = r.position - at
            guard size >= UInt64(header), size <= UInt64(range.upperBound - at) else {
                throw FormatError("\(type) box of \(size) bytes inside \(parent) does not fit in it")
            }
            let end = at + Int(size)
            if type == nestedFullBox, end - r.position >= 8 {
                _ = try children((r.position + 8)..<end, in: type)
            }
            out.append(Child(type: type, body: r.position..<end))
            at = end
        }
        return out
    }

    private func fullBox(_ body: Range<Int>, _ type: String) throws(FormatError) -> ByteReader {
        var r = ByteReader(bytes, body, box: type)
        let word = try r.u32()
        r.version = UInt8(word >> 24)
        r.flags = word & 0xFF_FFFF
        return r
    }

    /// iinf: an entry count, then `infe` boxes (version 2 and 3 carry the item type).
    private mutating func readItemInfo(_ body: Range<Int>) throws(FormatError) {
        var r = try fullBox(body, "iinf")
        let count = r.version == 0 ? UInt32(try r.u16()) : try r.u32()
        guard count <= HEIFLimits.items else {
            throw FormatError("\(count) items is over the \(HEIFLimits.items)-item limit")
        }
        for entry in try children(r.position..<body.upperBound, in: "iinf") where entry.type == "infe" {
            guard items.count < HEIFLimits.items else { throw FormatError("over \(HEIFLimits.items) items") }
            var e = try fullBox(entry.body, "infe")
            var item: Item
            switch e.version {
            case 0, 1:
                item = Item(id: UInt32(try e.u16()), type: "")
            default:
                let id = e.version == 2 ? UInt32(try e.u16()) : try e.u32()
                _ = try e.u16()  // item_protection_index
                item = Item(id: id, type: try e.type())
            }
            guard items[item.id] == nil else { throw FormatError("item \(item.id) is described twice") }
            items[item.id] = item
        }
    }

    /// iref: one box per reference type and referring item, each naming the items referred to.
    private mutating func readReferences(_ body: Range<Int>) throws(FormatError) {
        let r = try fullBox(body, "iref")
        let wide = r.version != 0
        var total = 0
        var seen: Set<ReferenceKey> = []
        for entry in try children(r.position..<body.upperBound, in: "iref") {
            var e = ByteReader(bytes, entry.body, box: entry.type)
            let from = wide ? try e.u32() : UInt32(try e.u16())
            // libheif 1.15 takes a grid's or overlay's images from its first dimg box: one each.
            guard seen.insert(ReferenceKey(item: from, type: entry.type)).inserted else {
                throw FormatError("iref: item \(from) refers to others by \(entry.type) twice")
            }
            let count = Int(try e.u16())
            total += count
            guard total <= HEIFLimits.references else {
                throw FormatError("over \(HEIFLimits.references) item references")
            }
            var to: [UInt32] = []
            to.reserveCapacity(count)
            for _ in 0..<count { to.append(wide ? try e.u32() : UInt32(try e.u16())) }
            references.append(Reference(type: entry.type, from: from, to: to))
        }
    }

    /// iloc (ISO/IEC 14496-12 section 8.11.3).
    private mutating func readLocations(_ body: Range<Int>) throws(FormatError) {
        var r = try fullBox(body, "iloc")
        guard r.version <= 2 else { throw FormatError("iloc box of version \(r.version)") }
        let sizes = try r.u16()
        let offsetSize = Int(sizes >> 12)
        let lengthSize = Int(sizes >> 8 & 15)
        let baseSize = Int(sizes >> 4 & 15)
        let indexSize = r.version == 0 ? 0 : Int(sizes & 15)
        for s in [offsetSize, lengthSize, baseSize, indexSize] where ![0, 4, 8].contains(s) {
            throw FormatError("iloc field of \(s) bytes (0, 4 or 8 allowed)")
        }
        let count = r.version < 2 ? UInt32(try r.u16()) : try r.u32()
        guard count <= HEIFLimits.items else {
            throw FormatError("iloc places \(count) items, over the \(HEIFLimits.items)-item limit")
        }
        var extents = 0
        var placed: Set<UInt32> = []
        for _ in 0..<count {
            let id = r.version < 2 ? UInt32(try r.u16()) : try r.u32()
            // libheif 1.15 reads an item's first place, a dictionary the last: one each.
            guard placed.insert(id).inserted else { throw FormatError("iloc places item \(id) twice") }
            let method = r.version == 0 ? 0 : Int(try r.u16() & 15)
            _ = try r.u16()  // data_reference_index
            let base = try r.uint(baseSize)
            let n = Int(try r.u16())
            extents += n
            guard extents <= HEIFLimits.extents else { throw FormatError("over \(HEIFLimits.extents) item extents") }
            var list: [Extent] = []
            list.reserveCapacity(n)
            for _ in 0..<n {
                _ = try r.uint(indexSize)
                let offset = try r.uint(offsetSize)
                list.append(Extent(offset: offset, length: try r.uint(lengthSize)))
            }
            // An item iloc places but iinf does not describe is no item of ours.
            items[id]?.location = Location(method: method, baseOffset: base, extents: list)
        }
    }

    /// ipma: each item's properties, by 1-based index into ipco (0: none). An item is listed
    /// once in all (`seen`): libheif 1.15 reads an item's first entry only.
    private mutating func readAssociations(_ body: Range<Int>, version: UInt8, wide: Bool, seen: inout Set<UInt32>)
        throws(FormatError)
    {
        var r = ByteReader(bytes, body, box: "ipma")
        let count = try r.u32()
        guard count <= HEIFLimits.items else {
            throw FormatError("ipma lists \(count) items, over the \(HEIFLimits.items)-item limit")
        }
        for _ in 0..<count {
            let id = version < 1 ? UInt32(try r.u16()) : try r.u32()
            guard seen.insert(id).inserted else { throw FormatError("ipma lists item \(id) twice") }
            let n = Int(try r.u8())
            for _ in 0..<n {
                let index = wide ? Int(try r.u16() & 0x7FFF) : Int(try r.u8() & 0x7F)
                guard index != 0 else { continue }
                guard index <= properties.count else {
                    throw FormatError("item \(id) has property \(index), but ipco holds \(properties.count)")
                }
                items[id]?.properties.append(index - 1)
            }
        }
    }

    /// The body of the item's first property of `type`, if it has one.
    public func property(_ type: String, of id: UInt32) -> ArraySlice<UInt8>? {
        guard let item = items[id], let p = item.properties.first(where: { properties[$0].type == type }) else {
            return nil
        }
        return bytes[properties[p].body]
    }

    /// How many properties of `type` ipma associates with the item.
    public func count(_ type: String, of id: UInt32) -> Int {
        items[id]?.properties.reduce(0) { $0 + (properties[$1].type == type ? 1 : 0) } ?? 0
    }

    /// The items `from` refers to by `type`, in order.
    public func referred(from: UInt32, by type: String) -> [UInt32] {
        referredIndex[ReferenceKey(item: from, type: type)] ?? []
    }

    /// The items that refer to `to` by `type`.
    public func referring(to: UInt32, by type: String) -> [UInt32] {
        referringIndex[ReferenceKey(item: to, type: type)] ?? []
    }

    private struct ReferenceKey: Hashable {
        var item: UInt32
        var type: String
    }
    /// `references` by the referring item and by the item referred to (made once: the check
    /// asks for each of up to `HEIFLimits.items` images).
    private var referredIndex: [ReferenceKey: [UInt32]] = [:]
    private var referringIndex: [ReferenceKey: [UInt32]] = [:]
}

/// Reads big-endian numbers from a range of bytes; running past its end is a FormatError that
/// names the box.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int
    let end: Int
    let box: String
    var version: UInt8 = 0
    var flags: UInt32 = 0

    init(_ bytes: [UInt8], _ range: Range<Int>, box: String = "a box") {
        self.bytes = bytes
        position = range.lowerBound
        end = range.upperBound
        self.box = box
    }

    var remaining: Int { end - position }

    mutating func take(_ n: Int) throws(FormatError) -> ArraySlice<UInt8> {
        guard n >= 0, n <= end - position else { throw FormatError("the \(box) box ends inside a field") }
        defer { position += n }
        return bytes[position..<position + n]
    }

    mutating func uint(_ size: Int) throws(FormatError) -> UInt64 {
        try take(size).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func u8() throws(FormatError) -> UInt8 { UInt8(try uint(1)) }
    mutating func u16() throws(FormatError) -> UInt16 { UInt16(try uint(2)) }
    mutating func u32() throws(FormatError) -> UInt32 { UInt32(try uint(4)) }
    mutating func u64() throws(FormatError) -> UInt64 { try uint(8) }

    /// A four-character code; bytes outside printable ASCII are shown as "?".
    mutating func type() throws(FormatError) -> String {
        String(decoding: try take(4).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
