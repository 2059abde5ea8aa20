// G13: a subscription knows the newest version its consumer holds, and waiting for any version the source
// made returns once the consumer has taken what precedes it, also when no batch carries that version.

import Foundation
import SimpleSource
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

@Suite(
  "G13 progress: waiting for a version never depends on a batch that will not come", .timeLimit(.minutes(30)))
struct ProgressTests {
  /// A consumer that takes every batch into `shown`, the way a cache or a client session does.
  static func consume(_ subscription: Subscription<TestSection>, into shown: Locked<Snapshot<TestSection>>)
    -> Task<Int, Never>
  {
    Task {
      var count = 0
      for await batch in subscription.batches {
        shown.withLock { $0 = batch.snapshot }
        count += 1
      }
      return count
    }
  }

  @Test("a consumer holds a batch once it asks for the next: reached(_:) returns after the loop's body ran")
  func heldAfterTheBody() async throws {
    let source = try TestSource(sections: layout("A:"))
    let subscription = await source.subscribe()
    let shown = Locked(subscription.snapshot)
    let consumer = Self.consume(subscription, into: shown)
    #expect(subscription.heldVersion == 0)
    for index in 0..<20 {
      let version = try await source.appendItems([item("n\(index)")], toSection: "A")
      #expect(try await subscription.reached(version))
      #expect(shown.withLock { $0.itemCount } == index + 1, "reached(\(version)) before the body ran")
      #expect(subscription.heldVersion >= version.number)
    }
    #expect(await subscription.reached(3), "a version held long ago returns at once")
    subscription.cancel()
    _ = await consumer.value
  }

  @Test("a transaction that edits and reverts makes a version no batch carries; waiting for it returns")
  func selfCancellingTransaction() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let subscription = await source.subscribe()
    let shown = Locked(subscription.snapshot)
    let consumer = Self.consume(subscription, into: shown)
    let version = try await source.transaction { transaction in
      try transaction.replaceItem(item("a", 1))
      try transaction.replaceItem(item("a", 0))
    }
    #expect(version == 1)
    #expect(try await subscription.reached(version), "no batch carries version 1")
    let next = try await source.appendItems([item("c")], toSection: "A")
    #expect(try await subscription.reached(next))
    #expect(shown.withLock { $0.description } == "[A: a b c]")
    subscription.cancel()
    #expect(await consumer.value == 1, "one batch: the undone edit made none")
  }

  @Test("a rename and a rename back coalesced into one cut: no batch, and the wait returns")
  func coalescedUndoPair() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let subscription = await source.subscribe()
    let shown = Locked(subscription.snapshot)
    let consumer = Self.consume(subscription, into: shown)
    // Two mutations in one turn of the actor: no cut falls between them.
    try await source.insertThenDelete(item("x"), in: "A")
    let version = await source.version
    #expect(version == 2)
    #expect(try await subscription.reached(version))
    #expect(subscription.heldVersion == 2)
    subscription.cancel()
    #expect(await consumer.value == 0)
  }

  @Test("a stalled consumer that missed an edit and its undo holds the later version once it asks again")
  func stalledConsumer() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let subscription = await source.subscribe()
    // Two separate batches the consumer does not take: their composition is empty.
    let renamed = try await source.replaceItem(item("a", 1))
    await source.settled()
    let back = try await source.replaceItem(item("a", 0))
    await source.settled()
    #expect(back == renamed + 1)
    let waiter = Task { try await subscription.reached(back) }
    #expect(subscription.heldVersion == 0, "nothing taken yet")
    let shown = Locked(subscription.snapshot)
    let consumer = Self.consume(subscription, into: shown)
    #expect(try await waiter.value, "held once the consumer asks: the composition cancelled out")
    #expect(try await subscription.reached(renamed))
    subscription.cancel()
    #expect(await consumer.value == 0)
  }

  @Test("a paced consumer holds cancelled-out versions too")
  @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  func pacedConsumer() async throws {
    let clock = ManualClock()
    let source = try TestSource(sections: layout("A: a"))
    let subscription = await source.subscribe(pacing: .interval(.seconds(1), clock: clock))
    let shown = Locked(subscription.snapshot)
    let consumer = Self.consume(subscription, into: shown)
    let first = try await source.appendItems([item("b")], toSection: "A")
    #expect(try await subscription.reached(first), "held before the pacing gate")
    // The pacing gate holds the consumer after its first batch: the next two cancel out meanwhile.
    await clock.sleepers(atLeast: 1)
    try await source.replaceItem(item("a", 1))
    let back = try await source.replaceItem(item("a", 0))
    await source.settled()
    clock.advance(by: .seconds(1))
    #expect(try await subscription.reached(back))
    #expect(shown.withLock { $0.description } == "[A: a b]")
    subscription.cancel()
    #expect(await consumer.value == 1)
  }

  @Test("a consumer that stops ends its waits: false, at once, for a version it will never hold")
  func consumerThatStops() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let subscription = await source.subscribe()
    let consumer = Task {
      for await _ in subscription.batches { break }
      subscription.cancel()
    }
    let waiter = Task { await subscription.reached(1_000) }
    try await source.appendItems([item("b")], toSection: "A")
    await consumer.value
    #expect(await waiter.value == false)
    #expect(await subscription.reached(1_001) == false, "an ended subscription answers at once")
    #expect(await subscription.reached(0), "what it held stays held")

    // A dropped subscription ends its waits too.
    let dropped = await source.subscribe()
    let progress = dropped.progress
    let dropWaiter = Task { await progress.reached(1_000) }
    dropped.cancel()
    #expect(await dropWaiter.value == false)
  }

  @Test("a waiting task that is cancelled returns false; the source's end ends every wait")
  func cancelledWaitAndSourceGone() async throws {
    var source: TestSource? = try TestSource(sections: layout("A: a"))
    let subscription = await source!.subscribe()
    let waiter = Task { await subscription.reached(50) }
    waiter.cancel()
    #expect(await waiter.value == false)
    let orphan = Task { await subscription.reached(50) }
    source = nil
    #expect(await orphan.value == false, "the source is gone: its subscription ended")
  }

  @Test(
    "random writers with undo pairs and self-cancelling transactions, and a consumer that stalls: every version a mutation returned is reached, holding at least its state"
  )
  func randomized() async throws {
    let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_PROGRESS_RUNS")
    var generator = SeededGenerator(seed: settings.seed(forShard: 131))
    print("progress: \(settings.replay)")
    for run in 0..<settings.cases {
      let stallEvery = Int.random(in: 1...4, using: &generator)
      let steps = (0..<40).map { _ in Int.random(in: 0..<4, using: &generator) }
      try await Self.writersAndStallingConsumer(
        steps: steps, stallEvery: stallEvery, seed: "run \(run), \(settings.replay)")
    }
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "the same writers and stalling consumer under seeded schedules: every version reached in every order",
    .seededSchedules(30, quietPeriod: .milliseconds(250)))
  func underSeededSchedules() async throws {
    var generator = SeededGenerator(seed: RandomTestSettings.runSeed)
    let steps = (0..<12).map { _ in Int.random(in: 0..<4, using: &generator) }
    try await Self.writersAndStallingConsumer(
      steps: steps, stallEvery: 2, seed: "SIMPLESOURCE_SEED=\(RandomTestSettings.runSeed)")
  }

  /// Two writers take turns through `steps` (an edit, an undo pair in one transaction, an insert then a
  /// delete, another edit) while a consumer stalls every `stallEvery` batches; each version a writer gets
  /// must be reached by the subscription, holding at least its state.
  static func writersAndStallingConsumer(steps: [Int], stallEvery: Int, seed: String) async throws {
    let source = try TestSource(sections: layout("A: a b c"))
    let subscription = await source.subscribe()
    let shown = Locked(subscription.snapshot)
    let consumer = Task.schedulable("a stalling consumer") {
      var count = 0
      for await batch in subscription.batches {
        shown.withLock { $0 = batch.snapshot }
        count += 1
        // Stalls until the writers' mutations so far are offered: it falls behind, then composes.
        if count % stallEvery == 0 { await source.settled() }
      }
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for writer in 0..<2 {
        group.addTask {
          for (index, step) in steps.enumerated() where index % 2 == writer {
            let version: Version
            switch step {
            case 0:
              version = try await source.updateItem("a") { $0.version += 1 }
            case 1:
              version = try await source.transaction { transaction in
                try transaction.appendItems([item("t\(writer)-\(index)")], toSection: "A")
                try transaction.deleteItems(["t\(writer)-\(index)"])
              }
            case 2:
              try await source.insertThenDelete(item("u\(writer)-\(index)"), in: "A")
              version = await source.version
            default:
              version = try await source.updateItem("b") { $0.version += 1 }
            }
            #expect(
              try await subscription.reached(version), "seed \(seed): version \(version) never reached")
            #expect(subscription.heldVersion >= version.number)
          }
        }
      }
      try await group.waitForAll()
    }
    await source.settled()
    #expect(try await subscription.reached(await source.version), "seed \(seed)")
    #expect(shown.withLock { $0 } == (await source.snapshot), "seed \(seed)")
    subscription.cancel()
    await consumer.value
  }
}

