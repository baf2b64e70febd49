import PTKCloud
import PTKHTTP
import PTKTrust

/// A request of the door whose app password was checked.
struct CloudCaller {
    let door: CloudEndpoint
    let account: AppPassword
}

/// The door's route table. `status.php`, the connectivity check, the capabilities and config
/// are open (the clients read them before they log in, as Nextcloud lets them); the user and
/// the empty answers need an app password, checked as the WebDAV door checks it.
extension CloudEndpoint {
    static let routes: RouteTable<CloudContext> = {
        var routes = RouteTable<CloudContext>()
        routes.add([.get, .head], "/status.php") { _, _ throws(HTTPError) in
            .bytes(.ok, Array(CloudDocuments.status().json.utf8), type: "application/json; charset=utf-8")
        }
        // The Android app's check that it reaches the server, not a captive portal.
        routes.add([.get, .head], "/index.php/204") { _, _ throws(HTTPError) in Response(.noContent) }
        for version in OCSVersion.allCases {
            let base = version.path
            routes.add([.get, .head], base + "/cloud/capabilities") { r, _ throws(HTTPError) in
                ocs(r, version, CloudDocuments.capabilities())
            }
            routes.add([.get, .head], base + "/config") { r, _ throws(HTTPError) in
                ocs(r, version, CloudDocuments.config(host: r.head.header("host") ?? ""))
            }
            routes.group({ (r: Request, c: CloudContext) throws(HTTPError) -> CloudCaller in
                CloudCaller(door: c.door, account: try c.door.authenticate(r))
            }) { group in
                group.add([.get, .head], base + "/cloud/user") { r, c throws(HTTPError) in
                    ocs(r, version, c.door.user(c.account))
                }
                // Asked of oneself only: another password's name is not there.
                group.add([.get, .head], base + "/cloud/users/{name}", captures: ["name": userName]) {
                    r, c throws(HTTPError) in
                    guard try r.parameters.require("name", as: String.self) == c.account.name else {
                        throw .status(.notFound, "no such user")
                    }
                    return ocs(r, version, c.door.user(c.account))
                }
                for path in emptyLists {
                    group.add([.get, .head], base + path) { r, _ throws(HTTPError) in ocs(r, version, .array([])) }
                }
            }
        }
        return routes
    }()

    /// A user name as a path segment: what `AppPasswords.validName` allows, as sent.
    static let userName = PathCapture { AppPasswords.validName($0) }

    /// What the apps ask at start about what ptk does not do, answered as an empty list (no
    /// notifications, no shares, no apps to show).
    static let emptyLists = [
        "/apps/notifications/api/v2/notifications", "/apps/notifications/api/v2/push",
        "/apps/files_sharing/api/v1/shares", "/core/navigation/apps", "/apps/user_status/api/v1/user_status",
        "/apps/dashboard/api/v1/widgets", "/apps/activity/api/v2/activity/all",
    ]

    /// `cloud/user` of a password.
    func user(_ account: AppPassword) -> OCSValue {
        let (free, used) = usage(account)
        return CloudDocuments.user(name: account.name, free: free, used: used)
    }
}
