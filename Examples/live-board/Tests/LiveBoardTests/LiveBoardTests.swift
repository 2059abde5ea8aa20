// The live board end to end: HTTP writes, WebSocket clients following with RemoteDataSource, resume and
// reset after a drop, and bad requests and bad WebSocket messages that change nothing.

import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import Logging
import SimpleSource
import Testing

@testable import LiveBoard

/// What one WebSocket connection received: the type of each message, in order.
actor Received {
  var types: [String] = []
  var errors: [String] = []
  func record(_ type: String) { types.append(type) }
  func recordError(_ code: String) { errors.append(code) }
}

/// A Swift client: follows `/live` into `remote` until its task is cancelled.
func follow(
  _ remote: RemoteDataSource<Column>, client: any TestClientProtocol, received: Received
) -> Task<Void, any Error> {
  Task {
    try await client.ws("/live", configuration: .init(maxFrameSize: 1 << 22)) { inbound, outbound, _ in
      let request = await remote.subscribeRequest
      try await outbound.write(.text(String(decoding: WireCoder().encode(request), as: UTF8.self)))
      for try await message in inbound.messages(maxSize: 1 << 22) {
        guard case .text(let text) = message else { continue }
        let decoded: WireMessage<Column> = try WireCoder().decode(Data(text.utf8))
        await received.record(decoded.typeName)
        try await remote.receive(decoded)
      }
    }
  }
}

/// The board as `GET /api/board` returns it.
func boardState(_ client: any TestClientProtocol) async throws -> BoardBody {
  try await client.execute(uri: "/api/board", method: .get) { response in
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

@Suite("Live board")
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
        (.post, "/api/cards", #"{"title":7,"column":"todo"}"#, 400, "title must be"),
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

  @Test("the board survives a restart from its SQLite file, under a new stream name")
  func persists() async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("board-\(UUID()).sqlite").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let first = try Board(path: path)
    _ = try await first.create(id: "a", title: "A", column: "todo", before: nil)
    _ = try await first.create(id: "b", title: "B", column: "todo", before: "a")
    _ = try await first.move("a", to: "done", before: nil)
    let second = try Board(path: path)
    #expect(second.stream != first.stream)
    #expect(await second.source.snapshot.sections == (try await first.read()).columns)
    #expect(await second.source.snapshot.sections.map { $0.items.map(\.id) } == [["b"], [], ["a"]])
  }

  @Test("a write the source refuses (the file was written behind its back) reloads it from the database")
  func mirrorFailureReloads() async throws {
    let board = try Board(path: nil)
    _ = try await board.create(id: "a", title: "A", column: "todo", before: nil)
    // A row the source never saw: renaming it commits in the database, and the source cannot replace it.
    try await board.database.write { db in
      try db.execute(sql: "INSERT INTO card (id, title, columnID, position) VALUES ('x', 'X', 'doing', 0)")
    }
    let before = await board.source.version
    let (card, version) = try await board.rename("x", title: "Renamed")
    #expect(card.title == "Renamed")
    #expect(version > before, "the reload is a version of its own")
    #expect(await board.source.snapshot.sections == (try await board.read()).columns)
    #expect(await board.source.snapshot.sections[1].items == [Card(id: "x", title: "Renamed")])
  }
}
