// Two-phase writes: prepare (validate, derive the batch), the caller's commit, then apply or abandon.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

private struct StorageRefused: Error {}

@Suite("Two-phase writes", .timeLimit(.minutes(30)))
struct TwoPhaseWriteTests {
  @Test(
    "a prepared write changes nothing until applied; its batch, stored and read back, replays to the state")
  func preparedThenApplied() async throws {
    let source = try TestSource(sections: layout("A: a b | B: c d"))
    let recorder = await BatchRecorder(await source.subscribe())
    let before = await source.snapshot
    let write = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.replaceItem(item("a", 1))
      try transaction.moveItem("c", toSection: "A")
      return "made"
    }
    let (result, base, version, prepared) = (write.result, write.base, write.version, write.batch)
    #expect(result == "made" && base == 0 && version == 1)
    let batch = try #require(prepared)
    #expect(batch.from == 0 && batch.to == 1)
    await source.settled()
    let held = await source.snapshot
    #expect(await source.version == 0)
    #expect(held == before, "nothing is made before apply")
    #expect(await recorder.batches.isEmpty)

    // The caller's storage keeps the batch as bytes; a reader of that log replays it onto version 0.
    let stored = WireCoder().encode(batch)
    guard case .batch(let logged) = try WireCoder().decode(stored, as: TestSection.self) else {
      Issue.record("the stored batch reads back as a batch")
      return
    }
    let replayed = try logged.applied(to: before).snapshot

