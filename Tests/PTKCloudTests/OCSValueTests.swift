import PTKCloud
import PTKTestTags
import Testing

@Suite("OCS values and envelopes", .tags(.unit))
struct OCSValueTests {
    @Test func jsonKeepsOrderAndEscapes() {
        let v = OCSValue.object([
            ("b", .string("a\"b\\c\n")), ("a", .int(-3)), ("t", .bool(true)), ("n", .null),
            ("l", .array([.int(1), .string("x/y")])),
        ])
        #expect(v.json == #"{"b":"a\"b\\c\n","a":-3,"t":true,"n":null,"l":[1,"x/y"]}"#)
        #expect(v["a"] == .int(-3))
        #expect(v["missing"] == nil)
    }

    @Test func xmlEscapesTextAndOddKeys() {
        let v = OCSValue.object([
            ("name", .string("<a&b>")), ("1bad key", .int(1)), ("on", .bool(true)), ("off", .bool(false)),
            ("list", .array([.string("x")])),
        ])
        #expect(
            v.xml
                == "<name>&lt;a&amp;b&gt;</name><element key=\"1bad key\">1</element><on>1</on><off></off><list><element>x</element></list>"
        )
    }

    @Test func v1AnswersTwoHundredWithItsOwnCodes() {
        let ok = OCSAnswer(.v1, .json, data: .array([]))
        #expect(ok.httpStatus == 200)
        #expect(ok.body.contains(#""statuscode":100"#))
        #expect(ok.body.hasPrefix(#"{"ocs":{"meta":{"status":"ok""#))
        let missing = OCSAnswer(.v1, .json, status: 404, message: "no", data: .array([]))
        #expect(missing.httpStatus == 200)
        #expect(missing.body.contains(#""statuscode":998"#))
        #expect(missing.body.contains(#""status":"failure""#))
        let unauthorised = OCSAnswer(.v1, .xml, status: 401, message: "no", data: .array([]))
        #expect(unauthorised.httpStatus == 401)
        #expect(unauthorised.body.contains("<statuscode>997</statuscode>"))
    }

    @Test func v2AnswersTheHTTPStatus() {
        let ok = OCSAnswer(.v2, .xml, data: .object([("id", .string("anna"))]))
        #expect(ok.httpStatus == 200)
        #expect(ok.contentType.hasPrefix("text/xml"))
        #expect(ok.body.contains("<statuscode>200</statuscode>"))
        #expect(ok.body.contains("<data><id>anna</id></data>"))
        let missing = OCSAnswer(.v2, .json, status: 404, message: "no", data: .array([]))
        #expect(missing.httpStatus == 404)
        #expect(missing.body.contains(#""statuscode":404"#))
    }

    @Test func formatAsked() {
        #expect(OCSFormat.asked(format: "json", accept: nil) == .json)
        #expect(OCSFormat.asked(format: "xml", accept: "application/json") == .xml)
        #expect(OCSFormat.asked(format: nil, accept: "application/json, text/plain") == .json)
        #expect(OCSFormat.asked(format: nil, accept: nil) == .xml)
    }
}
