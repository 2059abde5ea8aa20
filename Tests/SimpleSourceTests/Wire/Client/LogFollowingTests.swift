// Several writers, one log: a source restored at a version, following the batches others prepared.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Following a shared log", .timeLimit(.minutes(30)))
struct LogFollowingTests {
  /// Prepares `edit` on `writer`, stores its batch in `log` (as bytes), and applies it.
  static func write(
    _ writer: TestSource, to log: inout [Data],
    _ edit: @escaping @Sendable (inout Transaction<TestSection>) throws(TestSource.Error) -> Void
  ) async throws {
    let prepared = try await writer.prepare(from: await writer.version.number, edit)
    // Encoded where it is read: a local holding the batch until the consuming `apply()` crashes Swift
    // 6.3.1's optimizer (CopyPropagation, "Found over consume") in a release build of the tests.
    let bytes = prepared.batch.map { WireCoder().encode($0) }
    log.append(try #require(bytes))
    await prepared.apply()
  }

  static func batch(_ data: Data) throws -> WireBatch<TestSection> {
    guard case .batch(let batch) = try WireCoder().decode(data, as: TestSection.self) else {
      throw WireError(.unexpectedMessage, "not a batch")
    }
    return batch
  }

  @Test("a source restored at version 40 counts from there: batches, resumes and prepares use those versions")
  func restoredAtAVersion() async throws {
    let source = try TestSource(sections: layout("A: a b"), version: 40, history: HistoryLimit(versions: 8))
    #expect(await source.version == 40)
    #expect(await source.offeredVersion == 40)
    #expect(await source.settled(through: 40))
    let recorder = await BatchRecorder(await source.subscribe())
    try await source.appendItems([item("c")], toSection: "A")
    #expect(await recorder.showing(await source.snapshot))
    #expect(await recorder.batches.map { [$0.from.number, $0.to.number] } == [[40, 41]])
    guard case .resumed = await source.subscribe(from: 40) else {
      Issue.record("version 40 is retained")
      return
    }
    guard case .reset = await source.subscribe(from: 12) else {
      Issue.record("version 12 was never this source's")
      return
    }
    await #expect(throws: TestSource.Error(code: .unexpectedVersion)) {
      _ = try await source.prepare(from: 40) { transaction throws(TestSource.Error) in
        try transaction.deleteItems(["a"])
      }
    }
    let write = try await source.prepare(from: 41) { transaction throws(TestSource.Error) in
      try transaction.deleteItems(["a"])
    }
    #expect(await write.apply() == 42)
  }

  @Test("a follower that applies a writer's logged batches holds its state at each version; twice is skipped")
  func followerConverges() async throws {
    let writer = try TestSource(sections: layout("A: a b c | B: d"))
    let follower = try TestSource(sections: layout("A: a b c | B: d"))
    let recorder = await BatchRecorder(await follower.subscribe())
    var log: [Data] = []
    try await Self.write(writer, to: &log) { transaction throws(TestSource.Error) in
      try transaction.moveItem("c", before: "a")
      try transaction.replaceItem(item("b", 1))
    }
    try await Self.write(writer, to: &log) { transaction throws(TestSource.Error) in
      try transaction.appendSections([TestSection(id: "C", items: [item("e")])])
      try transaction.deleteItems(["d"])
    }
    try await Self.write(writer, to: &log) { transaction throws(TestSource.Error) in
      try transaction.refreshItems(["a"])
    }
    for entry in log {
      #expect(try await follower.apply(logged: Self.batch(entry)))
    }
    #expect(try await !follower.apply(logged: Self.batch(log[1])), "an entry read twice is skipped")
    await follower.settled()
    #expect(await follower.version == 3)
    // Each logged version is offered and retained on its own (none coalesced), so that a client holding
    // any version of the log, from whichever follower, resumes here.
    #expect(follower.retainedVersions == [0, 1, 2, 3])
    let written = await writer.snapshot
    #expect(await follower.snapshot == written)
    let final = await follower.snapshot
    #expect(await recorder.showing(final))
    #expect(await recorder.violations == [])
    let refreshed = await recorder.batches.contains { $0.changeset.forcedRefreshes.contains("a") }
    #expect(refreshed, "a logged refresh is refreshed in the follower's batch")
  }

  @Test("a gap, a batch over several versions, and a change that does not apply are refused; nothing changes")
  func refusals() async throws {
    let writer = try TestSource(sections: layout("A: a b"))
    let follower = try TestSource(sections: layout("A: a b"))
    var log: [Data] = []
    for name in ["x", "y"] {
      try await Self.write(writer, to: &log) { transaction throws(TestSource.Error) in
        try transaction.appendItems([item(name)], toSection: "A")
      }
    }
    await #expect(throws: WireError(.versionMismatch, "batch from 1, the source holds 0")) {
      try await follower.apply(logged: Self.batch(log[1]))
    }
    let wide = try Self.batch(log[0])
    await #expect(throws: WireError.self) {
      try await follower.apply(logged: WireBatch(from: 0, to: 2, stages: wide.stages))
    }
    // The first entry made against another state (the follower lost item b): a change names b.
    let other = try TestSource(sections: layout("A: a"))
    await #expect(throws: WireError.self) { try await other.apply(logged: wide) }
    #expect(await other.version == 0)
    #expect(await other.snapshot.sections == layout("A: a"))
    // Refused, the follower is as it was and free: the entries in order still apply.
    #expect(try await follower.apply(logged: Self.batch(log[0])))
    #expect(try await follower.apply(logged: Self.batch(log[1])))
    let written = await writer.snapshot
    #expect(await follower.snapshot == written)
  }
}