@Suite("G13 progress through derived sources", .timeLimit(.minutes(30)))
struct DerivedProgressTests {
  @Test("a projection numbered by its parent holds the parent versions it skips and those that cancelled out")
  func projectionNumberedByParent() async throws {
    let parent = try TestSource(sections: layout("A: a b c"))
    let odd = try await parent.projected(Projection(where: { $0.version % 2 == 1 }), versions: .parent)
    let subscription = await odd.subscribe()
    let shown = Locked(subscription.snapshot)
    let consumer = ProgressTests.consume(subscription, into: shown)
    let shownEdit = try await parent.replaceItem(item("a", 1))
    #expect(try await subscription.reached(shownEdit))
    #expect(shown.withLock { $0.description } == "[A: a]")
    let skipped = try await parent.replaceItem(item("b", 2))
    #expect(try await subscription.reached(skipped), "a parent version that changes nothing shown")
    try await parent.insertThenDelete(item("x", 1), in: "A")
    #expect(try await subscription.reached(await parent.version), "parent versions that cancelled out")
    subscription.cancel()
    #expect(await consumer.value == 1)
  }
}

@Suite("G13 progress of observable models", .timeLimit(.minutes(30)))
struct ModelProgressTests {
  @Test("an observed list holds versions whose mutations cancelled out")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  @MainActor
  func observedList() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let undone = try await source.transaction { transaction in
      try transaction.replaceItem(item("a", 1))
      try transaction.replaceItem(item("a", 0))
    }
    #expect(try await list.reached(undone), "no batch carries the transaction's version")
    try await source.insertThenDelete(item("x"), in: "A")
    #expect(try await list.reached(await source.version))
    list.stop()
  }
}
