import PTKDAV
import PTKTestTags
import Testing

/// Bodies as real clients send them. Where each came from is said beside it.
enum ClientBodies {
    /// macOS Finder (WebDAVFS, apple-open-source/macos webdavfs/mount.tproj/webdav_network.c,
    /// network_stat): the PROPFIND of every lookup and getattr, Depth 0.
    static let finderStat = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:">
        <D:prop>
        <D:getlastmodified/>
        <D:getcontentlength/>
        <D:resourcetype/>
        </D:prop>
        </D:propfind>

        """
    /// Windows Mini-Redirector's PROPPATCH after a copy (quoted in sftpgo's WebDAV tests,
    /// internal/webdavd; the same four properties OpenACS xowiki's comment shows from Windows 7).
    static let windowsProppatch =
        #"<?xml version="1.0" encoding="utf-8" ?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:set><D:prop><Z:Win32CreationTime>Wed, 04 Nov 2020 13:25:51 GMT</Z:Win32CreationTime><Z:Win32LastAccessTime>Sat, 05 Dec 2020 21:16:12 GMT</Z:Win32LastAccessTime><Z:Win32LastModifiedTime>Wed, 04 Nov 2020 13:25:51 GMT</Z:Win32LastModifiedTime><Z:Win32FileAttributes>00000000</Z:Win32FileAttributes></D:prop></D:set></D:propertyupdate>"#
    /// A LOCK as neon-based clients (davfs2, litmus and Subversion's ra_neon all use neon) send
    /// it: Subversion's libsvn_ra_neon/lock.c, owner as text.
    static let neonLock = """
        <?xml version="1.0" encoding="utf-8" ?>
        <D:lockinfo xmlns:D="DAV:">
         <D:lockscope><D:exclusive /></D:lockscope>
         <D:locktype><D:write /></D:locktype>
        <D:owner>svn &amp; co &lt;lock&gt;</D:owner></D:lockinfo>
        """
    /// A curl-based FUSE client's (fusedav's) allprop, Depth 1.
    static let fusedavAllprop =
        #"<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>"#
    /// Nextcloud-style clients (rclone's webdav backend asks in this shape): a default namespace
    /// mix of DAV: and vendor properties, lower-case "d" prefix.
    static let ownCloudPropfind = """
        <?xml version="1.0"?>
        <d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
         <d:prop>
          <d:displayname />
          <d:getlastmodified />
          <d:getcontentlength />
          <d:resourcetype />
          <d:getcontenttype />
          <oc:checksums />
          <oc:permissions />
         </d:prop>
        </d:propfind>
        """
    /// RFC 4918 section 9.10.7's LOCK example: owner with an href.
    static let rfcLock = """
        <?xml version="1.0" encoding="utf-8" ?>
        <D:lockinfo xmlns:D='DAV:'>
          <D:lockscope><D:exclusive/></D:lockscope>
          <D:locktype><D:write/></D:locktype>
          <D:owner>
            <D:href>http://example.org/~ejw/contact.html</D:href>
          </D:owner>
        </D:lockinfo>
        """
}

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

func parsed(_ s: String) -> XMLElement? {
    if case .success(let e) = DAVXML.parse(bytes(s)) { return e }
    return nil
}

func failure(_ s: String, limits: XMLLimits = .default) -> String? {
    if case .failure(let e) = DAVXML.parse(bytes(s), limits: limits) { return e.description }
    return nil
}

@Suite("XML bodies: expat, namespaces, limits", .tags(.unit))
struct XMLParseTests {
    @Test("Finder's PROPFIND: names resolved to DAV:, whitespace kept as text")
    func finder() throws {
        let root = try #require(parsed(ClientBodies.finderStat))
        #expect(root.name == .dav("propfind"))
        let prop = try #require(root.child(.dav("prop")))
        #expect(prop.children.map(\.name.local) == ["getlastmodified", "getcontentlength", "resourcetype"])
        #expect(prop.children.allSatisfy { $0.name.namespace == "DAV:" })
    }

    @Test("the same names through a default namespace and through prefixes")
    func prefixesDoNotMatter() throws {
        let a = try #require(
            parsed(#"<propfind xmlns="DAV:"><prop><getetag/><x:y xmlns:x="urn:x" x:a="1" b="2"/></prop></propfind>"#))
        let b = try #require(
            parsed(
                #"<Q:propfind xmlns:Q="DAV:"><Q:prop><Q:getetag/><y xmlns="urn:x" xmlns:z="urn:x" z:a="1" b="2"/></Q:prop></Q:propfind>"#
            ))
        #expect(a == b)
        let y = try #require(a.child(.dav("prop"))?.child(XMLName("urn:x", "y")))
        #expect(y.attributes == [XMLName("urn:x", "a"): "1", XMLName("", "b"): "2"])
    }

    @Test("an element in no namespace has namespace \"\"")
    func noNamespace() throws {
        let root = try #require(parsed("<a><b>t</b></a>"))
        #expect(root.name == XMLName("", "a"))
        #expect(root.child(XMLName("", "b"))?.text == "t")
    }

    @Test("text: entities of XML itself, character references, CDATA and UTF-8 come through decoded")
    func text() throws {
        let root = try #require(parsed("<a>&lt;&amp;&gt;&quot;&apos;&#233;&#x1F600;<![CDATA[<raw>&]]>ü</a>"))
        #expect(root.text == "<&>\"'é😀<raw>&ü")
    }

    @Test("a body in ISO-8859-1 is decoded into UTF-8")
    func latin1() throws {
        let body: [UInt8] = Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><a>"#.utf8) + [0xE9] + Array("</a>".utf8)
        guard case .success(let root) = DAVXML.parse(body) else {
            Issue.record("not parsed")
            return
        }
        #expect(root.text == "é")
    }

    @Test("serialized() stands alone and parses back to the same element")
    func serializedRoundTrip() throws {
        for body in [
            ClientBodies.windowsProppatch, ClientBodies.ownCloudPropfind, ClientBodies.rfcLock,
            #"<x:a xmlns:x="urn:&quot;q" xmlns:D="DAV:" D:at="&lt;&amp;&quot;'"><D:b>1 &amp; 2</D:b><c/></x:a>"#,
        ] {
            let root = try #require(parsed(body))
            let again = try #require(parsed(root.serialized()), "\(root.serialized())")
            #expect(again == root)
        }
    }

    @Test(
        "serialized() keeps xml:lang as xml:lang (no other prefix may name that namespace), found by fuzz target webdav"
    )
    func serializedXMLLang() throws {
        let root = try #require(
            parsed(#"<D:owner xmlns:D="DAV:" xml:lang="en"><D:href xml:space="preserve">x</D:href></D:owner>"#))
        #expect(root.attributes == [XMLName(XMLName.xml, "lang"): "en"])
        #expect(
            root.serialized()
                == #"<D:owner xmlns:D="DAV:" xml:lang="en"><D:href xml:space="preserve">x</D:href></D:owner>"#)
        #expect(parsed(root.serialized()) == root)
    }

    @Test(
        "serialized() writes tab, line feed and CR in attribute values as references, so they do not read back as spaces; found by fuzz target webdav"
    )
    func serializedAttributeWhitespace() throws {
        let root = try #require(parsed("<a b=\"1&#9;2&#10;3&#13;4\" xmlns:x=\"urn:&#9;\"><x:c/></a>"))
        #expect(root.attributes[XMLName("", "b")] == "1\t2\n3\r4")
        #expect(root.serialized() == "<a xmlns:ns0=\"urn:&#9;\" b=\"1&#9;2&#10;3&#13;4\"><ns0:c/></a>")
        #expect(parsed(root.serialized()) == root)
    }

    @Test("serialized() of Windows's property declares its namespace on itself")
    func serializedProperty() throws {
        let root = try #require(parsed(ClientBodies.windowsProppatch))
        let prop = try #require(root.child(.dav("set"))?.child(.dav("prop"))?.children.first)
        #expect(
            prop.serialized()
                == #"<ns0:Win32CreationTime xmlns:ns0="urn:schemas-microsoft-com:">Wed, 04 Nov 2020 13:25:51 GMT</ns0:Win32CreationTime>"#
        )
        #expect(prop.serializedContent() == "Wed, 04 Nov 2020 13:25:51 GMT")
    }
}

@Suite("XML bodies: hostile ones are refused, never expanded or read", .tags(.unit))
struct HostileXMLTests {
    static let declaration = "the XML body declares a DTD or entity: refused"

    @Test("billion laughs")
    func billionLaughs() {
        var body = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n"
        for i in 1...9 {
            let prev = i == 1 ? "lol" : "lol\(i - 1)"
            body += "<!ENTITY lol\(i) \"" + String(repeating: "&\(prev);", count: 10) + "\">\n"
        }
        body += "]>\n<D:propfind xmlns:D=\"DAV:\"><D:prop><D:x>&lol9;</D:x></D:prop></D:propfind>"
        #expect(failure(body) == Self.declaration)
    }

    @Test("an external entity naming /etc/passwd is refused and nothing of the file appears")
    func externalEntity() {
        let body = """
            <?xml version="1.0"?>
            <!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:x>&xxe;</D:x></D:prop></D:set></D:propertyupdate>
            """
        let result = DAVXML.parse(bytes(body))
        #expect(result == .failure(DAVXMLError(Self.declaration)))
        // The tree is never made, so the one thing to check is everything the call gave back.
        #expect(!"\(result)".contains("root:x:0:0"))
        #expect(ProppatchRequest.parse(bytes(body)) == .failure(DAVXMLError(Self.declaration)))
    }

    @Test("an external DTD, a parameter entity, a bare DOCTYPE and an unparsed entity are refused")
    func otherDeclarations() {
        for body in [
            #"<!DOCTYPE a SYSTEM "file:///etc/passwd"><a/>"#,
            #"<!DOCTYPE a [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><a/>"#,
            #"<!DOCTYPE a [<!ENTITY % p "<!ENTITY x 'y'>"> %p;]><a>&x;</a>"#,
            "<!DOCTYPE a><a/>",
            #"<!DOCTYPE a [<!NOTATION n SYSTEM "x"><!ENTITY u SYSTEM "x" NDATA n>]><a/>"#,
        ] {
            #expect(failure(body) == Self.declaration, "\(body)")
        }
    }

    @Test("a reference to an entity never declared is refused like a declaration")
    func undefinedEntity() {
        #expect(failure("<a>&nbsp;</a>") == Self.declaration)
    }

    @Test("10,000 nested elements stop at depth 32")
    func deepNesting() {
        let body = String(repeating: "<a>", count: 10_000) + String(repeating: "</a>", count: 10_000)
        #expect(failure(body, limits: XMLLimits(maxBytes: 1 << 20)) == "the XML body is nested deeper than 32 elements")
        let ok = String(repeating: "<a>", count: 32) + String(repeating: "</a>", count: 32)
        #expect(parsed(ok) != nil)
        let over = String(repeating: "<a>", count: 33) + String(repeating: "</a>", count: 33)
        #expect(failure(over) == "the XML body is nested deeper than 32 elements")
    }

    @Test("more elements than the limit are refused")
    func manyElements() {
        let body = "<a>" + String(repeating: "<b/>", count: 10_000) + "</a>"
        #expect(failure(body) == "the XML body has more than 10000 elements")
        #expect(parsed("<a>" + String(repeating: "<b/>", count: 9_999) + "</a>") != nil)
    }

    @Test(
        "a namespace over 1 KiB is refused, on an element or an attribute, before thousands of names repeat it; one of 1 KiB is taken"
    )
    func longNamespaces() throws {
        let long = "u:" + String(repeating: "a", count: 30_000)
        let repeated = "<a:r xmlns:a=\"\(long)\">" + String(repeating: "<a:x/>", count: 5_000) + "</a:r>"
        #expect(failure(repeated) == "the XML body names a namespace of 30002 bytes; at most 1024 are taken")
        let attribute = "<r xmlns:a=\"u:\(String(repeating: "b", count: 1_100))\" a:x=\"1\"/>"
        #expect(failure(attribute) == "the XML body names a namespace of 1102 bytes; at most 1024 are taken")
        // Declared and not used: nothing repeats it.
        #expect(parsed("<r xmlns:a=\"\(long.prefix(60_000))\"/>") != nil)
        let fits = "u:" + String(repeating: "c", count: 1_022)
        let root = try #require(parsed("<a:r xmlns:a=\"\(fits)\"><a:x a:y=\"1\"/></a:r>"))
        #expect(root.name == XMLName(fits, "r"))
        #expect(root.children.first?.attributes[XMLName(fits, "y")] == "1")
    }

    @Test(
        "serialized() of an owner using 3,000 namespaces declares each once, ns0 to ns2999 in order of use, DAV: as D among them, and reads back the same"
    )
    func manyNamespaces() throws {
        let children = (0..<3_000).map { "<x xmlns=\"u:\($0)\"/>" }.joined()
        let owner = try #require(parsed("<D:owner xmlns:D=\"DAV:\">" + children + "<D:href>h</D:href></D:owner>"))
        let started = ContinuousClock.now
        let text = owner.serialized()
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(text.hasPrefix("<D:owner xmlns:D=\"DAV:\" xmlns:ns0=\"u:0\" xmlns:ns1=\"u:1\""), "\(text.prefix(200))")
        #expect(text.contains("<ns2999:x/><D:href>h</D:href></D:owner>"))
        let same = (try? DAVXML.parse(bytes(text), limits: XMLLimits(maxBytes: 1 << 20)).get()) == owner
        #expect(same, "reads back the same")
    }

    @Test("an over-size body is refused before parsing, with the limit in the message")
    func overSize() {
        let body = "<a>" + String(repeating: "x", count: 65_536) + "</a>"
        #expect(failure(body) == "the XML body is over 65536 bytes")
        #expect(failure("<a/>", limits: XMLLimits(maxBytes: 3)) == "the XML body is over 3 bytes")
    }

    @Test(
        "not well-formed bodies name the line and expat's reason",
        arguments: [
            ("<a><b></a>", "the XML body is not well-formed (line 1: mismatched tag)"),
            ("<a>\n\n<b", "the XML body is not well-formed (line 3: unclosed token)"),
            ("", "the XML body is not well-formed (line 1: no element found)"),
            ("<a/><b/>", "the XML body is not well-formed (line 1: junk after document element)"),
            ("<x:a/>", "the XML body is not well-formed (line 1: unbound prefix)"),
            ("<a>\u{1}</a>", "the XML body is not well-formed (line 1: not well-formed (invalid token))"),
        ])
    func notWellFormed(body: String, message: String) {
        #expect(failure(body) == message)
    }

    @Test("invalid UTF-8 is not well-formed")
    func badUTF8() {
        let body: [UInt8] = Array("<a>".utf8) + [0xC3, 0x28] + Array("</a>".utf8)
        guard case .failure(let e) = DAVXML.parse(body) else {
            Issue.record("parsed")
            return
        }
        #expect(e.description.hasPrefix("the XML body is not well-formed"))
    }
}
