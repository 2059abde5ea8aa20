// A remote source following a BasicDataSource through encoded messages: convergence, resume, reset, refusal.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("Remote data source", .timeLimit(.minutes(30)))
struct RemoteDataSourceTests {
  typealias Remote = RemoteDataSource<TestSection>
  static let coder = WireCoder()

  /// One connection: the server's feed for the remote's request, encoded to bytes and decoded again.
  struct Connection {
    let feed: WireFeed<TestSection>
    let following: Task<Void, any Error>

    init(server: BasicDataSource<TestSection>, stream: String, remote: Remote) async {
      guard case .subscribe(let requested, let from, _) = await remote.subscribeRequest else {
        preconditionFailure("a remote's request is a subscribe")
      }
      let feed = await server.wireFeed(stream: stream, request: (requested, from))
      self.feed = feed
      let bytes = AsyncStream<Data> { continuation in
        let pump = Task { [feed] in
          for await message in feed { continuation.yield(RemoteDataSourceTests.coder.encode(message)) }
          continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
      }
      following = Task {
        try await remote.follow(
          bytes.map { try RemoteDataSourceTests.coder.decode($0, as: TestSection.self) })
      }
    }

    /// Drops the connection and waits for the remote to notice.
    func drop() async {
      feed.cancel()
      _ = await following.result
    }
  }

  static func converge(_ remote: Remote, to server: BasicDataSource<TestSection>) async {
    await server.settled()
    await remote.reached(remoteVersion: await server.offeredVersion)
    #expect(await remote.snapshot == server.snapshot)
  }

  @Test("a remote follows a changing source exactly, and re-serves valid batches to its own subscribers")
  func converges() async throws {
    let server = try BasicDataSource(sections: layout("A: a b c | B: d e"))
    let remote = Remote()
    let connection = await Connection(server: server, stream: "s1", remote: remote)
    await Self.converge(remote, to: server)
    let local = await remote.subscribe()
    var random = SeededGenerator(seed: RandomTestSettings.current(defaultCases: 1, casesVariable: "_").seed)
    for step in 0..<40 {
      let items = await server.snapshot.sections.flatMap(\.items)
      switch Int.random(in: 0..<5, using: &random) {
      case 0: try await server.appendItems([TestItem("n\(step)")], toSection: "A")
      case 1: if let item = items.randomElement(using: &random) { try await server.deleteItems([item.id]) }
      case 2:
        if let item = items.randomElement(using: &random), let anchor = items.randomElement(using: &random),
          item != anchor
        {
          try await server.moveItem(item.id, before: anchor.id)
        }
      case 3:
        if var item = items.randomElement(using: &random) {
          item.version += 1
          try await server.replaceItem(item)
        }
      default:
        if step % 10 == 4 { try await server.appendSections([TestSection(id: "S\(step)", items: [])]) }
      }
    }
    await Self.converge(remote, to: server)
    let final = await ResumeTests.follow(local, until: await remote.version.number)
    #expect(final == (await server.snapshot))
    await connection.drop()
  }

  @Test("a remote dropped mid-stream resumes from its version: no gap, no duplicate, no reset")
  func resumesAfterDrop() async throws {
    let server = try BasicDataSource(sections: layout("A: a b c"))
    let remote = Remote()
    var connection = await Connection(server: server, stream: "s1", remote: remote)
    try await server.appendItems([TestItem("x")], toSection: "A")
    await Self.converge(remote, to: server)
    await connection.drop()
    let local = await remote.subscribe()
    let before = await remote.remoteVersion
    try await server.deleteItems(["b"])
    try await server.moveItem("x", before: "a")
    connection = await Connection(server: server, stream: "s1", remote: remote)
    guard case .resumed(let stream, let version) = connection.feed.start else {
      Issue.record("expected a resume, got \(connection.feed.start)")
      return
    }
    #expect(stream == "s1" && version == before)
    await Self.converge(remote, to: server)
    #expect(await remote.connectionStart == .resumed(version: version), "the remote knows it resumed")
    // Printed, it reads as text.
    #expect("\(try #require(await remote.connectionStart))" == "resumed from version \(version)")
    #expect("\(RemoteDataSource<TestSection>.ConnectionStart.reset(version: 3))" == "reset at version 3")
    let final = await ResumeTests.follow(local, until: await remote.version.number)
    #expect(final == (await server.snapshot))
    await connection.drop()
  }

