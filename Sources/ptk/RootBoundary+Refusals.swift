import PTKAdminCommandLine
import PTKCLI
import PTKConfiguration
import PTKLibrary
import PTKSystem
import PTKVocabulary

/// What root's ptk says when it refuses a directory others may change, and what to do.
extension RootBoundary {
    /// Why root's ptk refuses to work below `folder`, and what to do about it.
    static func refusal(_ folder: ChangeableFolder, directory: String, user: Credentials?) -> String {
        let owner =
            folder.owner == 0 ? "root" : Credentials.of(uid: folder.owner, groupIfUnknown: folder.group).description
        let group = "group " + (groupName(folder.group).map { "\($0) (gid \(folder.group))" } ?? "gid \(folder.group)")
        let who: String
        if folder.mode & 0o002 != 0 {
            who = "any user"
        } else if folder.hasAccessACL {
            // With an access ACL the group bits are its mask: what the ACL grants, up to the mask.
            who =
                "the users and groups its access ACL grants write (getfacl \(quotedForTerminal(folder.path)); its group bits are the ACL's mask, not \(group)'s)"
        } else {
            who = "the users of \(group)"
        }
        let what =
            folder.mode & 0o1000 != 0
            ? "make names in it (the sticky bit only keeps them from renaming what is not theirs)"
            : "rename or replace what is in it"
        let fix =
            folder.hasAccessACL && folder.mode & 0o002 == 0
            ? "Remove the ACL's write entries or its mask's write (setfacl -b, or setfacl -m m::r-x), "
            : "Make it writable by its owner only (chmod go-w), "
        return
            "\(quotedForTerminal(folder.path)) (owner \(owner), mode \(String(folder.mode, radix: 8))\(folder.hasAccessACL ? ", with an access ACL" : "")) lets \(who) \(what), "
            + "so root's ptk would work on \(quotedForTerminal(directory)) among what they put there; refused. "
            + fix + "or give it to \(user.map(\.description) ?? "the user ptkd runs as") (chown), "
            + "or run ptk as that user (sudo -u USER ptk ...)"
    }

    /// Why root's ptk refuses to work on a directory holding `file`, which others may write,
    /// and what to do about it.
    static func refusal(_ file: WayStep, directory: String, user: Credentials?) -> String {
        let owner = file.owner == 0 ? "root" : Credentials.of(uid: file.owner, groupIfUnknown: file.group).description
        let group = "group " + (groupName(file.group).map { "\($0) (gid \(file.group))" } ?? "gid \(file.group)")
        let mode = file.mode & 0o7777
        let who: String
        if mode & 0o002 != 0 {
            who = "any user"
        } else if file.hasAccessACL {
            who =
                "the users and groups its access ACL grants write (getfacl \(quotedForTerminal(file.path)); its group bits are the ACL's mask, not \(group)'s)"
        } else {
            who = "the users of \(group)"
        }
        let fix =
            file.hasAccessACL && mode & 0o002 == 0
            ? "Remove the ACL's write entries or its mask's write (setfacl -b, or setfacl -m m::r--), "
            : "Make it writable by its owner only (chmod g-w,o-w), "
        return
            "\(quotedForTerminal(file.path)) (owner \(owner), mode \(String(mode, radix: 8))\(file.hasAccessACL ? ", with an access ACL" : "")) lets \(who) rewrite it, "
            + "so root's ptk would work on \(quotedForTerminal(directory)) with what they write there; refused. "
            + fix
            + "or give the directory and all it holds to \(user.map(\.description) ?? "the user ptkd runs as") (chown -R), "
            + "or run ptk as that user (sudo -u USER ptk ...)"
    }
}
