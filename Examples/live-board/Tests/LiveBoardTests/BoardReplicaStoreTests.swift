// A Swift client of the board that keeps its replica in its own SQLite database through GRDB: it starts
// again from there (the state at once, a resume rather than a reset, its unanswered edits sent again and
// made once), and a damaged row is a typed error and a clean start.

import Foundation
import class GRDB.DatabaseQueue
import Hummingbird
import HummingbirdTesting
import HummingbirdWSTesting
import SimpleSource
import Testing

@testable import LiveBoard

@Suite("A client's replica in SQLite", .timeLimit(.minutes(2)))
struct BoardReplicaStoreTests {
  static func temporaryPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("replica-\(UUID()).sqlite").path
  }

  @Test(
    "a client started again from its database shows what it held, resumes, and its pending edit is made once")
  func restartsFromTheDatabase() async throws {
    let path = Self.temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let board = try Board(path: nil)
    try await makeApplication(board: board, port: 0, logger: LiveBoardTests.logger).test(.live) { client in
      try await send(client, .post, "/api/cards", #"{"id":"t1","title":"One","column":"todo"}"#)
      let first = RemoteDataSource<Column>(store: try BoardReplicaStore(path: path, compactingAfter: 256))
      let following = followWriting(first, client: client, user: "ann")
      #expect(await first.reached(remoteVersion: 1))
      _ = try await first.edit([.insert([Card(id: "t2", title: "Two")], .after("t1"))])
      for index in 0..<8 {
        try await send(client, .patch, "/api/cards/t1", #"{"title":"One \#(index)"}"#)
      }
      #expect(await first.reached(remoteVersion: 10))
      following.cancel()
      _ = await following.result
      // Offline now: an edit made meanwhile is kept in the database, and shown.
      let pending = try await first.submit([.move("t2", .before("t1"))])
      let held = await first.snapshot
      #expect(held.sections[0].items.map(\.id) == ["t2", "t1"])

      // The app starts again: the replica is read from its database before any connection.
      let second = RemoteDataSource<Column>(store: try BoardReplicaStore(path: path))
      #expect(await second.storeError == nil)
      #expect(await second.snapshot == held, "shown at once, with the pending edit")
      let restarted = await second.remoteVersion
      #expect(restarted == 10 && second.clientID == first.clientID)
      let received = Received()
      let resumed = Task {
        try await client.ws("/live?user=ann", configuration: .init(maxFrameSize: 1 << 22)) {
          inbound, outbound, _ in
          let messages = inbound.messages(maxSize: 1 << 22).compactMap { message -> WireMessage<Column>? in
            guard case .text(let text) = message else { return nil }
            let decoded: WireMessage<Column> = try WireCoder().decode(Data(text.utf8))
            await received.record(decoded.typeName)
            return decoded
          }
          try await second.follow(messages) { message in
            try await outbound.write(.text(String(decoding: WireCoder().encode(message), as: UTF8.self)))
          }
        }
      }
      let version = try await second.answer(to: pending)
      #expect(version == 11)
      #expect(await second.reached(remoteVersion: 11))
      let types = await received.types
      #expect(types.first == "resumed" && !types.contains("reset"), "\(types)")
      let truth = try await boardState(client, user: "ann")
      #expect(truth.columns == (await second.snapshot).sections)
      #expect(truth.columns[0].items.map(\.id) == ["t2", "t1"] && truth.version == 11, "made once")
      resumed.cancel()
    }
  }

  @Test("a state row that does not decode is a damaged store: the client starts from nothing and clears it")
  func damagedRow() async throws {
    let path = Self.temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let store = try BoardReplicaStore(path: path)
    let remote = RemoteDataSource<Column>(store: store)
    try await remote.receive(
      .reset(
        stream: "board-x", version: 3,
        snapshot: try Snapshot([Column(id: "todo", header: "To do", items: [])])))
    try await store.database.write { db in
      try db.execute(sql: "UPDATE replica_state SET document = x'7b7d'")
    }
    let again = RemoteDataSource<Column>(store: try BoardReplicaStore(path: path))
    #expect(await again.storeError?.reason == .damaged)
    let (version, shown) = (await again.remoteVersion, await again.snapshot)
    #expect(version == nil && shown.sections.isEmpty)
    let (kept, journal) = try BoardReplicaStore(path: path).load()
    #expect(kept?.version == nil && journal.isEmpty, "cleared for a clean start")
  }
}
