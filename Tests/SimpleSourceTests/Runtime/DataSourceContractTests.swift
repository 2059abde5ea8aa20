// One test per guarantee of the contract every source keeps (G1–G13, the article What a data source promises),
// on BasicDataSource, awaiting events only.

import Foundation
@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import SimpleSourceTesting
import Testing

typealias TestSource = BasicDataSource<TestSection>

func item(_ id: String, _ version: Int = 0) -> TestItem { TestItem(id, version: version) }

@Suite("BasicDataSource keeps the contract", .timeLimit(.minutes(30)))
struct DataSourceContractTests {
  @Test("G1 order and G2 exactness: batches chain by version and replay to the source's state")
  func orderAndExactness() async throws {
    let source = try TestSource(sections: layout("A: a | B: b"))
    let subscription = await source.subscribe()
    let recorder = await BatchRecorder(subscription)
    await withTaskGroup(of: Void.self) { group in
      for writer in 0..<4 {
        group.addTask {
          for index in 0..<50 {
            _ = try? await source.appendItems(
              [item("w\(writer)-\(index)")], toSection: index % 2 == 0 ? "A" : "B")
            if index % 7 == 0 { _ = try? await source.moveItem("w\(writer)-\(index)", toSection: "A") }
          }
        }
      }
    }
    await source.settled()
    let final = await source.snapshot
    await recorder.showing(final)
    #expect(await recorder.violations == [])
    let batches = await recorder.batches
    #expect(batches.first?.from == subscription.version)
    #expect(zip(batches, batches.dropFirst()).allSatisfy { $0.to == $1.from })
    #expect(batches.last?.to.number == (await source.version.number))
  }

  @Test("G3 UIKit-valid: every batch passes the reference view, moves stay moves, with both refresh styles")
  func uikitValid() async throws {
    let source = try TestSource(sections: layout("A: a b c | B: d e | C: f"))
    let reload = await BatchRecorder(await source.subscribe(), refreshStyle: .reload)
    let reconfigure = await BatchRecorder(await source.subscribe(), refreshStyle: .reconfigure)
    try await source.moveItem("a", after: "c")
    try await source.replaceItem(item("d", 1))
    try await source.moveSection("C", before: "A")
    try await source.moveItem("e", toSection: "C")
    try await source.update { sections in
      sections[1].items.removeFirst()
      sections[2].header = "B v1"
    }
    await source.settled()
    let final = await source.snapshot
    for recorder in [reload, reconfigure] {
      await recorder.showing(final)
      #expect(await recorder.violations == [])
    }
  }

