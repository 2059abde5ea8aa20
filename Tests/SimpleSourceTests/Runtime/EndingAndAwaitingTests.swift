// Ending a subscription with cancel(), and awaiting that a consumer has applied a version.

import SimpleSource
import SimpleSourceTesting
import Testing

@Suite("Ending subscriptions and awaiting versions", .timeLimit(.minutes(30)))
struct EndingAndAwaitingTests {
  @Test("breaking out of the loop keeps a held subscription registered; cancel() releases it")
  func cancelAfterBreak() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let subscription = await source.subscribe()
    try await source.appendItems([item("b")], toSection: "A")
    for await _ in subscription.batches { break }
    #expect(source.subscriberCount == 1, "the trap cancel() exists for")
    subscription.cancel()
    #expect(source.subscriberCount == 0)
    subscription.cancel()  // idempotent
    var iterator = subscription.batches.makeAsyncIterator()
    #expect(await iterator.next() == nil, "a cancelled subscription's stream is finished")
    try await source.appendItems([item("c")], toSection: "A")
    await source.settled()
    #expect(source.subscriberCount == 0)
  }

  @Test("cancel() from another task ends a consumer that is waiting for a batch")
  func cancelEndsWaitingConsumer() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let subscription = await source.subscribe()
    let consumer = Task {
      var count = 0
      for await _ in subscription.batches { count += 1 }
      return count
    }
    try await source.appendItems([item("b")], toSection: "A")
    await source.settled()
    subscription.cancel()
    #expect(await consumer.value <= 1)
    #expect(source.subscriberCount == 0)
  }

  @Test("a subscription cancelled before anyone iterates never delivers")
  func cancelBeforeIterating() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let subscription = await source.subscribe()
    subscription.cancel()
    try await source.appendItems([item("b")], toSection: "A")
    await source.settled()
    for await batch in subscription.batches { Issue.record("delivered \(batch) after cancel()") }
  }

  @Test("a service awaits that its own consumer has applied the version a mutation returned")
  func awaitHeldVersion() async throws {
    let source = try TestSource(sections: layout("A:"))
    let subscription = await source.subscribe()
    let applied = HeldVersion(subscription.version.number)
    let shown = Locked(subscription.snapshot)
    let consumer = Task {
      for await batch in subscription.batches {
        shown.withLock { $0 = batch.snapshot }
        applied.hold(through: batch.to.number)
      }
      applied.finish()
    }
    for index in 0..<20 {
      let version = try await source.appendItems([item("n\(index)")], toSection: "A")
      #expect(await applied.reached(version.number))
      #expect(
        shown.withLock { $0.itemCount } == index + 1, "reached(\(version)) returned before it was applied")
    }
    #expect(await applied.reached(3), "a version reached long ago returns at once")
    subscription.cancel()
    await consumer.value
    #expect(applied.isFinished)
    #expect(await applied.reached(1_000) == false, "after finish(), an unreached version returns false")
  }

  @Test("a waiting task that is cancelled returns false; advancing below the current version changes nothing")
  func cancelledWait() async {
    let applied = HeldVersion(5)
    applied.hold(through: 2)
    #expect(applied.current == 5)
    let waiter = Task { await applied.reached(10) }
    waiter.cancel()
    #expect(await waiter.value == false)
    let later = Task { await applied.reached(6) }
    applied.hold(through: 6)
    #expect(await later.value == true)
  }
}
