import PTKVocabulary

/// Who a file in an inbox comes from, and where it sits: the first folder level below the
/// inbox's root names the sender ("anna-phone/DCIM/x.jpg" is anna-phone's "DCIM/x.jpg"), and a
/// file directly in the root is the inbox's own ("x.jpg" is the inbox's "x.jpg").
///
/// Plain text as the file system spells it: the store applies its naming rules (the sender's
/// folder, each folder level, the final name) when the photo is stored, as it does for every door.
public struct InboxSource: Sendable, Equatable {
    /// The sender: the first folder below the root, or the inbox's own name for a file in the root.
    public var sender: String
    /// The folders between the sender's folder (or the root) and the file, outermost first.
    public var folders: [String]
    /// The file's own name, the last component.
    public var name: String

    /// A source as given.
    public init(sender: String, folders: [String], name: String) {
        self.sender = sender
        self.folders = folders
        self.name = name
    }

    /// The source of the file at `components` below the root of the inbox called `inbox`
    /// (`inboxName(root:)`, or the name configured for it); nil for no components (the root
    /// itself is no file).
    public init?(inbox: String, components: [String]) {
        guard let name = components.last else { return nil }
        if components.count == 1 {
            self.init(sender: inbox, folders: [], name: name)
        } else {
            self.init(sender: components[0], folders: Array(components.dropFirst().dropLast()), name: name)
        }
    }

    /// The path below the sender as the store is offered it: the folders and the name joined by "/".
    public var relativePath: String { (folders + [name]).joined(separator: "/") }

    /// An inbox's own name from the path of its root: the last component, trailing "/" ignored
    /// ("/srv/inbox/" is "inbox"); "" for "/" alone, which the store's rules name "unknown".
    public static func inboxName(root: String) -> String {
        let trimmed = droppingTrailingSlashes(root)
        return trimmed == "/" ? "" : lastPathComponent(trimmed)
    }
}
