import PTKHTTP

/// The WebDAV door's requests on the web port (`WebEndpoint.handler`) while its handlers still
/// write their answers themselves (the old contract, `HTTPHandler`): the connection writes
/// nothing for them, and carries on as the handler says. This goes when the WebDAV door
/// answers with `Response` values.
func davResponder(_ handle: @escaping (HTTPHead, HTTPConnection, String?) throws(HTTPError) -> Bool)
    -> (HTTPHead, HTTPConnection, String?) throws(HTTPError) -> Response
{
    { head, http, certificate throws(HTTPError) in
        Response(.ok, body: .writtenByLegacyHandler(keepAlive: try handle(head, http, certificate)))
    }
}
