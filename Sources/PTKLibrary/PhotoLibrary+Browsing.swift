import PTKVocabulary
import PTKWeb

/// What the gallery shows (issue 45): a filter, a page of it in the gallery's order (keyset
/// paging: a cursor names the last photo shown), its sections, and a photo's neighbours for
/// the viewer's next and previous.
public struct GalleryFilter: Sendable, Equatable {
    /// Only this sender's photos (its HELLO name as the gallery lists it).
    public var sender: String?
    /// Only photos rated at least this (1-5).
    public var minRating: Int?
    public init(sender: String? = nil, minRating: Int? = nil) {
        self.sender = sender
        self.minRating = minRating
    }
}

/// Where a gallery page starts: just after the photo it names, in the gallery's order. Its
/// `token` is URL-safe text ([A-Za-z0-9._-]) for `?after=`; one that does not parse is nil.
public struct GalleryCursor: Sendable, Equatable {
    public var token: String
    public init?(token: String) {
        guard !token.isEmpty, token.utf8.count <= 200,
              token.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D })
        else { return nil }
        self.token = token
    }
}

/// One page of the gallery.
public struct GalleryPage: Sendable {
    /// The page's photos in sections (the gallery's order: newest first, by folder when the
    /// library has folders, else by day), titled as `WebPhoto.grouped` titles them.
    public var sections: [(title: String, photos: [Photo])]
    /// The first section goes on from the page before (it gets no title again).
    public var firstContinues: Bool
    /// Where the next page starts; nil on the last page.
    public var next: GalleryCursor?
    /// Photos that match the filter, and photos in all.
    public var matching: Int
    public var total: Int
    /// Every sender the library has, sorted: the filter's choices.
    public var senders: [String]
}

extension PhotoLibrary {
    /// The gallery's page after `cursor` (nil: the first), at most `limit` photos.
    /// CONTRACT STUB (issue 45): computed from every entry in memory; SQL replaces it.
    public func galleryPage(_ filter: GalleryFilter, after cursor: GalleryCursor?, limit: Int) throws(LibraryError) -> GalleryPage {
        let (ordered, total, senders) = try galleryOrder(filter)
        var start = 0
        if let cursor, let id = Int64(cursor.token), let i = ordered.firstIndex(where: { $0.photo.id == id }) { start = i + 1 }
        let slice = Array(ordered[min(start, ordered.count)..<min(start + limit, ordered.count)])
        var sections: [(title: String, photos: [Photo])] = []
        for (title, photo) in slice {
            if sections.last?.title == title { sections[sections.count - 1].photos.append(photo) } else { sections.append((title, [photo])) }
        }
        let firstContinues = start > 0 && start < ordered.count && ordered[start - 1].title == ordered[start].title
        let next = start + limit < ordered.count ? slice.last.flatMap { GalleryCursor(token: String($0.photo.id)) } : nil
        return GalleryPage(sections: sections, firstContinues: firstContinues, next: next, matching: ordered.count, total: total, senders: senders)
    }

    /// The photos before and after photo `id` in the gallery's order under `filter`.
    /// CONTRACT STUB (issue 45): computed from every entry in memory; SQL replaces it.
    public func neighbours(of id: Int64, _ filter: GalleryFilter) throws(LibraryError) -> (previous: Photo?, next: Photo?) {
        let ordered = try galleryOrder(filter).ordered
        guard let i = ordered.firstIndex(where: { $0.photo.id == id }) else { return (nil, nil) }
        return (i > 0 ? ordered[i - 1].photo : nil, i + 1 < ordered.count ? ordered[i + 1].photo : nil)
    }

    /// STUB: the gallery's order in memory.
    private func galleryOrder(_ filter: GalleryFilter) throws(LibraryError) -> (ordered: [(title: String, photo: Photo)], total: Int, senders: [String]) {
        let all = try self.all(sort: .time)
        let shown = all.reversed().filter { p in
            (filter.sender == nil || p.senderName == filter.sender) && (filter.minRating == nil || (p.rating ?? 0) >= filter.minRating!)
        }
        let byID = Dictionary(uniqueKeysWithValues: shown.map { ($0.id, $0) })
        let grouped = WebPhoto.grouped(shown.map(WebPhoto.init))
        let ordered = grouped.flatMap { section in section.photos.map { (section.title, byID[$0.id]!) } }
        return (ordered, all.count, Set(all.compactMap(\.senderName)).sorted())
    }
}