    #expect(await write.apply() == 1)
    await source.settled()
    #expect(await source.version == 1)
    #expect(await source.snapshot == replayed)
    #expect(replayed.sections == layout("A: a b c | B: d").map { $0.with(item: "a", version: 1) })
    #expect(await recorder.showing(replayed), "settled offers the batch; the recorder takes it")
    #expect(await recorder.batches.map { [$0.from.number, $0.to.number] } == [[0, 1]])
    #expect(await recorder.violations == [])
  }

  @Test("an abandoned write, a refused body and a write that changes nothing leave the source as it was")
  func abandonedRefusedEmpty() async throws {
    let source = try TestSource(sections: layout("A: a b | B: c"))
    let recorder = await BatchRecorder(await source.subscribe())
    let before = await source.snapshot

    let abandoned = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.deleteItems(["a"])
    }
    await abandoned.abandon()

    await #expect(throws: TestSource.Error(code: .unknownItemID, itemID: "x")) {
      _ = try await source.prepare { transaction throws(TestSource.Error) in
        try transaction.deleteItems(["b"])
        try transaction.deleteItems(["x"])
      }
    }
    await #expect(throws: StorageRefused.self) {
      _ = try await source.prepare { transaction in
        try transaction.deleteItems(["b"])
        throw StorageRefused()
      }
    }

    let unchanged = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.replaceItem(item("a"))  // equal: no change
      try transaction.appendItems([item("n")], toSection: "B")
      try transaction.deleteItems(["n"])  // cancels out
    }
    let (unchangedBatch, unchangedVersion) = (unchanged.batch, unchanged.version)
    #expect(unchangedBatch == nil && unchangedVersion == 0)
    #expect(await unchanged.apply() == 0)

    await source.settled()
    let after = await source.snapshot
    #expect(await source.version == 0)
    #expect(after == before)
    #expect(await recorder.batches.isEmpty, "nothing changed: no batch (G4)")
    // The source is free again: a direct write goes through, and is the first batch the recorder takes.
    #expect(try await source.deleteItems(["a"]) == 1)
    #expect(await recorder.showing(await source.snapshot))
    #expect(await recorder.batches.map { [$0.from.number, $0.to.number] } == [[0, 1]])
  }

  @Test(
    "a direct write made while a write is prepared waits its turn, in arrival order, and runs against the state the prepared write left"
  )
  func directWritesWaitTheirTurn() async throws {
    let source = try TestSource(sections: layout("A: a b | B: c"))
    let (queued, queue) = AsyncStream.makeStream(of: Void.self)
    await source.onWriterQueued { queue.yield() }
    var queuedWriters = queued.makeAsyncIterator()
    let write = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.appendItems([item("p")], toSection: "B")
    }
    // Each write below needs what the prepared write makes ("p"), or what the one before it made: run
    // before it, or out of order, it would throw unknownItemID.
    let moved = Task { try await source.moveItem("p", toSection: "A") }
    await queuedWriters.next()
    let updated = Task {
      try await source.update { sections in
        sections[0].items.removeAll { $0.id == "p" }
        sections[1].items.append(item("p"))
      }
    }
    await queuedWriters.next()
    let replaced = Task {
      try await source.transaction { transaction throws(TestSource.Error) in
        try transaction.replaceItem(item("p", 1))
      }
    }
    await queuedWriters.next()
    let refreshed = Task { try await source.refreshItems(["p"]) }
    await queuedWriters.next()
    let reset = Task { try await source.setSections(layout("A: a b | B: c p'")) }
    await queuedWriters.next()
    #expect(await source.version == 0, "nothing made before the prepared write")

    #expect(await write.apply() == 1)
    #expect(try await moved.value == 2)
    try await updated.value
    #expect(try await replaced.value == 4)
    #expect(try await refreshed.value == 5)
    #expect(try await reset.value == 5, "the same sections: no version")
    #expect(await source.snapshot.sections == layout("A: a b | B: c p'"))
    // The source is free again: a direct write runs at once.
    #expect(try await source.deleteItems(["a"]) == 6)
  }

  @Test(
    "a direct write cancelled while it waits for its turn throws cancelled and makes nothing; a transaction's edits throw it"
  )
  func directWriteCancelledWhileWaiting() async throws {
    let source = try TestSource(sections: layout("A: a b | B: c"))
    let recorder = await BatchRecorder(await source.subscribe())
    let (queued, queue) = AsyncStream.makeStream(of: Void.self)
    await source.onWriterQueued { queue.yield() }
    var queuedWriters = queued.makeAsyncIterator()
    let write = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.appendItems([item("p")], toSection: "B")
    }
    let appending = Task { try await source.appendItems([item("x")], toSection: "A") }
    await queuedWriters.next()
    appending.cancel()
    await #expect(throws: TestSource.Error(code: .cancelled)) { try await appending.value }

    let transacting = Task {
      await source.transaction { transaction in
        return (try? transaction.deleteItems(["a"])) ?? false
      }
    }
    await queuedWriters.next()
    transacting.cancel()
    let (version, edited) = await transacting.value
    #expect(!edited && version == 0, "every edit threw cancelled: nothing made")
    // A body that maps the edits' errors to its own type sees the refusal too.
    let mapping = Task {
      try await source.transaction { transaction throws(StorageRefused) in
        do { try transaction.deleteItems(["a"]) } catch { throw StorageRefused() }
      }
    }
    await queuedWriters.next()
    mapping.cancel()
    await #expect(throws: StorageRefused.self) { try await mapping.value }

    #expect(await write.apply() == 1)
    await source.settled()
    #expect(await source.snapshot.sections == layout("A: a b | B: c p"))
    #expect(await recorder.showing(await source.snapshot))
    #expect(await recorder.batches.map { [$0.from.number, $0.to.number] } == [[0, 1]])
  }

  @Test("concurrent prepares are serialized: each starts from the version the one before it made")
  func serialized() async throws {
    let source = try TestSource(sections: layout("A: | B:"))
    let recorder = await BatchRecorder(await source.subscribe())
    let writers = 12
    let made = try await withThrowingTaskGroup(of: (base: Int, version: Int).self) { group in
      for writer in 0..<writers {
        group.addTask {
          let write = try await source.prepare { transaction throws(TestSource.Error) in
            try transaction.appendItems([item("w\(writer)")], toSection: writer % 2 == 0 ? "A" : "B")
          }
          let base = write.base.number
          let version = await write.apply()
          return (base, version.number)
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(made.map(\.base).sorted() == Array(0..<writers))
    #expect(made.allSatisfy { $0.version == $0.base + 1 })
    await source.settled()
    #expect(await source.version == writers)
    #expect(await source.snapshot.itemCount == writers)
    #expect(source.retainedVersions == Array(0...writers), "each write offered as a version of its own")
    let final = await source.snapshot
    #expect(await recorder.showing(final))
    #expect(await recorder.violations == [])
  }

  @Test("a preparer cancelled while it waits throws cancelled; one dropped unanswered is abandoned")
  func cancelledAndDropped() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let holding = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.appendItems([item("h")], toSection: "A")
    }
    let waiting = Task {
      try await source.prepare { transaction throws(TestSource.Error) in
        try transaction.appendItems([item("never")], toSection: "A")
      }.base
    }
    waiting.cancel()
    await #expect(throws: TestSource.Error(code: .cancelled)) { try await waiting.value }
    #expect(await holding.apply() == 1)

    // Dropped without apply or abandon: the source is freed for the next preparer.
    _ = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.appendItems([item("dropped")], toSection: "A")
    }
    let next = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.appendItems([item("next")], toSection: "A")
    }
    let (nextBase, nextVersion) = (next.base, next.version)
    #expect(nextBase == 1 && nextVersion == 2)
    await next.apply()
    #expect(await source.snapshot.sections == layout("A: a h next"))
  }

  /// The large list has `SIMPLESOURCE_COMPLEXITY_LARGE` items (100,000 in `swift test`).
  @Test(
    "preparing a one-item write hashes and compares a few times, as many at 10,000 items as at the large count"
  )
  func prepareCostDoesNotGrow() async throws {
    let large =
      ProcessInfo.processInfo.environment["SIMPLESOURCE_COMPLEXITY_LARGE"].flatMap(Int.init) ?? 100_000
    for count in [10_000, large] {
      let counter = CallCounter()
      @Sendable func item(_ value: Int, version: Int = 0) -> CountingItem {
        CountingItem(id: CountingID(value: value, counter: counter), version: version)
      }
      let source = try BasicDataSource(sections: [Section(id: 0, items: (0..<count).map { item($0) })])
      try await source.replaceItem(item(1, version: 1))  // builds the persistent form, once
      await source.settled()
      counter.reset()
      let write = try await source.prepare {
        transaction throws(BasicDataSource<Section<Int, CountingItem>>.Error) in
        try transaction.replaceItem(item(count / 2, version: 2))
        try transaction.moveItem(
          at: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: count - 1))
      }
      let calls = (hashes: counter.hashes, equalities: counter.equalities)
      print("Prepared write calls at \(count) items: \(calls)")
      #expect(write.batch != nil)
      #expect(calls.hashes <= 32 && calls.equalities <= 32, "\(count) items: \(calls)")
      await write.abandon()
    }
  }
}

