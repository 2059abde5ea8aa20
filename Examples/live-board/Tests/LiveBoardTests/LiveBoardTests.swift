// The live board end to end: HTTP writes, WebSocket clients following with RemoteDataSource, resume and
// reset after a drop, and bad requests and bad WebSocket messages that change nothing.

import Foundation
import class GRDB.DatabaseQueue
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import Logging
import NIOPosix
import SimpleSource
import Testing

@testable import LiveBoard

/// What one WebSocket connection received: the type of each message, in order, and every message's text.
actor Received {
  var types: [String] = []
  var errors: [String] = []
  var texts: [String] = []
  func record(_ type: String) { types.append(type) }
  func recordError(_ code: String) { errors.append(code) }
  func recordText(_ text: String) { texts.append(text) }
}

/// A Swift client: follows `/live` (as `user`, when given) into `remote` until its task is cancelled.
func follow(
  _ remote: RemoteDataSource<Column>, client: any TestClientProtocol, received: Received, user: String? = nil
) -> Task<Void, any Error> {
  Task {
    let path = user.map { "/live?user=\($0)" } ?? "/live"
    try await client.ws(path, configuration: .init(maxFrameSize: 1 << 22)) { inbound, outbound, _ in
      let request = await remote.subscribeRequest
      try await outbound.write(.text(String(decoding: WireCoder().encode(request), as: UTF8.self)))
      for try await message in inbound.messages(maxSize: 1 << 22) {
        guard case .text(let text) = message else { continue }
        await received.recordText(text)
        let decoded: WireMessage<Column> = try WireCoder().decode(Data(text.utf8))
        if case .error(let error) = decoded { await received.recordError(error.code.rawValue) }
        await received.record(decoded.typeName)
        try await remote.receive(decoded)
      }
    }
  }
}

/// Follows the board with `remote` over one WebSocket that carries its edits too
/// (``RemoteDataSource/follow(_:sending:)``).
func followWriting(
  _ remote: RemoteDataSource<Column>, client: any TestClientProtocol, user: String? = nil
) -> Task<Void, any Error> {
  Task {
    let path = user.map { "/live?user=\($0)" } ?? "/live"
    try await client.ws(path, configuration: .init(maxFrameSize: 1 << 22)) { inbound, outbound, _ in
      let messages = inbound.messages(maxSize: 1 << 22).compactMap { message -> WireMessage<Column>? in
        guard case .text(let text) = message else { return nil }
        return try WireCoder().decode(Data(text.utf8))
      }
      try await remote.follow(messages) { message in
        try await outbound.write(.text(String(decoding: WireCoder().encode(message), as: UTF8.self)))
      }
    }
  }
}

/// Another process's transaction on the board's file, held on a thread of its own until `release()`.
struct HeldTransaction {
  let done: DispatchSemaphore
  func release() { done.signal() }
}

/// Opens a transaction with `sql` on `database` and holds it until released (then rolls it back).
func holding(_ database: DatabaseQueue, _ sql: String) async throws -> HeldTransaction {
  let done = DispatchSemaphore(value: 0)
  try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
    Thread.detachNewThread {
      var holding = false
      do {
        try database.writeWithoutTransaction { db in
          try db.execute(sql: sql)
          holding = true
          started.resume()
          done.wait()
          try db.execute(sql: "ROLLBACK")
        }
      } catch {
        if !holding { started.resume(throwing: error) }
      }
    }
  }
  return HeldTransaction(done: done)
}

/// The board as `GET /api/board` returns it, to `user` when given.
func boardState(_ client: any TestClientProtocol, user: String? = nil) async throws -> BoardBody {
  try await client.execute(uri: "/api/board" + (user.map { "?user=\($0)" } ?? ""), method: .get) { response in
    try JSONDecoder().decode(BoardBody.self, from: Data(response.body.readableBytesView))
  }
}

/// Sends a JSON request; returns its status and body.
@discardableResult
func send(
  _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ json: String? = nil
) async throws -> (status: Int, body: String) {
  try await client.execute(
    uri: uri, method: method, headers: [.contentType: "application/json"],
    body: json.map { ByteBuffer(string: $0) }
  ) { response in (response.status.code, String(buffer: response.body)) }
}

func version(of body: String) -> Int? {
  (try? JSONDecoder().decode(WriteBody.self, from: Data(body.utf8)))?.version
}

@Suite("Live board", .timeLimit(.minutes(2)))
struct LiveBoardTests {
  static let logger: Logger = {
    var logger = Logger(label: "live-board-tests")
    logger.logLevel = .warning
    return logger
  }()

