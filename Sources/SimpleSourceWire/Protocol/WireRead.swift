// A view read over HTTP: where the reader stands, what it asks, and the answer any cache may keep.

public import Foundation

/// Where a reader stands in a stream: the stream's name and the version it holds. Written in a URL and in
/// the ``WireReadAnswer/Header/nextOffset`` header as `version_stream` (`42_tasks-7f3c.v9a1e`).
public struct WireOffset: Hashable, Sendable, LosslessStringConvertible {
  /// The stream, as the server names it.
  public var stream: String
  /// The version of the stream held.
  public var version: Int

  /// An offset in `stream` at `version`.
  public init(stream: String, version: Int) {
    self.stream = stream
    self.version = version
  }

  /// Reads `version_stream`; `nil` for any other text (a version that is not a whole number from 0, an
  /// empty stream).
  /// - Complexity: O(length).
  public init?(_ description: String) {
    guard let separator = description.firstIndex(of: "_"),
      let version = Int(description[..<separator]), version >= 0,
      case let stream = String(description[description.index(after: separator)...]), !stream.isEmpty
    else { return nil }
    self.init(stream: stream, version: version)
  }

  /// `version_stream`.
  public var description: String { "\(version)_\(stream)" }
}

/// One read of a view over HTTP (<doc:RunningOnSeveralMachines>): the view, by a read token or by its query,
/// the offset the reader holds, and whether to wait at the newest version. Its URL form is
/// ``queryItems``; ``WireService/read(_:scope:origin:ifNoneMatch:policy:)`` answers it.
///
/// ```swift
/// var read = WireRead(view: .token(token), offset: WireOffset(stream: stream, version: 42), live: true)
/// read.cursor = 17
/// read.queryItems  // [("token", …), ("offset", "42_…"), ("live", "long-poll"), ("cursor", "17")]
/// ```
public struct WireRead: Hashable, Sendable {
  /// How a read names its view.
  public enum View: Hashable, Sendable {
    /// A read token the service issued to the reader's scope (``WireReadAnswer/Header/token``): it names
    /// the view, and its answers may be kept by a shared cache.
    case token(String)
    /// A query (or the whole scope, `nil`), with no token: answered `private`, for the reader alone, with
    /// a token for the reads after it.
    case query(WireQueryRequest?)
  }

  /// The view read.
  public var view: View
  /// The stream and version the reader holds; `nil`: it holds nothing (it is sent the view's state).
  public var offset: WireOffset?
  /// Whether a read at the view's newest version waits for the next one (a long poll), rather than being
  /// answered at once that nothing changed.
  public var live: Bool
  /// The cursor of the reader's last answer (``WireReadAnswer/Header/cursor``), for a long poll: part of
  /// the URL, so that a cached answer that nothing changed is never read again by the same reader.
  public var cursor: Int?

  /// A read of `view` from `offset`.
  public init(view: View, offset: WireOffset? = nil, live: Bool = false, cursor: Int? = nil) {
    self.view = view
    self.offset = offset
    self.live = live
    self.cursor = cursor
  }

  /// The URL's query items, in this order: `token` (or `view`, the query's JSON, left out for the whole
  /// scope), `offset`, `live=long-poll`, `cursor`; each left out when absent. One read has one spelling.
  /// - Complexity: O(size of the query).
  public var queryItems: [(name: String, value: String)] {
    var items: [(name: String, value: String)] = []
    switch view {
    case .token(let token): items.append(("token", token))
    case .query(let query?):
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      if let json = try? encoder.encode(query) {
        items.append(("view", String(decoding: json, as: UTF8.self)))
      }
    case .query(nil): break
    }
    if let offset { items.append(("offset", offset.description)) }
    if live { items.append(("live", "long-poll")) }
    if let cursor { items.append(("cursor", String(cursor))) }
    return items
  }

