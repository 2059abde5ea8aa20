// Following a view over HTTP: one read after another from the version held, long polls at the newest.

public import Foundation

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
  /// With `post`, the source's edits are posted while it follows (``WireService/edit(_:scope:)``), one at
  /// a time in the order they were made; the sender confirms one as soon as it made it, and the edit stays
  /// shown on top of what is held until the version held, or the source version a read covered
  /// (``WireReadAnswer/Header/sourceVersion``), reaches the confirmed one: then ``edit(_:)`` returns. A
  /// refusal rolls it back at once. A post that throws or is not answered (a limit, the server) is made
  /// again after a pause that doubles from 50 ms to 2 s, or after the next read. Without `post`, edits
  /// wait, pending, for a connection (``connect(_:)``).
  /// - Parameters:
  ///   - fetch: Makes one read over HTTP (``WireRead/queryItems`` in the URL, the client's credentials in
  ///     its headers) and returns its answer; throwing ends following.
  ///   - post: Posts one edit message (the body) to the sender's edits route, with the client's
  ///     credentials, and returns the answer.
  /// - Throws: the ``WireError`` of an answer refused (a message that does not apply, or the sender's
  ///   refusal other than a token's or a rate's), or `fetch`'s error. Call it again to resume from what is
  ///   held.
  /// - Complexity: per answer, as ``receive(_:)`` for each of its messages.
  public func follow(
    reading fetch: @Sendable (WireRead) async throws -> WireReadAnswer,
    posting post: (@Sendable (Data) async throws -> WireReadAnswer)? = nil
  ) async throws {
    var token: String?
    var cursor: Int?
    poster = post
    defer { poster = nil }
    while !Task.isCancelled {
      if post != nil { startPosting() }
      let offset = stream.flatMap { stream in remoteVersion.map { WireOffset(stream: stream, version: $0) } }
      let read = WireRead(
        view: token.map { .token($0) } ?? .query(query), offset: offset, live: offset != nil, cursor: cursor)
      let answer = try await fetch(read)
      if let renewed = answer.header(WireReadAnswer.Header.token) { token = renewed }
      if let next = answer.header(WireReadAnswer.Header.cursor).flatMap(Int.init) { cursor = next }
      let covered = answer.header(WireReadAnswer.Header.sourceVersion).flatMap(Int.init)
      switch answer.status {
      case 200:
        for message in answer.messages { try receive(message) }
        settlePosts(covered: covered)
      case 204, 304:
        settlePosts(covered: covered)
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

  /// Starts posting the pending edits, unless a post is under way.
  func startPosting() {
    guard pending.posting == nil else { return }
    Task.schedulable("posting edits") { await self.postPending() }
  }

  /// Posts the oldest pending edit not confirmed, then the next, until none is left or a post is not
  /// answered (posted again after a pause, or after the next read).
  private func postPending() async {
    while let post = poster, let (id, edit) = pending.nextPost() {
      let answer: WireReadAnswer
      do {
        answer = try await post(WireCoder().encode(WireMessage<Section>.edit(edit)))
      } catch {
        pending.posted(id, confirmedAt: nil)
        retryPosting()
        return
      }
      switch try? WireCoder().decode(answer.body, as: Section.self) {
      case .confirmed(_, let version)?:
        postRetries = 0
        pending.posted(id, confirmedAt: version)
        settlePosts(covered: nil)
      case .refused(_, let error)?:
        postRetries = 0
        self.answer(id, with: .failure(error))
      case .error(let error)? where answer.status == 400 || answer.status == 413:
        // The edit itself cannot be made: refused, as the sender would.
        postRetries = 0
        self.answer(id, with: .failure(error))
      default:
        pending.posted(id, confirmedAt: nil)
        retryPosting()
        return
      }
    }
  }

  /// Posts again after a pause: 50 ms, doubled for each post not answered in a row, up to 2 s.
  private func retryPosting() {
    let pause = min(2.0, 0.05 * Double(1 << min(postRetries, 6)))
    postRetries += 1
    Task.schedulable("posting edits again") {
      try? await Task.sleep(nanoseconds: UInt64(pause * 1e9))
      self.startPosting()
    }
  }

  /// Answers the edits confirmed to a post at a version the source holds, or a read covered.
  private func settlePosts(covered: Int?) {
    if let covered { readCovered = max(readCovered, covered) }
    let reached = max(readCovered, state.remoteVersion ?? -1)
    for (id, version) in pending.covered(reached) {
      self.answer(id, with: .success(max(state.remoteVersion ?? version, version)))
    }
  }
}