  @Test("writes by HTTP reach every WebSocket client, which converge to the database's rows in order")
  func clientsConverge() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      let remotes = (0..<3).map { _ in RemoteDataSource<Column>() }
      let received = Received()
      let tasks = remotes.map { follow($0, client: client, received: received) }
      var last = 0
      for index in 0..<12 {
        let column = ["todo", "doing", "done"][index % 3]
        let (status, body) = try await send(
          client, .post, "/api/cards", #"{"id":"c\#(index)","title":"Card \#(index)","column":"\#(column)"}"#)
        #expect(status == 201, "\(body)")
        last = version(of: body) ?? last
      }
      try await send(client, .post, "/api/cards/c3/move", #"{"column":"todo","before":"c0"}"#)
      try await send(client, .patch, "/api/cards/c1", #"{"title":"Renamed"}"#)
      let (status, body) = try await send(client, .delete, "/api/cards/c2")
      #expect(status == 200)
      last = version(of: body) ?? last
      let truth = try await boardState(client)
      #expect(truth.version == last)
      #expect(truth.columns[0].items.map(\.id) == ["c3", "c0", "c6", "c9"])
      for remote in remotes {
        await remote.reached(remoteVersion: last)
        #expect(await remote.snapshot.sections == truth.columns)
        #expect(await remote.lastError == nil)
      }
      for task in tasks { task.cancel() }
    }
  }

  @Test("a remote source follows the board by reads over HTTP as its user, to the database's rows")
  func followsByReads() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      // Reads on a connection of their own: a long poll holds its connection until it is answered.
      let reader = TestClient(
        host: "127.0.0.1", port: try #require(client.port), configuration: .init(),
        eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton))
      reader.connect()
      let remote = RemoteDataSource<Column>()
      let following = Task {
        try await remote.follow { read in
          var components = URLComponents()
          components.path = "/read"
          components.queryItems = read.queryItems.map { URLQueryItem(name: $0.name, value: $0.value) }
          let uri = components.string!.replacingOccurrences(of: "+", with: "%2B")
          let response = try await reader.get(uri, headers: [HTTPField.Name("X-User")!: "alice"])
          return WireReadAnswer(
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name.canonicalName, $0.value) },
            body: response.body.map { Data(buffer: $0) } ?? Data())
        }
      }
      try await send(client, .post, "/api/cards", #"{"id":"c0","title":"Shared","column":"todo"}"#)
      try await send(
        client, .post, "/api/cards?user=bob", #"{"id":"b","title":"Bob's","column":"todo","private":true}"#)
      let (_, body) = try await send(
        client, .post, "/api/cards?user=alice",
        #"{"id":"a","title":"Alice's","column":"doing","private":true}"#)
      let last = try #require(version(of: body))
      #expect(await remote.reached(remoteVersion: last))
      following.cancel()
      try await reader.shutdown()
      let shown = await remote.snapshot.sections.flatMap(\.items).map(\.id)
      #expect(shown == ["c0", "a"], "alice's scope: the shared card and hers, never bob's")
    }
  }

  @Test("a client dropped mid-stream resumes from its version: no gap, no duplicate, no reset")
  func dropAndResume() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      let remote = RemoteDataSource<Column>()
      let local = await remote.subscribe()
      var received = Received()
      var task = follow(remote, client: client, received: received)
      let (_, first) = try await send(client, .post, "/api/cards", #"{"id":"a","title":"A","column":"todo"}"#)
      await remote.reached(remoteVersion: version(of: first)!)
      task.cancel()
      _ = await task.result
      try await send(client, .post, "/api/cards", #"{"id":"b","title":"B","column":"todo"}"#)
      let (_, moved) = try await send(client, .post, "/api/cards/b/move", #"{"column":"done"}"#)
      received = Received()
      task = follow(remote, client: client, received: received)
      await remote.reached(remoteVersion: version(of: moved)!)
      #expect(await received.types.first == "resumed")
      #expect(await remote.snapshot.sections == (try await boardState(client)).columns)
      // The remote's own subscriber saw every change once, in order.
      var held = local.snapshot
      var at = local.version
      for await batch in local.batches {
        #expect(batch.from == at)
        held = batch.snapshot
        at = batch.to
        if held.sections == (try await boardState(client)).columns { break }
      }
      task.cancel()
      local.cancel()
    }
  }

  @Test("a client too far behind the retained history gets a reset, and converges")
  func tooFarBehind() async throws {
    let board = try Board(path: nil, history: HistoryLimit(versions: 2))
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      let remote = RemoteDataSource<Column>()
      var received = Received()
      var task = follow(remote, client: client, received: received)
      await remote.reached(remoteVersion: 0)
      task.cancel()
      _ = await task.result
      var last = 0
      for index in 0..<5 {
        let (_, body) = try await send(
          client, .post, "/api/cards", #"{"id":"x\#(index)","title":"X","column":"doing"}"#)
        last = version(of: body)!
      }
      received = Received()
      task = follow(remote, client: client, received: received)
      await remote.reached(remoteVersion: last)
      #expect(await received.types.first == "reset")
      #expect(await remote.snapshot.sections == (try await boardState(client)).columns)
      task.cancel()
    }
  }

  @Test("bad requests get 4xx errors naming what was wrong, and change nothing")
  func badRequests() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      try await send(client, .post, "/api/cards", #"{"id":"a","title":"A","column":"todo"}"#)
      try await send(client, .post, "/api/cards", #"{"id":"b","title":"B","column":"done"}"#)
      let before = try await boardState(client)
      let long = String(repeating: "x", count: 201)
      let cases: [(HTTPRequest.Method, String, String?, Int, String)] = [
        (.post, "/api/cards", #"{"title":"A"}"#, 400, "missing column"),
        (.post, "/api/cards", #"{"title":"  ","column":"todo"}"#, 400, "not empty"),
        (.post, "/api/cards", #"{"title":"\#(long)","column":"todo"}"#, 400, "at most 200"),
        (.post, "/api/cards", #"{"title":"A","column":"later"}"#, 400, "no column later"),
        (.post, "/api/cards", #"{"id":"a","title":"A","column":"todo"}"#, 409, "card a exists"),
        (.post, "/api/cards", #"{"title":"A","column":"todo","before":"b"}"#, 400, "not in column todo"),
        (.post, "/api/cards", #"{"title":"A","column":"todo","before":"zz"}"#, 404, "no card zz"),
        (.post, "/api/cards", "not json", 400, "not JSON"),
        (.post, "/api/cards", #"{"title":7,"column":"todo"}"#, 400, "title must be a string"),
        (
          .post, "/api/cards", #"{"title":"A","column":"todo","private":"yes"}"#, 400,
          "private must be true or false"
        ),
        (.post, "/api/cards", String(repeating: " ", count: 20_000), 413, "at most"),
        (.patch, "/api/cards/zz", #"{"title":"New"}"#, 404, "no card zz"),
        (.patch, "/api/cards/a", #"{"title":""}"#, 400, "not empty"),
        (.post, "/api/cards/a/move", #"{"column":"done","before":"a"}"#, 400, "before itself"),
        (.post, "/api/cards/a/move", #"{"column":"doing","before":"b"}"#, 400, "not in column doing"),
        (.post, "/api/cards/zz/move", #"{"column":"done"}"#, 404, "no card zz"),
        (.delete, "/api/cards/zz", nil, 404, "no card zz"),
      ]
      for (method, uri, json, status, detail) in cases {
        let (got, body) = try await send(client, method, uri, json)
        #expect(got == status, "\(method) \(uri) \(json ?? ""): \(body)")
        #expect(body.contains(detail), "\(method) \(uri): \(body)")
      }
      let after = try await boardState(client)
      #expect(after.columns == before.columns)
      #expect(after.version == before.version)
    }
  }

  @Test("bad WebSocket messages get error messages, change nothing, and a subscribe still works after them")
  func badMessages() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      try await send(client, .post, "/api/cards", #"{"id":"a","title":"A","column":"todo"}"#)
      let before = try await boardState(client)
      let received = Received()
      try await client.ws("/live") { inbound, outbound, _ in
        for text in [
          #"{"format":"simplesource","formatVersion":1,"type":"batch","from":0,"#,
          #"{"format":"simplesource","formatVersion":9,"type":"subscribe"}"#,
          #"{"format":"simplesource","formatVersion":1,"type":"batch","from":0,"to":1,"stages":[]}"#,
          "hello",
          #"{"format":"simplesource","formatVersion":1,"type":"subscribe"}"#,
        ] {
          try await outbound.write(.text(text))
        }
        for try await message in inbound.messages(maxSize: 1 << 20) {
          guard case .text(let text) = message else { continue }
          let decoded: WireMessage<Column> = try WireCoder().decode(Data(text.utf8))
          if case .error(let error) = decoded { await received.recordError(error.code.rawValue) }
          await received.record(decoded.typeName)
          if decoded.typeName == "reset" { break }
        }
      }
      #expect(await received.errors == ["malformed", "unsupportedFormat", "unexpectedMessage", "malformed"])
      #expect(await received.types.last == "reset")
      let after = try await boardState(client)
      #expect(after.columns == before.columns && after.version == before.version)
    }
  }

  @Test(
    "each user sees the shared cards and only their own private ones; a card that leaves a scope is a delete")
  func privateCards() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      let users: [String?] = ["alice", "bob", nil]
      let remotes = users.map { _ in RemoteDataSource<Column>() }
      let received = users.map { _ in Received() }
      let tasks = zip(users, zip(remotes, received)).map { user, pair in
        follow(pair.0, client: client, received: pair.1, user: user)
      }
      func write(_ method: HTTPRequest.Method, _ uri: String, _ json: String?) async throws -> Int {
        let (status, body) = try await send(client, method, uri, json)
        #expect((200..<300).contains(status), "\(method) \(uri): \(body)")
        return version(of: body) ?? -1
      }
      _ = try await write(.post, "/api/cards?user=alice", #"{"id":"s1","title":"Shared","column":"todo"}"#)
      _ = try await write(
        .post, "/api/cards?user=alice", #"{"id":"a1","title":"Alice secret","column":"todo","private":true}"#)
      _ = try await write(
        .post, "/api/cards?user=bob",
        #"{"id":"b1","title":"Bob secret","column":"todo","private":true,"before":"s1"}"#)
      _ = try await write(.post, "/api/cards/a1/move?user=alice", #"{"column":"done"}"#)
      _ = try await write(.patch, "/api/cards/a1?user=alice", #"{"title":"Alice secret, renamed"}"#)
      // Alice takes the shared card private: a delete for Bob and the guest. Bob shares his: an insert.
      _ = try await write(.patch, "/api/cards/s1?user=alice", #"{"private":true}"#)
      let last = try await write(.patch, "/api/cards/b1?user=bob", #"{"private":false}"#)

      let everything = try await board.read()
      #expect(everything.columns.flatMap(\.items).map(\.id).sorted() == ["a1", "b1", "s1"])
      for (index, user) in users.enumerated() {
        await remotes[index].reached(remoteVersion: last)
        let truth = try await boardState(client, user: user)
        #expect(await remotes[index].snapshot.sections == truth.columns, "\(user ?? "guest")")
        #expect(await remotes[index].lastError == nil)
      }
      #expect(await remotes[0].snapshot.sections.flatMap(\.items).map(\.id) == ["b1", "s1", "a1"])
      #expect(await remotes[1].snapshot.sections.flatMap(\.items).map(\.id) == ["b1"])
      #expect(await remotes[2].snapshot.sections.flatMap(\.items).map(\.id) == ["b1"])
      // No message to Bob or the guest ever named Alice's private card, nor Bob's to the others while
      // it was private.
      for text in await received[1].texts + received[2].texts {
        // The card's id as JSON names it: a bare "a1" could be part of the random stream id.
        #expect(!text.contains(#""a1""#) && !text.contains("Alice secret"), "\(text)")
      }
      let toOthers = await received[0].texts + received[2].texts
      #expect(!toOthers.contains { $0.contains("Bob secret") && $0.contains(#""owner":"bob""#) })
      for task in tasks { task.cancel() }
    }
  }

  @Test("a search is a live query within the user's scope; a bad one is an error and the connection goes on")
  func search() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      try await send(client, .post, "/api/cards", #"{"id":"p1","title":"Plan the trip","column":"todo"}"#)
      try await send(client, .post, "/api/cards", #"{"id":"x1","title":"Buy milk","column":"doing"}"#)
      let query = WireQueryRequest("search", ["text": .string("PLAN")])
      let remote = RemoteDataSource<Column>(query: query)
      let received = Received()
      let task = follow(remote, client: client, received: received, user: "bob")
      await remote.reached(remoteVersion: 2)
      try await send(
        client, .post, "/api/cards?user=alice",
        #"{"id":"a1","title":"plan b","column":"todo","private":true}"#)
      try await send(
        client, .post, "/api/cards?user=bob",
        #"{"id":"b1","title":"Bob's plán","column":"done","private":true}"#)
      try await send(client, .patch, "/api/cards/x1", #"{"title":"Plan the milk"}"#)
      let (_, body) = try await send(client, .delete, "/api/cards/p1")
      await remote.reached(remoteVersion: version(of: body)!)
      #expect(await remote.snapshot.sections.map { $0.items.map(\.id) } == [[], ["x1"], ["b1"]])
      #expect(await received.types.first == "reset")
      task.cancel()

      // A bad search is an error message; the same connection then subscribes.
      try await client.ws("/live?user=bob") { inbound, outbound, _ in
        let long = String(repeating: "x", count: maxSearch + 1)
        for request in [
          WireQueryRequest("search", ["text": .string(long)]),
          WireQueryRequest("search", ["text": .integer(1)]),
          WireQueryRequest("sort"), WireQueryRequest("search", ["text": .string("milk")]),
        ] {
          let message = WireMessage<Column>.subscribe(stream: nil, from: nil, query: request)
          try await outbound.write(.text(String(decoding: WireCoder().encode(message), as: UTF8.self)))
        }
        var codes: [String] = []
        for try await message in inbound.messages(maxSize: 1 << 20) {
          guard case .text(let text) = message else { continue }
          let decoded: WireMessage<Column> = try WireCoder().decode(Data(text.utf8))
          if case .error(let error) = decoded { codes.append(error.code.rawValue) }
          if case .reset(_, _, let snapshot) = decoded {
            #expect(snapshot.sections.flatMap(\.items).map(\.id) == ["x1"])
            break
          }
        }
        #expect(codes == ["invalidParameters", "invalidParameters", "unknownQuery"])
      }
    }
  }

  @Test("a top query follows the first cards of each column: what changes below them is never sent")
  func top() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      for (id, column) in [("t1", "todo"), ("t2", "todo"), ("t3", "todo"), ("d1", "doing")] {
        try await send(
          client, .post, "/api/cards", #"{"id":"\#(id)","title":"\#(id)","column":"\#(column)"}"#)
      }
      let remote = RemoteDataSource<Column>(query: WireQueryRequest("top", ["limit": .integer(2)]))
      let received = Received()
      let task = follow(remote, client: client, received: received, user: nil)
      await remote.reached(remoteVersion: 4)
      #expect(await remote.snapshot.sections.map { $0.items.map(\.id) } == [["t1", "t2"], ["d1"], []])
      try await send(client, .patch, "/api/cards/t3", #"{"title":"Below the top"}"#)  // 5: not sent
      try await send(client, .post, "/api/cards/t3/move", #"{"column":"todo","before":"t1"}"#)  // 6
      let (_, body) = try await send(
        client, .post, "/api/cards", #"{"id":"d2","title":"d2","column":"doing"}"#)
      await remote.reached(remoteVersion: version(of: body)!)
      #expect(
        await remote.snapshot.sections.map { $0.items.map(\.id) } == [["t3", "t1"], ["d1", "d2"], []])
      var versions: [Int] = []
      for text in await received.texts {
        let message: WireMessage<Column> = try WireCoder().decode(Data(text.utf8))
        if case .batch(let batch) = message { versions.append(batch.to) }
      }
      #expect(
        !versions.contains(5) && versions.last == 7, "the edit below the top was never sent: \(versions)")
      task.cancel()
    }
  }

  @Test("edits over the WebSocket: shown at once, stored, seen by another client; a refused one rolls back")
  func editsOverTheSocket() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      try await send(client, .post, "/api/cards", #"{"id":"t1","title":"One","column":"todo"}"#)
      try await send(client, .post, "/api/cards", #"{"id":"t2","title":"Two","column":"todo"}"#)
      let (writer, reader) = (RemoteDataSource<Column>(), RemoteDataSource<Column>())
      let tasks = [
        followWriting(writer, client: client, user: "ann"),
        followWriting(reader, client: client, user: "bob"),
      ]
      #expect(await writer.reached(remoteVersion: 2))
      let moved = try await writer.edit([.move("t2", .before("t1"))])
      let added = try await writer.edit([.insert([Card(id: "t3", title: "Three")], .after("t2"))])
      let renamed = try await writer.edit([.replace(Card(id: "t1", title: "One, renamed"))])
      let mine = try await writer.edit([
        .insert([Card(id: "p1", title: "Mine", owner: "ann")], .end(of: "done"))
      ])
      #expect([moved, added, renamed, mine] == [Int]([3, 4, 5, 6]))
      #expect(await reader.reached(remoteVersion: renamed))
      let (shown, read) = (await writer.snapshot, await reader.snapshot)
      #expect(shown.sections.map { $0.items.map(\.id) } == [["t2", "t3", "t1"], [], ["p1"]])
      #expect(
        read.sections.map { $0.items.map(\.id) } == [["t2", "t3", "t1"], [], []], "not ann's private card")
      #expect(read.sections[0].items[2].title == "One, renamed")

      // Refused by the server (an empty title): rolled back, with the board's reason.
      do throws(WireError) {
        _ = try await writer.edit([.replace(Card(id: "t1", title: "  "))])
        Issue.record("an empty title was made")
      } catch {
        #expect(error.code == .invalidEdit && error.detail.hasPrefix("invalid:"), "\(error)")
      }
      #expect(await writer.snapshot.sections[0].items[2].title == "One, renamed", "rolled back")
      await #expect(throws: WireError.self) { try await writer.edit([.delete(["p1", "t1"])]) }
      let truth = try await boardState(client, user: "ann")
      #expect(truth.columns == (await writer.snapshot).sections, "the database holds what the client shows")
      #expect(await writer.pendingEditCount == 0)
      for task in tasks { task.cancel() }
    }
  }

  @Test("a patch over the WebSocket changes the title alone; one naming anything else is refused")
  func patchesOverTheSocket() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      try await send(client, .post, "/api/cards", #"{"id":"t1","title":"One","column":"todo"}"#)
      try await send(
        client, .post, "/api/cards?user=ann", #"{"id":"p1","title":"Mine","column":"todo","private":true}"#)
      let writer = RemoteDataSource<Column>()
      let task = followWriting(writer, client: client, user: "ann")
      #expect(await writer.reached(remoteVersion: 2))
      // Pending while another writer moves the card: the patch keeps the move.
      let id = try await writer.submit([.patch("p1", ["title": "Mine, renamed"])])
      try await send(client, .post, "/api/cards/p1/move?user=ann", #"{"column":"done"}"#)
      _ = try await writer.answer(to: id)
      #expect(
        await writer.reached(remoteVersion: await board.source.version.number), "the patch and the move")
      let shown = await writer.snapshot
      #expect(
        shown.item(withID: "p1") == Card(id: "p1", title: "Mine, renamed", owner: "ann"), "still private")
      #expect(shown.position(ofItem: "p1")?.section == 2, "the move is kept")

      for patch: WirePatch in [["owner": nil], ["title": "x", "owner": "bob"], ["title": 7]] {
        do throws(WireError) {
          _ = try await writer.edit([.patch("p1", patch)])
          Issue.record("\(patch) was made")
        } catch {
          // Refused by the board, or by the client itself when the patched card does not decode.
          #expect(
            error.code == .invalidEdit
              && (error.detail.hasPrefix("invalid:") || error.detail.hasPrefix("invalidPatch")), "\(error)")
        }
      }
      let truth = try await boardState(client, user: "ann")
      #expect(truth.columns == (await writer.snapshot).sections, "the database holds what the client shows")
      task.cancel()
    }
  }

  @Test("a user cannot see, edit, move, delete or anchor on another's private card: the same 404 as no card")
  func privateCardsRefused() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      try await send(client, .post, "/api/cards", #"{"id":"s","title":"S","column":"todo"}"#)
      try await send(
        client, .post, "/api/cards?user=alice", #"{"id":"a","title":"A","column":"todo","private":true}"#)
      let before = try await boardState(client)
      let cases: [(HTTPRequest.Method, String, String?, Int, String)] = [
        (.patch, "/api/cards/a?user=bob", #"{"title":"Mine"}"#, 404, "no card a"),
        (.patch, "/api/cards/a", #"{"private":false}"#, 404, "no card a"),
        (.post, "/api/cards/a/move?user=bob", #"{"column":"done"}"#, 404, "no card a"),
        (.post, "/api/cards/s/move?user=bob", #"{"column":"todo","before":"a"}"#, 404, "no card a"),
        (.post, "/api/cards?user=bob", #"{"title":"B","column":"todo","before":"a"}"#, 404, "no card a"),
        (.delete, "/api/cards/a?user=bob", nil, 404, "no card a"),
        (.post, "/api/cards", #"{"title":"B","column":"todo","private":true}"#, 400, "needs a user"),
        (.patch, "/api/cards/s", #"{}"#, 400, "names a title"),
        (.post, "/api/cards?user=al%20ice", #"{"title":"B","column":"todo"}"#, 400, "user name"),
        (.get, "/api/board?user=" + String(repeating: "u", count: 33), nil, 400, "user name"),
      ]
      for (method, uri, json, status, detail) in cases {
        let (got, body) = try await send(client, method, uri, json)
        #expect(got == status, "\(method) \(uri) \(json ?? ""): \(body)")
        #expect(body.contains(detail), "\(method) \(uri): \(body)")
      }
      #expect(try await boardState(client, user: "bob").columns.flatMap(\.items).map(\.id) == ["s"])
      let after = try await boardState(client)
      #expect(after.columns == before.columns && after.version == before.version)
    }
  }

  @Test("the board survives a restart from its SQLite file, in the same stream at the same version")
  func persists() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("board-\(UUID()).sqlite").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let first = try Board(path: path)
    _ = try await first.create(id: "a", title: "A", column: "todo", before: nil)
    _ = try await first.create(id: "b", title: "B", column: "todo", before: "a")
    _ = try await first.move("a", to: "done", before: nil)
    let second = try Board(path: path)
    #expect(second.stream == first.stream)
    #expect(
      await second.source.version.number == 3, "versions go on: a client at 3 resumes, an older one resets")
    #expect(await second.source.snapshot.sections == (try await first.read()).columns)
    #expect(await second.source.snapshot.sections.map { $0.items.map(\.id) } == [["b"], [], ["a"]])
  }

  @Test(
    "ids a URL path cannot carry, control characters, line separators, and look-alike Unicode are refused or normalized"
  )
  func hostileInput() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      for id in ["é", "a/b", "a?b", "a#b", "a%20b", "a b", "a\\u0000b", String(repeating: "x", count: 65)] {
        let (status, body) = try await send(
          client, .post, "/api/cards", #"{"id":"\#(id)","title":"T","column":"todo"}"#)
        #expect(status == 400 && body.contains("an id has"), "\(id): \(status) \(body)")
      }
      for title in [
        "a\\u0000b", "line\\nbreak", "tab\\tbed", "line\\u2028separator", "paragraph\\u2029separator",
      ] {
        let (status, body) = try await send(
          client, .post, "/api/cards", #"{"id":"t","title":"\#(title)","column":"todo"}"#)
        #expect(status == 400 && body.contains("control characters"), "\(title): \(status) \(body)")
      }
      #expect(try await boardState(client).columns.allSatisfy(\.items.isEmpty), "nothing was written")
      // A decomposed é is stored precomposed: the database, the answer and the live clients agree.
      let (status, body) = try await send(
        client, .post, "/api/cards", #"{"id":"cafe","title":"Cafe\u0301","column":"todo"}"#)
      #expect(status == 201, "\(body)")
      let stored = try await board.database.read { db in
        try String.fetchOne(db, sql: "SELECT title FROM card WHERE id = 'cafe'")
      }
      #expect(stored.map { Array($0.unicodeScalars) } == Array("Caf\u{E9}".unicodeScalars))
      #expect(await board.source.snapshot.sections[0].items.map(\.title) == ["Caf\u{E9}"])
    }
  }

  @Test(
    "rows the source cannot hold as they are (ids equal to Swift, written behind its back) do not stop a restart"
  )
  func restartsOverLookAlikeIDs() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("alike-\(UUID()).sqlite").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    _ = try Board(path: path)
    let other = try DatabaseQueue(path: path)
    try await other.write { db in
      try db.execute(
        sql:
          "INSERT INTO card (id, title, columnID, position) VALUES (?, 'A', 'todo', 0), (?, 'B', 'todo', 1)",
        arguments: ["\u{E9}", "e\u{301}"])
    }
    try other.close()
    let board = try Board(path: path)
    #expect(await board.source.snapshot.sections[0].items.map(\.title) == ["A"])
    #expect(try await board.read().columns[0].items.map(\.title) == ["A"])
  }

  @Test(
    "a reader of the file never fails a write; a writer holding it past the timeout gets 503 and Retry-After")
  func busyDatabase() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("busy-\(UUID()).sqlite").path
    defer {
      for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let board = try Board(path: path)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      let other = try DatabaseQueue(path: path)
      // A reader in the middle of a transaction: WAL lets the write through.
      var holder = try await holding(other, "BEGIN; SELECT COUNT(*) FROM card")
      var (status, body) = try await send(
        client, .post, "/api/cards", #"{"id":"a","title":"A","column":"todo"}"#)
      #expect(status == 201, "\(body)")
      holder.release()
      // A writer holding the file's write lock past the busy timeout.
      holder = try await holding(other, "BEGIN IMMEDIATE")
      let before = try await board.read()
      let response = try await client.execute(
        uri: "/api/cards", method: .post, headers: [.contentType: "application/json"],
        body: ByteBuffer(string: #"{"id":"b","title":"B","column":"todo"}"#)
      ) { response in (response.status.code, response.headers[.retryAfter], String(buffer: response.body)) }
      #expect(response.0 == 503 && response.1 == "1" && response.2.contains("busy"), "\(response)")
      #expect(!response.2.contains("Error") && !response.2.contains("SQLITE"), "no internals: \(response.2)")
      let after = try await board.read()
      #expect(after.columns == before.columns && after.version == before.version)
      // The write was prepared in the source, then abandoned when the database refused: nothing shows it.
      #expect(await board.source.snapshot.sections == before.columns)
      holder.release()
      (status, body) = try await send(client, .post, "/api/cards", #"{"id":"b","title":"B","column":"todo"}"#)
      #expect(status == 201, "\(body)")
      try other.close()
    }
  }

  @Test(
    "a message over 16 KiB ends its connection and nothing else; a reset over 16 KiB still reaches a client")
  func frameLimit() async throws {
    let board = try Board(path: nil)
    for index in 0..<120 {
      _ = try await board.create(
        id: "c\(index)", title: String(repeating: "long title ", count: 18), column: "todo", before: nil)
    }
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      _ = try? await client.ws("/live") { inbound, outbound, _ in
        try await outbound.write(.text(String(repeating: " ", count: maxInbound + 1)))
        for try await _ in inbound.messages(maxSize: 1 << 20) {}
      }
      let remote = RemoteDataSource<Column>()
      let task = follow(remote, client: client, received: Received())
      await remote.reached(remoteVersion: 120)
      let truth = try await board.read()
      #expect(await remote.snapshot.sections == truth.columns)
      task.cancel()
    }
  }

  @Test("a board stored before private cards existed opens with its cards shared")
  func migratesOldBoards() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("old-\(UUID()).sqlite").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let old = try DatabaseQueue(path: path)
    try await old.write { db in
      try db.execute(
        sql: """
          CREATE TABLE card (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, columnID TEXT NOT NULL,
            position INTEGER NOT NULL);
          INSERT INTO card VALUES ('a', 'A', 'doing', 0);
          """)
    }
    try old.close()
    let board = try Board(path: path)
    #expect(await board.source.snapshot.sections[1].items == [Card(id: "a", title: "A")])
    _ = try await board.create(id: "p", title: "P", column: "todo", before: nil, user: "ann", isPrivate: true)
    #expect(try await board.read(visibleTo: "bo").columns.flatMap(\.items).map(\.id) == ["a"])
  }

  @Test(
    "rows written behind the board's back: the group is refused, the source reloads from the database once, and each write is made again or refused on its own"
  )
  func mirrorFailureReloads() async throws {
    let gate = StoringGate()
    let board = try gatedBoard(gate)
    await gate.open()
    _ = try await board.create(id: "a", title: "A", column: "todo", before: nil)
    _ = try await board.create(id: "b", title: "B", column: "todo", before: nil)
    // A row the source never saw, and one it has that the database lost.
    try await board.database.write { db in
      try db.execute(sql: "INSERT INTO card (id, title, columnID, position) VALUES ('x', 'X', 'doing', 0)")
      try db.execute(sql: "DELETE FROM card WHERE id = 'b'")
    }
    let before = try await board.read().version
    // Creating "x" meets the stored row: the group is refused, the source reloaded, and the write planned
    // again is a duplicate.
    await #expect(throws: BoardError(status: 409, code: "duplicateID", detail: "card x exists")) {
      try await board.create(id: "x", title: "Mine", column: "todo", before: nil)
    }
    #expect(await board.reloads == 1)
    let reloaded = try await board.read()
    #expect(reloaded.version > before, "the reload is a version of its own")
    #expect(await board.source.snapshot.sections == reloaded.columns)
    #expect(reloaded.columns.map { $0.items.map(\.id) } == [["a"], ["x"], []])
    let (card, _) = try await board.rename("x", title: "Renamed")
    #expect(card.title == "Renamed")
    // The database lost "a" too: renaming it reloads again, and it is unknown.
    try await board.database.write { db in try db.execute(sql: "DELETE FROM card WHERE id = 'a'") }
    await #expect(throws: BoardError.unknownCard("a")) { try await board.rename("a", title: "Gone") }
    #expect(await board.reloads == 2)
    #expect(await board.source.snapshot.sections == (try await board.read()).columns)
  }
}

/// Sends `edit` (a format-2 edit message's JSON) as `user` over a WebSocket of its own and returns the
/// text of its answer (`confirmed` or `refused`).
func answer(to edit: String, as user: String, client: any TestClientProtocol) async throws -> String {
  let answers = Received()
  try await client.ws("/live?user=\(user)") { inbound, outbound, _ in
    try await outbound.write(.text(edit))
    for try await message in inbound.messages(maxSize: 1 << 20) {
      guard case .text(let text) = message else { continue }
      if text.contains(#""type":"confirmed""#) || text.contains(#""type":"refused""#) {
        await answers.recordText(text)
        break
      }
    }
  }
  return await answers.texts.first ?? ""
}

/// A format-2 edit message with `id` inserting card `card` (private to its writer when `owned`) in `todo`,
/// made by a client that held version `base` when given.
func insertEdit(_ id: String, card: String, owner: String? = nil, base: Int? = nil) -> String {
  let owned = owner.map { #","owner":"\#($0)""# } ?? ""
  let held = base.map { #""base":\#($0),"# } ?? ""
  return
    #"{"format":"simplesource","formatVersion":2,"type":"edit",\#(held)"id":"\#(id)","operations":[{"op":"insert","#
    + #""items":[{"id":"\#(card)","title":"\#(card)"\#(owned)}],"section":"todo"}]}"#
}

/// A format-2 edit message with `id` renaming card `card` to `title`, made at version `base`.
func renameEdit(_ id: String, card: String, title: String, base: Int) -> String {
  #"{"format":"simplesource","formatVersion":2,"type":"edit","base":\#(base),"id":"\#(id)","#
    + #""operations":[{"op":"replace","item":{"id":"\#(card)","title":"\#(title)"}}]}"#
}

extension LiveBoardTests {
  @Test("two users reusing each other's edit ids: each edit is made and answered as its own user's")
  func answersPerUser() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      let bobs = try await answer(
        to: insertEdit("1", card: "bob-card", owner: "bob"), as: "bob", client: client)
      let alices = try await answer(to: insertEdit("1", card: "alice-card"), as: "alice", client: client)
      #expect(bobs.contains(#""type":"confirmed""#) && bobs.contains(#""version":1"#), "\(bobs)")
      #expect(alices.contains(#""type":"confirmed""#) && alices.contains(#""version":2"#), "\(alices)")
      // bob's refusal (his private card's id taken) is his; alice's edit "2" is hers.
      let bobsRefusal = try await answer(to: insertEdit("2", card: "bob-card"), as: "bob", client: client)
      #expect(
        bobsRefusal.contains(#""type":"refused""#) && bobsRefusal.contains("duplicateID"), "\(bobsRefusal)")
      let alices2 = try await answer(to: insertEdit("2", card: "alice-2"), as: "alice", client: client)
      #expect(alices2.contains(#""type":"confirmed""#) && !alices2.contains("bob-card"), "\(alices2)")
      // A resend is the first answer, for its own user.
      #expect(
        try await answer(to: insertEdit("1", card: "bob-card", owner: "bob"), as: "bob", client: client)
          == bobs)
      let ids = try await board.read().columns.flatMap(\.items).map(\.id)
      #expect(ids == ["bob-card", "alice-card", "alice-2"])
    }
  }

  @Test(
    "the named edit toTop, sent by name and arguments, moves a card above its column's first on the board's state"
  )
  func namedToTop() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      for (index, card) in ["a", "b", "c"].enumerated() {
        _ = try await answer(to: insertEdit("i\(index)", card: card), as: "ann", client: client)
      }
      _ = try await answer(to: insertEdit("i3", card: "bobs", owner: "bob"), as: "bob", client: client)
      func named(_ id: String, _ name: String, _ arguments: String) -> String {
        #"{"format":"simplesource","formatVersion":2,"type":"edit","id":"\#(id)","operations":[{"op":"named","#
          + #""name":"\#(name)","arguments":\#(arguments)}]}"#
      }
      let moved = try await answer(to: named("n1", "toTop", #"{"card":"c"}"#), as: "ann", client: client)
      #expect(moved.contains(#""type":"confirmed""#), "\(moved)")
      #expect(try await board.read().columns[0].items.map(\.id) == ["c", "a", "b", "bobs"])
      // bob's private card is not ann's to see: on top for bob, it goes above what he sees.
      _ = try await answer(to: named("n2", "toTop", #"{"card":"bobs"}"#), as: "bob", client: client)
      #expect(try await board.read().columns[0].items.map(\.id) == ["bobs", "c", "a", "b"])
      for (id, name, arguments, reason) in [
        ("n3", "toBottom", #"{"card":"a"}"#, "unknownEdit"),
        ("n4", "toTop", #"{"card":7}"#, "invalidArguments"),
        ("n5", "toTop", #"{"card":"bobs"}"#, "unknownCard"),
      ] {
        let refused = try await answer(to: named(id, name, arguments), as: "ann", client: client)
        #expect(refused.contains(#""type":"refused""#) && refused.contains(reason), "\(refused)")
      }
      #expect(
        try await board.read().columns[0].items.map(\.id) == ["bobs", "c", "a", "b"], "nothing else made")
    }
  }

  @Test("a replace over the WebSocket that omits the owner keeps the card private")
  func replaceKeepsTheOwner() async throws {
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      _ = try await answer(to: insertEdit("a", card: "mine", owner: "ann"), as: "ann", client: client)
      let replace =
        #"{"format":"simplesource","formatVersion":2,"type":"edit","id":"b","operations":[{"op":"replace","#
        + #""item":{"id":"mine","title":"Renamed"}}]}"#
      let renamed = try await answer(to: replace, as: "ann", client: client)
      #expect(renamed.contains(#""type":"confirmed""#), "\(renamed)")
      let card = try await board.read().columns.flatMap(\.items).first
      #expect(card == Card(id: "mine", title: "Renamed", owner: "ann"))
      #expect(try await board.read(visibleTo: "bob").columns.allSatisfy(\.items.isEmpty), "bob sees nothing")
    }
  }

  @Test(
    "a write resent with its Idempotency-Key, after a restart too, gets its first status and version and is made once; another body under the key is 422"
  )
  func idempotentWrites() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("board-\(UUID()).sqlite").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    /// Sends a write with `key`; returns its status, body and whether it was replayed.
    @Sendable func write(
      _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ json: String?,
      key: String
    ) async throws -> (status: Int, body: String, replayed: Bool) {
      try await client.execute(
        uri: uri, method: method,
        headers: [.contentType: "application/json", HTTPField.Name("Idempotency-Key")!: key],
        body: json.map { ByteBuffer(string: $0) }
      ) { response in
        (
          response.status.code, String(buffer: response.body),
          response.headers[HTTPField.Name("Idempotent-Replayed")!] == "true"
        )
      }
    }
    let create = #"{"title":"Call the bank","column":"todo"}"#
    let first = try Board(path: path)
    let (created, deleted) = try await makeApplication(board: first, port: 0, logger: Self.logger).test(.live)
    {
      client in
      // A create with no id: made once, however often it is sent with its key.
      let created = try await write(client, .post, "/api/cards?user=ann", create, key: "k-create")
      #expect(created.status == 201 && !created.replayed, "\(created)")
      let again = try await write(client, .post, "/api/cards?user=ann", create, key: "k-create")
      #expect(again.status == 201 && again.replayed && version(of: again.body) == version(of: created.body))
      #expect(
        try await boardState(client, user: "ann").columns.flatMap(\.items).count {
          $0.title == "Call the bank"
        } == 1)
      // Another body under the same key: refused, nothing made.
      let other = try await write(
        client, .post, "/api/cards?user=ann", #"{"title":"X","column":"todo"}"#, key: "k-create")
      #expect(other.status == 422 && other.body.contains("idempotencyKeyReused"), "\(other)")
      // Another user's key is theirs: bob's k-create is a write of his own.
      let bobs = try await write(client, .post, "/api/cards?user=bob", create, key: "k-create")
      #expect(bobs.status == 201 && !bobs.replayed)
      let id = try #require(
        (try? JSONDecoder().decode(WriteBody.self, from: Data(created.body.utf8)))?.card?.id)
      let deleted = try await write(client, .delete, "/api/cards/\(id)?user=ann", nil, key: "k-delete")
      #expect(deleted.status == 200 && !deleted.replayed, "\(deleted)")
      return (created, deleted)
    }
    // Restarted from the file: the resent delete gets its first answer, not 404 for its own delete.
    let second = try Board(path: path)
    try await makeApplication(board: second, port: 0, logger: Self.logger).test(.live) { client in
      let createdAgain = try await write(client, .post, "/api/cards?user=ann", create, key: "k-create")
      #expect(createdAgain.replayed && version(of: createdAgain.body) == version(of: created.body))
      let deletedCard = try #require(
        (try? JSONDecoder().decode(WriteBody.self, from: Data(created.body.utf8)))?.card?.id)
      #expect(
        !(try await boardState(client, user: "ann").columns.flatMap(\.items).contains { $0.id == deletedCard })
      )
      let resent = try await write(
        client, .delete, "/api/cards/\(deletedCard)?user=ann", nil, key: "k-delete")
      #expect(resent.status == 200 && resent.replayed, "\(resent)")
      #expect(version(of: resent.body) == version(of: deleted.body))
      // Without a key the same delete is made again: 404, the card is gone.
      let (status, _) = try await send(client, .delete, "/api/cards/\(deletedCard)?user=ann")
      #expect(status == 404)
    }
  }

  @Test(
    "an edit sent again after the server restarted from its file gets its first answer and is not made twice; another edit under its id is refused"
  )
  func answersSurviveARestart() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("board-\(UUID()).sqlite").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let first = try Board(path: path)
    let (inserted, renamed): (String, String) = try await makeApplication(
      board: first, port: 0, logger: Self.logger
    ).test(.live) { client in
      let inserted = try await answer(to: insertEdit("c-1", card: "a", base: 0), as: "ann", client: client)
      let renamed = try await answer(
        to: renameEdit("c-2", card: "a", title: "First", base: 1), as: "ann", client: client)
      return (inserted, renamed)
    }
    #expect(inserted.contains(#""version":1"#) && renamed.contains(#""version":2"#), "\(inserted) \(renamed)")
    // Another writer renames the card; then the server restarts, and ann's client sends both edits again.
    _ = try await first.rename("a", title: "Second")
    let second = try Board(path: path)
    try await makeApplication(board: second, port: 0, logger: Self.logger).test(.live) { client in
      #expect(
        try await answer(to: insertEdit("c-1", card: "a", base: 0), as: "ann", client: client) == inserted)
      let again = try await answer(
        to: renameEdit("c-2", card: "a", title: "First", base: 1), as: "ann", client: client)
      #expect(again == renamed, "the first answer, from the file")
      // A client that forgot what it sent and counts its ids again: another edit under c-2, refused from
      // the file (its fingerprint is not the recorded one), not made, not told c-2's answer.
      let reused = try await answer(
        to: renameEdit("c-2", card: "a", title: "Reused", base: 3), as: "ann", client: client)
      #expect(reused.contains(#""type":"refused""#) && reused.contains("editIDReused"), "\(reused)")
      // bob's c-2 is his own edit.
      let bobs = try await answer(
        to: renameEdit("c-2", card: "a", title: "Bob's", base: 3), as: "bob", client: client)
      #expect(bobs.contains(#""type":"confirmed""#) && bobs.contains(#""version":4"#), "\(bobs)")
    }
    let cards = try await second.read().columns.flatMap(\.items)
    #expect(cards == [Card(id: "a", title: "Bob's")], "made once each: ann's rename was not made again")
  }

  @Test("an edit older than the answers kept is refused as expired, and the board is unchanged")
  func expiredAnswer() async throws {
    let board = try Board(path: nil, answerRetention: 2)
    try await makeApplication(board: board, port: 0, logger: Self.logger).test(.live) { client in
      let first = try await answer(to: insertEdit("c-1", card: "a", base: 0), as: "ann", client: client)
      #expect(first.contains(#""type":"confirmed""#), "\(first)")
      for index in 2...4 {
        _ = try await answer(
          to: renameEdit("c-\(index)", card: "a", title: "T\(index)", base: index - 1), as: "ann",
          client: client)
      }
      let before = try await board.read()
      // c-1's answer is still in this instance's memory; a title change made before the horizon is not.
      let stale = try await answer(
        to: renameEdit("c-9", card: "a", title: "Stale", base: 1), as: "ann", client: client)
      #expect(stale.contains(#""type":"refused""#) && stale.contains(#""code":"editExpired""#), "\(stale)")
      let after = try await board.read()
      #expect(after.version == before.version && after.columns == before.columns)
      let fresh = try await answer(
        to: renameEdit("c-10", card: "a", title: "Fresh", base: 4), as: "ann", client: client)
      #expect(fresh.contains(#""type":"confirmed""#) && fresh.contains(#""version":5"#), "\(fresh)")
    }
  }
}