extension TestSection {
  /// This section with the item `id` at `version`.
  fileprivate func with(item id: String, version: Int) -> TestSection {
    var copy = self
    copy.items = items.map { $0.id == id ? TestItem(id, version: version) : $0 }
    return copy
  }
}

extension TwoPhaseWriteTests {
  @Test(
    "a releaser abandons a write from another task: the source is free, and the write's apply makes nothing")
  func releaser() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let held = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.deleteItems(["a"])
    }
    let releaser = held.releaser
    // The next write waits for the source; the releaser, from another task, frees it.
    let next = Task {
      let made = try await source.prepare { transaction throws(TestSource.Error) in
        try transaction.appendItems([item("c")], toSection: "A")
      }
      return await made.apply()
    }
    #expect(await Task { await releaser.abandon() }.value)
    #expect(try await next.value == 1)
    #expect(await held.applyIfHeld() == nil, "the abandoned write makes nothing")
    await source.settled()
    #expect(await source.snapshot.sections == layout("A: a b c"))
    #expect(await releaser.abandon() == false, "answered once")

    // A write applied first: its releaser does nothing, and apply returns its version.
    let applied = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.deleteItems(["b"])
    }
    let late = applied.releaser
    #expect(await applied.apply() == 2)
    #expect(await late.abandon() == false)
    // apply after the releaser: nothing made, the base returned.
    let dropped = try await source.prepare { transaction throws(TestSource.Error) in
      try transaction.deleteItems(["c"])
    }
    await dropped.releaser.abandon()
    #expect(await dropped.apply() == 2)
    await source.settled()
    #expect(await source.version == 2)
    #expect(await source.snapshot.sections == layout("A: a c"))
  }
}
