import PTKVocabulary

/// Why a request comes from a page of another site, nil when it does not (or the browser
/// does not say): its Origin is another (`null`, which pages with `Referrer-Policy:
/// no-referrer` send for their own forms, says nothing), or its Sec-Fetch-Site is neither
/// same-origin nor none (typed or bookmarked).
public func otherSite(_ head: HTTPHead) -> String? {
    if let origin = head.header("origin"), origin != "null", origin != "https://" + (head.header("host") ?? "") {
        return "Origin \(quotedForTerminal(origin)) is not this site"
    }
    if let site = head.header("sec-fetch-site"), site != "same-origin", site != "none" {
        return "Sec-Fetch-Site is \(quotedForTerminal(site))"
    }
    return nil
}