  @Test(
    "G4 nothing empty: a mutation that changes nothing makes no version; cancelling mutations make no batch")
  func nothingEmpty() async throws {
    let source = try TestSource(sections: layout("A: a b | B: c"))
    let recorder = await BatchRecorder(await source.subscribe())
    #expect(try await source.replaceItem(item("a")) == 0)
    #expect(
      try await source.moveItem(at: ItemPosition(section: 0, item: 1), to: ItemPosition(section: 0, item: 1))
        == 0)
    #expect(try await source.moveItem("a", before: "b") == 0)
    #expect(try await source.setSections(layout("A: a b | B: c")) == 0)
    #expect(try await source.update { _ in } == ())
    #expect(try await source.deleteItems([]) == 0)
    #expect(await source.version == 0)
    // An insert and its delete in one turn of the actor, so that one cut holds both: it must publish
    // nothing. Then one real change.
    try await source.insertThenDelete(item("x"), in: "B")
    await source.settled()
    try await source.appendItems([item("y")], toSection: "A")
    await source.settled()
    await recorder.showing(await source.snapshot)
    let batches = await recorder.batches
    #expect(await recorder.violations == [])
    #expect(batches.allSatisfy { !$0.changeset.isEmpty })
    #expect(batches.last?.to.number == 3)
  }

  @Test("G5 atomic start: subscribing while writers run gives no gap and no overlap")
  func atomicStart() async throws {
    let source = try TestSource(sections: layout("A: | B:"))
    let recorders = await withTaskGroup(of: BatchRecorder<TestSection>?.self) { group in
      group.addTask {
        for index in 0..<300 {
          _ = try? await source.appendItems([item("i\(index)")], toSection: index % 3 == 0 ? "A" : "B")
        }
        return nil
      }
      for _ in 0..<20 { group.addTask { await BatchRecorder(await source.subscribe()) } }
      var recorders: [BatchRecorder<TestSection>] = []
      for await recorder in group { if let recorder { recorders.append(recorder) } }
      return recorders
    }
    await source.settled()
    let final = await source.snapshot
    for recorder in recorders {
      await recorder.showing(final)
      #expect(await recorder.violations == [])
    }
  }

  @Test("G6 bounded backlog: a stalled subscriber gets one composed batch; writers never wait for it")
  func boundedBacklog() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let subscription = await source.subscribe()
    let stalled = await BatchRecorder(subscription, paused: true)
    for index in 0..<1_000 {
      try await source.appendItems([item("n\(index)")], toSection: "A")
      if index % 3 == 0 { try await source.deleteItems(["n\(index)"]) }
    }
    // A last change that cannot cancel out: had the last cut held only an insert and its delete, it
    // would (rightly) publish nothing, and the newest batch would end before `version` (G4).
    try await source.appendItems([item("last")], toSection: "A")
    await source.settled()
    await stalled.resume()
    await stalled.showing(await source.snapshot)
    let batches = await stalled.batches
    #expect(batches.count == 1)
    #expect(batches.first?.from == subscription.version)
    #expect(batches.first?.to.number == (await source.version.number))
    #expect(batches.first?.isComposed == true)
    #expect(await stalled.violations == [])
  }

  @Test("G7 isolation: a stalled subscriber changes nothing for others; every way of ending releases it")
  func isolationAndRelease() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let stalled = await BatchRecorder(await source.subscribe(), paused: true)
    let active = await BatchRecorder(await source.subscribe())
    for index in 0..<100 { try await source.appendItems([item("n\(index)")], toSection: "A") }
    await source.settled()
    await active.showing(await source.snapshot)
    #expect(await active.violations == [])
    #expect(source.subscriberCount == 2)

    await stalled.cancel()
    await stalled.finished()
    #expect(source.subscriberCount == 1, "cancelling the consuming task ends the subscription")

    do {
      let dropped = await source.subscribe()
      #expect(source.subscriberCount == 2)
      _ = dropped.version
    }
    #expect(source.subscriberCount == 1, "dropping the stream ends the subscription")

    let (subscribed, signal) = AsyncStream.makeStream(of: Void.self)
    let broken = Task {
      let batches = await source.subscribe().batches
      signal.finish()
      for await _ in batches { break }
    }
    for await _ in subscribed {}
    try await source.appendItems([item("last")], toSection: "A")
    await broken.value
    #expect(source.subscriberCount == 1, "breaking out of the loop ends the subscription")

    await active.cancel()
    await active.finished()
    #expect(source.subscriberCount == 0)
  }

  @Test("G8 atomic mutations: a throwing transaction leaves everything as it was")
  func atomicMutations() async throws {
    struct Refused: Error {}
    let source = try TestSource(sections: layout("A: a b"))
    let before = await source.snapshot
    await #expect(throws: Refused.self) {
      try await source.update { sections in
        sections[0].items.removeAll()
        throw Refused()
      }
    }
    await #expect(throws: DataSourceError<String, String>.self) {
      try await source.update { sections in sections.append(TestSection(id: "B", items: [item("a")])) }
    }
    #expect(await source.snapshot.sections == before.sections)
    #expect(await source.version == 0)
  }

  @Test("G10 settling: settled() returns only once every earlier mutation is diffed and offered")
  func settling() async throws {
    // The diff of the first mutation is held at a gate: settled() must wait for it, and a settled() that
    // returns early reads the old version (see openGateThenSettle).
    let gate = DiffGate()
    let gated = try BasicDataSource(sections: [
      Section(id: 0, items: [GatedItem(id: 0, version: 0, gate: gate)])
    ])
    let gatedSubscription = await gated.subscribe()
    try await gated.refreshItems([0])
    #expect(await gated.openGateThenSettle(gate) == 1, "settled() returned before the batch was offered")
    _ = gatedSubscription.version

    // A subscriber that waits for nothing finds every mutation made before settled() in its first batch.
    let source = try TestSource(sections: layout("A:"))
    let subscription = await source.subscribe()
    let recorder = await BatchRecorder(subscription, paused: true)
    for index in 0..<200 { try await source.appendItems([item("n\(index)")], toSection: "A") }
    let version = await source.version
    await source.settled()
    #expect(await source.offeredVersion == version)
    await recorder.resume()
    await recorder.showing(await source.snapshot)
    #expect(await recorder.batches.first?.to.number == version.number)

    // settled(through:) waits for a version that does not exist yet.
    let waiter = Task { await source.settled(through: version + 1) }
    try await source.appendItems([item("late")], toSection: "A")
    #expect(await waiter.value, "reached, not cancelled")
    #expect(await source.offeredVersion == version + 1)
  }

  @Test("G2 with G4: a subscriber that started between mutations that cancel out is brought to the state")
  func subscribedBetweenCancellingMutations() async throws {
    let source = try TestSource(sections: layout("A: a b | B: c"))
    let before = await BatchRecorder(await source.subscribe())
    let between = try await source.subscribeBetween(inserting: layout("S: s"), at: 1)
    #expect(between.version == 1 && between.snapshot.sections.map(\.id) == ["A", "S", "B"])
    let recorder = await BatchRecorder(between)
    await source.settled()
    // No batch for the cancelled-out mutations, yet the subscriber that held S gets one that removes it.
    // Version 2 has version 0's state: the history keeps it for subscribers that come back holding it.
    #expect(await source.version == 2 && source.retainedVersions == [0, 2])
    try #require(await source.offeredVersion == 2, "followers settle once every subscriber is at 2")
    await recorder.showing(await source.snapshot)
    let removal = await recorder.batches
    #expect(removal.map { [$0.from.number, $0.to.number] } == [[1, 2]])
    #expect(removal.first?.changeset.sectionChanges.deletes.map(\.id) == ["S"])
    #expect(await recorder.violations.isEmpty)

    // The next batch: the subscriber that never saw S gets it from 0 (G1), the other one from 2.
    try await source.appendItems([item("d")], toSection: "B")
    await source.settled()
    let newest = await source.snapshot
    await recorder.showing(newest)
    await before.showing(newest)
    #expect(
      await before.batches.map { [$0.from.number, $0.to.number] } == [[0, 3]],
      "nothing for the cancelled-out pair")
    #expect(await recorder.batches.map { [$0.from.number, $0.to.number] } == [[1, 2], [2, 3]])
    #expect(await before.violations.isEmpty)
    #expect(await recorder.violations.isEmpty)

    // Mutations that cancel out with no subscriber between them offer nothing, as before.
    try await source.insertThenDelete(item("e"), in: "A")
    await source.settled()
    #expect(await source.version == 5)
    #expect(await source.offeredVersion == 3)
    await before.cancel()
    await recorder.cancel()
  }

  @Test("coalescing: every mutation made while a batch is diffed joins exactly one next batch")
  func coalescing() async throws {
    // The first batch's diff is held at a gate while 8 tasks make 400 mutations; once it is let go, the
    // source cuts exactly one more batch, from the held version to the newest.
    let gate = DiffGate()
    let source = try BasicDataSource(sections: [
      Section(id: 0, items: [GatedItem(id: 0, version: 0, gate: gate)]), Section(id: 1, items: []),
    ])
    let subscription = await source.subscribe()
    try await source.refreshItems([0])
    await gate.held()
    let writers = 8
    let perWriter = 50
    await withTaskGroup(of: Void.self) { group in
      for writer in 0..<writers {
        group.addTask {
          for index in 0..<perWriter {
            let id = 1 + writer * perWriter + index
            _ = try? await source.appendItems(
              [GatedItem(id: id, version: 0, gate: gate)], toSection: writer % 2)
          }
        }
      }
    }
    let newest = await source.version
    #expect(newest == 1 + writers * perWriter)
    #expect(await source.offeredVersion == 0, "nothing is offered while the first diff is held")
    #expect(await source.openGateThenSettle(gate) == newest)
    let last = await source.newestOfferedBatch
    #expect(
      last?.from == 1 && last?.to == newest.number,
      "the mutations made meanwhile make one batch: \(String(describing: last))")
    _ = subscription.version
  }

  @Test("refreshItems refreshes an item whose == did not change")
  func forcedRefresh() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let recorder = await BatchRecorder(await source.subscribe())
    #expect(try await source.refreshItems(["b"]) == 1)
    await source.settled()
    try await source.appendItems([item("c")], toSection: "A")
    await source.settled()
    await recorder.showing(await source.snapshot)
    let refreshed = await recorder.batches.flatMap { $0.changeset.itemChanges.updates.map(\.id) }
    #expect(refreshed == ["b"])
  }
}

extension BasicDataSource where Section == TestSection {
  /// Inserts `sections` at `index`, subscribes, and deletes them again, in one turn of the actor: the
  /// subscriber starts from a state that no cut sees, between mutations that cancel out. (A direct write
  /// does not suspend while no prepared write holds the source.)
  func subscribeBetween(inserting sections: [TestSection], at index: Int) async throws -> Subscription<
    TestSection
  > {
    try await update { $0.insert(contentsOf: sections, at: index) }
    let subscription = subscribe(pacing: .immediate)
    try await update { $0.removeSubrange(index..<(index + sections.count)) }
    return subscription
  }

  /// Two mutations in one turn of the actor: no cut can fall between them.
  func insertThenDelete(_ item: TestItem, in section: String) async throws {
    try await edit { (transaction: inout Transaction<TestSection>) throws(Error) in
      try transaction.appendItems([item], toSection: section)
    }
    try await edit { (transaction: inout Transaction<TestSection>) throws(Error) in
      try transaction.deleteItems([item.id])
    }
  }
}