  /// Reads a read from a URL's query items (already percent-decoded), as ``queryItems`` writes them, in
  /// any order.
  /// - Throws: ``WireError/Code-swift.struct/malformed`` naming the item that is wrong: one given twice or
  ///   unknown, a `view` that is not a query's JSON, an offset, `live` or cursor that does not read, both
  ///   `token` and `view`, or `live` with no offset.
  /// - Complexity: O(size of the items).
  public init(queryItems: some Sequence<(name: String, value: String)>) throws(WireError) {
    var seen = Set<String>()
    var (token, query, offset, live, cursor): (String?, WireQueryRequest?, WireOffset?, Bool, Int?) =
      (nil, nil, nil, false, nil)
    for (name, value) in queryItems {
      guard seen.insert(name).inserted else { throw WireError(.malformed, "\(name) is given twice") }
      switch name {
      case "token":
        guard !value.isEmpty else { throw WireError(.malformed, "token is empty") }
        token = value
      case "view":
        do {
          query = try JSONDecoder().decode(WireQueryRequest.self, from: Data(value.utf8))
        } catch {
          throw WireError(.malformed, "view is not a query: {\"name\": …, \"parameters\": {…}}")
        }
      case "offset":
        guard let read = WireOffset(value) else {
          throw WireError(.malformed, "offset is version_stream, a version from 0 and a stream")
        }
        offset = read
      case "live":
        guard value == "long-poll" else { throw WireError(.malformed, "live is long-poll or left out") }
        live = true
      case "cursor":
        guard let read = Int(value), read >= 0 else {
          throw WireError(.malformed, "cursor is a whole number")
        }
        cursor = read
      default:
        throw WireError(.malformed, "\(name) is not a parameter of a read")
      }
    }
    if token != nil, query != nil {
      throw WireError(.malformed, "a read names its view by token or by view, not both")
    }
    if live, offset == nil { throw WireError(.malformed, "a long poll needs the offset held") }
    self.init(view: token.map { .token($0) } ?? .query(query), offset: offset, live: live, cursor: cursor)
  }
}

/// The answer to a ``WireRead``, as HTTP carries it: a status, headers and a body. Every reader of the same
/// read (view, offset, liveness and cursor) at the same moment is answered with the same bytes, so that a
/// cache may keep one and hand it to all of them.
///
/// | Status | When | Body | `Cache-Control` |
/// | --- | --- | --- | --- |
/// | 200 | changes after the offset (or the view's state, for a reader holding nothing or a version no longer retained), or, not live, that nothing changed | one wire message per line: `reset` or `resumed`, then each `batch` | by token: `public`, ``WireReadPolicy/maxAge`` (and stale for ``WireReadPolicy/staleWhileRevalidate``), never past the token's life; by query: `private, no-store` |
/// | 204 | a long poll that saw no change in ``WireReadPolicy/hold`` | none | by token: `public`, a quarter of the hold |
/// | 304 | `If-None-Match` lists the answer's ``Header/entityTag`` (weak or strong) or is `*` | none | as the 200 |
/// | 400 | a read, view or parameter that does not read (`malformed`, `unknownQuery`, `invalidParameters`) | an `error` message | `no-store` |
/// | 403 | a token that is not the service's for this view and scope, or expired | an `error` message | `no-store` |
/// | 429 | a limit of the scope or origin (`limitReached`, `rateLimited`, with `Retry-After`) | an `error` message | `no-store` |
/// | 500 | the view could not be evaluated (`queryFailed`) | an `error` message | `no-store` |
public struct WireReadAnswer: Sendable {
  /// The names of the headers a read's answer carries besides `Cache-Control`, `Content-Type` and `ETag`.
  public enum Header {
    /// The offset the reader holds once it applied the body (`version_stream`): the next read's offset.
    public static let nextOffset = "Stream-Next-Offset"
    /// The cursor to send with the next long poll.
    public static let cursor = "Stream-Cursor"
    /// `true` when the reader holds the view's newest version once it applied the body: every answer of this
    /// service (an answer carries every change up to the newest version when it was made).
    public static let upToDate = "Stream-Up-To-Date"
    /// The source's version the answer covers: every change up to it that the view shows is in the body or
    /// before the reader's offset. A view skips the versions that change nothing it shows, so this can be
    /// past ``nextOffset``'s: a client whose edit over HTTP was confirmed at a version this reaches knows its
    /// view shows the edit, or never will (``WireService/edit(_:scope:)``).
    public static let sourceVersion = "SimpleSource-Source-Version"
    /// The read token of the view for the reader's scope: the next reads' `token`. Sent with every answer
    /// of a read by query, and with a read by token whose token nears its end.
    public static let token = "SimpleSource-Read-Token"
    /// The entity tag of the body, quoted: a strong tag, the same for the same bytes.
    public static let entityTag = "ETag"
    /// How a cache may keep the answer.
    public static let cacheControl = "Cache-Control"
    /// How long to wait before reading again, in whole seconds (429).
    public static let retryAfter = "Retry-After"
    /// The body's media type: `application/x-ndjson` for messages, `application/json` for an error.
    public static let contentType = "Content-Type"
  }

  /// The HTTP status.
  public var status: Int
  /// The headers, in the order written.
  public var headers: [(name: String, value: String)]
  /// The body: wire messages (JSON), one per line, each line ending with `\n`.
  public var body: Data

  /// An answer.
  public init(status: Int, headers: [(name: String, value: String)], body: Data) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// The value of the header `name` (compared without case), if the answer has it.
  /// - Complexity: O(headers).
  public func header(_ name: String) -> String? {
    headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
  }

  /// The body's messages, one `Data` per line.
  /// - Complexity: O(body).
  public var messages: [Data] {
    body.split(separator: UInt8(ascii: "\n")).map { Data($0) }
  }
}
