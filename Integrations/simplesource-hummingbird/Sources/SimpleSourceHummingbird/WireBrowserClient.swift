// The wire format's client for browsers, a JavaScript module this package ships and serves.

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SimpleSource

/// SimpleSource's wire format (format 2) in the browser: a JavaScript module, `wire-client.js`, whose
/// class `WireClient` follows a view of a ``WireWebSockets`` service (or, without WebSockets, its reads at
/// a ``WireHTTPReads`` route), applies each batch to the sections it holds, resumes from its version after
/// a drop, and writes with edits shown at once and rolled back when refused; it can keep its replica in
/// the browser's storage, so that a reload resumes. A page subclasses it and draws its sections:
///
/// ```js
/// import { WireClient } from "/wire-client.js";
/// class List extends WireClient {
///   show(sections) { /* draw sections, each { id, header, items } */ }
///   showStatus(state, text) { document.title = text; }
/// }
/// const list = new List({ url: `ws://${location.host}/live`, reads: "/read" });
/// list.connect();
/// list.edit([{ op: "insert", items: [{ id: "n1", title: "Milk" }], section: "todo" }]);
/// ```
///
/// The module's header comment documents the rest (queries, pausing, the replica).
public enum WireBrowserClient {
  /// The module's text, read once from the package's resources.
  /// - Complexity: O(1) after the first read.
  public static let script: String = {
    guard let url = Bundle.module.url(forResource: "wire-client", withExtension: "js"),
      let text = try? String(contentsOf: url, encoding: .utf8)
    else { preconditionFailure("SimpleSourceHummingbird's resources lack wire-client.js") }
    return text
  }()

  /// Adds a `GET` route at `path` to `router` that answers the module, as `text/javascript`, with an
  /// `ETag` of its bytes (a browser revalidates it, and gets `304` while it is unchanged: its
  /// `If-None-Match` lists the tag, weak or strong, as a cache that compressed the module sends it).
  /// - Complexity: O(1) per request.
  public static func route<Context: RequestContext>(_ path: RouterPath, on router: Router<Context>) {
    let body = ByteBuffer(string: script)
    let entityTag = WireEntityTag(hashing: script.utf8)
    let tag = entityTag.description
    router.get(path) { request, _ in
      if entityTag.matches(ifNoneMatch: request.headers[.ifNoneMatch]) {
        return Response(status: .notModified, headers: [.eTag: tag])
      }
      return Response(
        status: .ok,
        headers: [.contentType: "text/javascript; charset=utf-8", .eTag: tag, .cacheControl: "no-cache"],
        body: ResponseBody(byteBuffer: body))
    }
  }
}
