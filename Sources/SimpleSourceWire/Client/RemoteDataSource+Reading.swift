// Following a view over HTTP: one read after another from the version held, long polls at the newest.

import Foundation

extension RemoteDataSource {
  /// Follows the sender's view (``query``) through reads over HTTP (``WireRead``), one after another, until
  /// the calling task is cancelled: the same checks, versions and resume as over a WebSocket, with a cache
  /// free to answer any read in between (<doc:RunningOnSeveralMachines>).
  ///
  /// The first read names the view by its query and holds what the source holds (its stream and version,
  /// or nothing); its answer carries a read token, with which every later read is made, so that a shared
  /// cache may answer it. Each read holds the version the last answer left it at, and waits at the newest
  /// (`live`, with the last answer's cursor). Every message of an answer is received in order
  /// (``receive(_:)``); a token that ended or was refused is dropped, and the next read is by query again;
  /// a read refused for a rate (429) is made again after its `Retry-After`.
  ///
  /// ```swift
  /// let remote = RemoteDataSource<Board>(query: WireQueryRequest("column", ["name": .string("todo")]))
  /// try await remote.follow { read in
  ///   var url = URLComponents(string: "https://example.com/board/read")!
  ///   url.queryItems = read.queryItems.map { URLQueryItem(name: $0.name, value: $0.value) }
  ///   return try await fetch(url.url!)  // status, headers and body as a WireReadAnswer
  /// }
  /// ```
  ///
  /// Edits are not sent over reads: they wait, pending, for a connection (``connect(_:)``).
  /// - Parameter fetch: Makes one read over HTTP (``WireRead/queryItems`` in the URL, the client's
  ///   credentials in its headers) and returns its answer; throwing ends following.
  /// - Throws: the ``WireError`` of an answer refused (a message that does not apply, or the sender's
  ///   refusal other than a token's or a rate's), or `fetch`'s error. Call it again to resume from what is
  ///   held.
  /// - Complexity: per answer, as ``receive(_:)`` for each of its messages.
  public func follow(reading fetch: @Sendable (WireRead) async throws -> WireReadAnswer) async throws {
    var token: String?
    var cursor: Int?
    while !Task.isCancelled {
      let offset = stream.flatMap { stream in remoteVersion.map { WireOffset(stream: stream, version: $0) } }
      let read = WireRead(
        view: token.map { .token($0) } ?? .query(query), offset: offset, live: offset != nil, cursor: cursor)
      let answer = try await fetch(read)
      if let renewed = answer.header(WireReadAnswer.Header.token) { token = renewed }
      if let next = answer.header(WireReadAnswer.Header.cursor).flatMap(Int.init) { cursor = next }
      switch answer.status {
      case 200:
        for message in answer.messages { try receive(message) }
      case 204, 304:
        continue
      default:
        let refusal: WireError
        if case .error(let error)? = try? WireCoder().decode(answer.body, as: Section.self) {
          refusal = error
        } else {
          refusal = WireError(.malformed, "a read was answered \(answer.status) with no error message")
        }
        switch refusal.code {
        case .readTokenExpired, .readTokenInvalid:
          token = nil
        case .rateLimited:
          try await Task.sleep(nanoseconds: UInt64((refusal.retryAfter ?? 1) * 1e9))
        default:
          throw refusal
        }
      }
    }
  }
}
