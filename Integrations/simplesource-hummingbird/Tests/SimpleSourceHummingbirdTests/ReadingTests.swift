// Reads of a view over real HTTP: statuses, headers a cache reads, tokens held to their user, and a remote
// source that follows by reads alone.

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import SimpleSource
import SimpleSourceHummingbird
import Testing

@Suite("Reading views over HTTP", .timeLimit(.minutes(5)))
struct ReadingTests {
  static let user = HTTPField.Name("X-User")!

  /// `/read?` and the read's query, percent-encoded.
  static func uri(_ read: WireRead) -> String {
    var components = URLComponents()
    components.path = "/read"
    components.queryItems = read.queryItems.map { URLQueryItem(name: $0.name, value: $0.value) }
    // `+` is a space in a query: encode it.
    return components.string!.replacingOccurrences(of: "+", with: "%2B")
  }

  /// A response as the service's answer.
  static func answer(_ status: HTTPResponse.Status, _ headers: HTTPFields, _ body: ByteBuffer?)
    -> WireReadAnswer
  {
    WireReadAnswer(
      status: Int(status.code), headers: headers.map { ($0.name.canonicalName, $0.value) },
      body: body.map { Data(buffer: $0) } ?? Data())
  }

  /// A read's headers: the user's, and the tag a cache revalidates with.
  static func headers(as user: String?, ifNoneMatch: String? = nil) -> HTTPFields {
    var headers = HTTPFields()
    if let user { headers[Self.user] = user }
    if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
    return headers
  }

  static func read(
    _ read: WireRead, as user: String?, ifNoneMatch: String? = nil, with client: some TestClientProtocol
  ) async throws -> WireReadAnswer {
    let response = try await client.execute(
      uri: uri(read), method: .get, headers: headers(as: user, ifNoneMatch: ifNoneMatch))
    return answer(response.status, response.headers, response.body)
  }

  @Test(
    "a user's read by query: their notes, private, with a token; by token: the changes, shared, and 304 on its tag"
  )
  func readsAndCaching() async throws {
    let notes = try await NotesServer()
    try await notes.application.test(.live) { client in
      let first = try await Self.read(WireRead(view: .query(nil)), as: "ann", with: client)
      #expect(first.status == 200)
      #expect(first.header("Cache-Control") == "private, no-store")
      #expect(String(decoding: first.body, as: UTF8.self).contains("Ann's diary"))
      let token = try #require(first.header(WireReadAnswer.Header.token))
      let offset = try #require(first.header("Stream-Next-Offset").flatMap(WireOffset.init))
      try await notes.source.appendItems(
        [Note(id: "gift", text: "Bob's gift", owner: "ann")], toSection: "notes")
      let read = WireRead(view: .token(token), offset: offset)
      let next = try await Self.read(read, as: "ann", with: client)
      #expect(next.status == 200)
      #expect(next.header("Content-Type") == "application/x-ndjson")
      #expect(next.header("Cache-Control") == "public, max-age=60, stale-while-revalidate=300")
      #expect(String(decoding: next.body, as: UTF8.self).contains("Bob's gift"))
      let tag = try #require(next.header("ETag"))
      let revalidated = try await Self.read(read, as: "ann", ifNoneMatch: tag, with: client)
      #expect(revalidated.status == 304)
      #expect(revalidated.body.isEmpty)
    }
  }

  @Test("a token read by another user, a guest, or with no readable credentials gets nothing of the view")
  func tokensHoldTheirUser() async throws {
    let notes = try await NotesServer()
    try await notes.application.test(.live) { client in
      let first = try await Self.read(WireRead(view: .query(nil)), as: "ann", with: client)
      let token = try #require(first.header(WireReadAnswer.Header.token))
      let read = WireRead(view: .token(token))
      for user in ["bob", nil] {
        let refused = try await Self.read(read, as: user, with: client)
        #expect(refused.status == 403)
        #expect(refused.header("Cache-Control") == "no-store")
        #expect(!String(decoding: refused.body, as: UTF8.self).contains("diary"))
      }
      let unreadable = try await Self.read(read, as: "", with: client)
      #expect(unreadable.status == 401)
      #expect(String(decoding: unreadable.body, as: UTF8.self).contains("unauthorized"))
      let malformed = try await client.execute(uri: "/read?offset=nope", method: .get)
      #expect(malformed.status == .badRequest)
    }
  }