  @Test("a remote too far behind, or from another stream, gets a reset and its subscribers a valid batch")
  func resetsWhenForgotten() async throws {
    let server = try BasicDataSource(sections: layout("A: a b c"), history: HistoryLimit(versions: 2))
    let remote = Remote()
    var connection = await Connection(server: server, stream: "s1", remote: remote)
    await Self.converge(remote, to: server)
    await connection.drop()
    let local = await remote.subscribe()
    for step in 1...5 {
      try await server.replaceItem(TestItem("a", version: step))
      await server.settled()
    }
    connection = await Connection(server: server, stream: "s1", remote: remote)
    guard case .reset(_, let resetVersion, _) = connection.feed.start else {
      Issue.record("expected a reset, got \(connection.feed.start)")
      return
    }
    await Self.converge(remote, to: server)
    #expect(await remote.connectionStart == .reset(version: resetVersion), "the remote knows it was reset")
    await connection.drop()

    // A restarted server with a new stream name resets even at a version the remote has seen.
    let restarted = try BasicDataSource(sections: layout("A: c b"))
    connection = await Connection(server: restarted, stream: "s2", remote: remote)
    guard case .reset = connection.feed.start else {
      Issue.record("expected a reset, got \(connection.feed.start)")
      return
    }
    await remote.reached(remoteVersion: 0, inStream: "s2")
    #expect(await remote.snapshot == restarted.snapshot)
    let final = await ResumeTests.follow(local, until: await remote.version.number)
    #expect(final == (await restarted.snapshot))
    await connection.drop()
  }

  @Test(
    "a batch that does not apply is refused, changes nothing, and the remote ignores batches until it resumes"
  )
  func refusesAndResumes() async throws {
    let remote = Remote()
    try await remote.receive(.reset(stream: "s", version: 3, snapshot: snapshot("A: a b c")))
    let held = await remote.snapshot
    let localVersion = await remote.version
    let bad = WireBatch<TestSection>(
      from: 3, to: 4,
      stages: [
        WireStage(
          kind: .structure, sections: WireChanges(),
          items: WireChanges(deletes: [WireRemoval(id: "b", at: ItemPosition(section: 0, item: 0))]))
      ])
    await #expect(throws: WireError.self) { try await remote.receive(.batch(bad)) }
    #expect(await remote.lastError?.code == .idMismatch)
    #expect(await remote.phase == .awaitingStart)
    #expect(await remote.snapshot == held)
    #expect(await remote.version == localVersion)

    // In flight when the refusal happened: ignored, not applied.
    let good = WireBatch<TestSection>(
      from: 3, to: 4,
      stages: [
        WireStage(
          kind: .structure, sections: WireChanges(),
          items: WireChanges(deletes: [WireRemoval(id: "a", at: ItemPosition(section: 0, item: 0))]))
      ])
    try await remote.receive(.batch(good))
    #expect(await remote.ignoredBatches == 1)
    #expect(await remote.snapshot == held)

    guard case .subscribe(let stream, let from, _) = await remote.subscribeRequest else {
      Issue.record("not a subscribe")
      return
    }
    #expect(stream == "s" && from == 3)
    await #expect(throws: WireError.self) { try await remote.receive(.resumed(stream: "s", version: 2)) }
    await #expect(throws: WireError.self) { try await remote.receive(.resumed(stream: "t", version: 3)) }
    try await remote.receive(.resumed(stream: "s", version: 3))
    try await remote.receive(.batch(good))
    #expect(await remote.snapshot == snapshot("A: b c"))
    #expect(await remote.remoteVersion == 4)
  }

  @Test(
    "bytes that are not a message, a subscribe, or the sender's error are typed errors that change nothing")
  func refusesBytes() async throws {
    let remote = Remote()
    try await remote.receive(.reset(stream: "s", version: 1, snapshot: snapshot("A: a")))
    await #expect(throws: WireError.self) { try await remote.receive(Data("{\"format\":".utf8)) }
    #expect(await remote.lastError?.code == .malformed)
    await #expect(throws: WireError.self) { try await remote.receive(.subscribe(stream: nil, from: nil)) }
    #expect(await remote.lastError?.code == .unexpectedMessage)
    await #expect(throws: WireError.self) {
      try await remote.receive(.error(WireError(.versionMismatch, "from the server")))
    }
    #expect(await remote.snapshot == snapshot("A: a"))
    #expect(await remote.remoteVersion == 1)
  }
}
