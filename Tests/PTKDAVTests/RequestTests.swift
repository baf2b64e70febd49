import PTKDAV
import PTKTestTags
import Testing

@Suite("PROPFIND, PROPPATCH and LOCK bodies", .tags(.unit))
struct RequestTests {
    @Test("an empty or blank PROPFIND body is allprop (RFC 4918 9.1)")
    func emptyPropfind() {
        #expect(PropfindRequest.parse([]) == .success(.allProperties(include: [])))
        #expect(PropfindRequest.parse(bytes("\r\n")) == .success(.allProperties(include: [])))
    }

    @Test("Finder's PROPFIND asks for three DAV: properties in order")
    func finder() {
        #expect(
            PropfindRequest.parse(bytes(ClientBodies.finderStat))
                == .success(.properties([.dav("getlastmodified"), .dav("getcontentlength"), .dav("resourcetype")])))
    }

    @Test("an ownCloud-style PROPFIND keeps vendor namespaces")
    func ownCloud() {
        guard case .success(.properties(let names)) = PropfindRequest.parse(bytes(ClientBodies.ownCloudPropfind)) else {
            Issue.record("not a prop request")
            return
        }
        #expect(names.count == 7)
        #expect(names[5] == XMLName("http://owncloud.org/ns", "checksums"))
    }

    @Test("allprop, allprop with include, propname")
    func allpropAndPropname() {
        #expect(PropfindRequest.parse(bytes(ClientBodies.fusedavAllprop)) == .success(.allProperties(include: [])))
        let include =
            #"<D:propfind xmlns:D="DAV:"><D:allprop/><D:include><D:supported-live-property-set/><D:quota-used-bytes/></D:include></D:propfind>"#
        #expect(
            PropfindRequest.parse(bytes(include))
                == .success(.allProperties(include: [.dav("supported-live-property-set"), .dav("quota-used-bytes")])))
        #expect(
            PropfindRequest.parse(bytes(#"<propfind xmlns="DAV:"><propname/></propfind>"#)) == .success(.propertyNames))
    }

    @Test("unknown elements beside prop are ignored (RFC 4918 17)")
    func extensibility() {
        #expect(
            PropfindRequest.parse(
                bytes(#"<propfind xmlns="DAV:"><x:future xmlns:x="urn:x"/><prop><getetag/></prop></propfind>"#))
                == .success(.properties([.dav("getetag")])))
    }

    @Test(
        "refused PROPFIND bodies",
        arguments: [
            (
                #"<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop><D:allprop/></D:propfind>"#,
                "the PROPFIND body names more than one of prop, allprop and propname"
            ),
            (#"<D:propfind xmlns:D="DAV:"/>"#, "the PROPFIND body names none of prop, allprop or propname"),
            (
                #"<D:propfind xmlns:D="DAV:"><D:prop/><D:include/></D:propfind>"#,
                "the PROPFIND body has an include without allprop"
            ),
            (#"<propfind><prop/></propfind>"#, "the XML body's root is {}propfind, not {DAV:}propfind"),
            (#"<D:lockinfo xmlns:D="DAV:"/>"#, "the XML body's root is {DAV:}lockinfo, not {DAV:}propfind"),
        ])
    func refusedPropfind(body: String, message: String) {
        #expect(PropfindRequest.parse(bytes(body)) == .failure(DAVXMLError(message)))
    }

    @Test("Windows's PROPPATCH: four sets in order, each with its element")
    func windowsProppatch() throws {
        guard case .success(let request) = ProppatchRequest.parse(bytes(ClientBodies.windowsProppatch)) else {
            Issue.record("refused")
            return
        }
        let ms = "urn:schemas-microsoft-com:"
        #expect(request.operations.count == 4)
        guard case .set(let name, let element) = request.operations[3] else {
            Issue.record("not a set")
            return
        }
        #expect(name == XMLName(ms, "Win32FileAttributes"))
        #expect(element.text == "00000000")
        #expect(
            request.operations.map {
                switch $0 {
                case .set(let n, _): n.local
                case .remove(let n): "-" + n.local
                }
            } == ["Win32CreationTime", "Win32LastAccessTime", "Win32LastModifiedTime", "Win32FileAttributes"])
    }

    @Test("set and remove keep document order across instructions (RFC 4918 9.2.2's example)")
    func proppatchOrder() {
        let body = """
            <?xml version="1.0" encoding="utf-8" ?>
            <D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://ns.example.com/standards/z39.50/">
              <D:set><D:prop><Z:Authors><Z:Author>Jim Whitehead</Z:Author><Z:Author>Roy Fielding</Z:Author></Z:Authors></D:prop></D:set>
              <D:remove><D:prop><Z:Copyright-Owner/></D:prop></D:remove>
              <D:set><D:prop><D:displayname>x</D:displayname></D:prop></D:set>
            </D:propertyupdate>
            """
        guard case .success(let request) = ProppatchRequest.parse(bytes(body)) else {
            Issue.record("refused")
            return
        }
        let z = "http://ns.example.com/standards/z39.50/"
        #expect(request.operations.count == 3)
        if case .set(let n, let e) = request.operations[0] {
            #expect(n == XMLName(z, "Authors"))
            #expect(e.children.map(\.text) == ["Jim Whitehead", "Roy Fielding"])
        } else {
            Issue.record("first is not a set")
        }
        #expect(request.operations[1] == .remove(XMLName(z, "Copyright-Owner")))
        if case .set(let n, _) = request.operations[2] {
            #expect(n == .dav("displayname"))
        } else {
            Issue.record("third is not a set")
        }
    }

    @Test(
        "refused PROPPATCH bodies",
        arguments: [
            ("", "the PROPPATCH body is empty"),
            (#"<D:propertyupdate xmlns:D="DAV:"/>"#, "the PROPPATCH body sets and removes no property"),
            (
                #"<D:propertyupdate xmlns:D="DAV:"><D:set/></D:propertyupdate>"#,
                "the PROPPATCH body has a set without prop"
            ),
            (#"<D:propfind xmlns:D="DAV:"/>"#, "the XML body's root is {DAV:}propfind, not {DAV:}propertyupdate"),
        ])
    func refusedProppatch(body: String, message: String) {
        #expect(ProppatchRequest.parse(bytes(body)) == .failure(DAVXMLError(message)))
    }

    @Test("an empty LOCK body is a refresh")
    func refresh() {
        #expect(LockRequest.parse([]) == .success(nil))
    }

    @Test("neon's LOCK: exclusive, owner text kept and escaped again when serialized")
    func neonLock() throws {
        guard case .success(let request?) = LockRequest.parse(bytes(ClientBodies.neonLock)) else {
            Issue.record("refused")
            return
        }
        #expect(request.scope == .exclusive)
        #expect(request.owner == #"<D:owner xmlns:D="DAV:">svn &amp; co &lt;lock&gt;</D:owner>"#)
    }

    @Test("RFC 4918's LOCK: the owner's href survives a round trip")
    func rfcLock() throws {
        guard case .success(let request?) = LockRequest.parse(bytes(ClientBodies.rfcLock)) else {
            Issue.record("refused")
            return
        }
        let owner = try #require(request.owner)
        let element = try #require(parsed(owner))
        #expect(element.child(.dav("href"))?.text == "http://example.org/~ejw/contact.html")
    }

    @Test("a shared LOCK without owner")
    func shared() {
        let body = #"<lockinfo xmlns="DAV:"><lockscope><shared/></lockscope><locktype><write/></locktype></lockinfo>"#
        #expect(LockRequest.parse(bytes(body)) == .success(LockRequest(scope: .shared, owner: nil)))
    }

    @Test(
        "refused LOCK bodies",
        arguments: [
            (#"<lockinfo xmlns="DAV:"><locktype><write/></locktype></lockinfo>"#, "the LOCK body has no lockscope"),
            (
                #"<lockinfo xmlns="DAV:"><lockscope><other/></lockscope><locktype><write/></locktype></lockinfo>"#,
                "the LOCK body's lockscope is neither exclusive nor shared"
            ),
            (#"<lockinfo xmlns="DAV:"><lockscope><shared/></lockscope></lockinfo>"#, "the LOCK body has no locktype"),
            (
                #"<lockinfo xmlns="DAV:"><lockscope><shared/></lockscope><locktype><read/></locktype></lockinfo>"#,
                "the LOCK body's locktype is not write"
            ),
            (
                #"<lockinfo><lockscope><shared/></lockscope><locktype><write/></locktype></lockinfo>"#,
                "the XML body's root is {}lockinfo, not {DAV:}lockinfo"
            ),
        ])
    func refusedLock(body: String, message: String) {
        #expect(LockRequest.parse(bytes(body)) == .failure(DAVXMLError(message)))
    }
}