  @Test("a cache asks the origin whether a reader may make the read it keeps: the token's user only")
  func authorization() async throws {
    let notes = try await NotesServer()
    try await notes.application.test(.live) { client in
      let first = try await Self.read(WireRead(view: .query(nil)), as: "ann", with: client)
      let token = try #require(first.header(WireReadAnswer.Header.token))
      var headers = Self.headers(as: "ann")
      headers[HTTPField.Name("X-Original-URI")!] = Self.uri(WireRead(view: .token(token), offset: nil))
      let allowed = try await client.execute(uri: "/read-authorization", method: .get, headers: headers)
      #expect(allowed.status == .noContent)
      #expect(allowed.headers[HTTPField.Name("X-Accel-Expires")!] == "60")
      headers[Self.user] = "bob"
      let refused = try await client.execute(uri: "/read-authorization", method: .get, headers: headers)
      #expect(refused.status == .forbidden)
    }
  }

  @Test("a long poll is answered when a note is added, and 204 with a cursor when none is within the hold")
  func longPolls() async throws {
    let notes = try await NotesServer(hold: 0.05)
    try await notes.application.test(.live) { client in
      let first = try await Self.read(WireRead(view: .query(nil)), as: nil, with: client)
      let token = try #require(first.header(WireReadAnswer.Header.token))
      let offset = first.header("Stream-Next-Offset").flatMap(WireOffset.init)
      let quiet = try await Self.read(
        WireRead(view: .token(token), offset: offset, live: true), as: nil, with: client)
      #expect(quiet.status == 204)
      let cursor = try #require(quiet.header("Stream-Cursor").flatMap(Int.init))
      try await notes.source.appendItems([Note(id: "lunch", text: "Lunch", owner: nil)], toSection: "notes")
      let changed = try await Self.read(
        WireRead(view: .token(token), offset: offset, live: true, cursor: cursor), as: nil, with: client)
      #expect(changed.status == 200)
      #expect(String(decoding: changed.body, as: UTF8.self).contains("Lunch"))
      #expect(changed.header("Stream-Cursor").flatMap(Int.init).map { $0 > cursor } == true)
    }
  }

  @Test("an address runs at most its number of reads at once: past it, 429")
  func readsPerAddress() async throws {
    // The server tells the test when a long poll runs (it is counted then).
    let (polling, poll) = AsyncStream.makeStream(of: Void.self)
    let notes = try await NotesServer(hold: 30, readsPerAddress: 1) { read in
      if read.live { poll.yield() }
    }
    try await notes.application.test(.live) { client in
      let first = try await Self.read(WireRead(view: .query(nil)), as: nil, with: client)
      let token = try #require(first.header(WireReadAnswer.Header.token))
      let offset = first.header("Stream-Next-Offset").flatMap(WireOffset.init)
      let port = try #require(client.port)
      // A long poll holds the address's one read; the test's second client is another connection.
      let holding = Task {
        try await TestClient.reading(port: port) { other in
          let response = try await other.get(
            Self.uri(WireRead(view: .token(token), offset: offset, live: true)),
            headers: Self.headers(as: nil))
          return Self.answer(response.status, response.headers, response.body)
        }
      }
      for await _ in polling { break }
      let refused = try await Self.read(WireRead(view: .query(nil)), as: nil, with: client)
      #expect(refused.status == 429)
      try await notes.source.appendItems([Note(id: "lunch", text: "Lunch", owner: nil)], toSection: "notes")
      #expect(try await holding.value.status == 200)
    }
  }

  @Test("a remote source follows a search over HTTP reads alone, to every version written")
  func remoteFollowsOverHTTP() async throws {
    let notes = try await NotesServer(hold: 1)
    try await notes.application.test(.live) { client in
      let remote = RemoteDataSource<Notes>(query: WireQueryRequest("search", ["text": .string("lunch")]))
      let following = Task {
        try await remote.follow { read in try await Self.read(read, as: "ann", with: client) }
      }
      var version = 0
      for day in 0..<5 {
        version = try await notes.source.appendItems(
          [Note(id: "lunch\(day)", text: "Lunch on day \(day)", owner: day == 2 ? "bob" : nil)],
          toSection: "notes"
        ).number
      }
      #expect(await remote.reached(remoteVersion: version))
      following.cancel()
      _ = try? await following.value
      let shown = await remote.snapshot.sections.flatMap(\.items).map(\.id)
      #expect(shown == ["lunch0", "lunch1", "lunch3", "lunch4"], "bob's note is not ann's")
    }
  }
}

extension TestClient {
  /// Runs `body` with a client of its own, connected to `port`.
  static func reading<Value: Sendable>(
    port: Int, _ body: @Sendable (TestClient) async throws -> Value
  ) async throws -> Value {
    let client = TestClient(
      host: "127.0.0.1", port: port, configuration: .init(),
      eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton))
    client.connect()
    do {
      let value = try await body(client)
      try await client.shutdown()
      return value
    } catch {
      try? await client.shutdown()
      throw error
    }
  }
}
