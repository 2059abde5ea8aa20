// ObservedDataSource follows an AsyncSequence and rejects bad values; pacing holds batches to an interval.

import SimpleSource
import SimpleSourceTesting
import Testing

@Suite("Observed sources and pacing", .timeLimit(.minutes(30)))
struct ObservedAndPacedTests {
  @Test("an observed source follows its sequence; bad values are reported and never reach subscribers")
  func observed() async throws {
    let (values, feed) = AsyncStream.makeStream(of: [TestSection].self)
    let source = try ObservedDataSource(values, initial: layout("A: a"))
    let recorder = await BatchRecorder(await source.subscribe())
    var errors = source.errors.makeAsyncIterator()

    feed.yield(layout("A: a b"))
    feed.yield(layout("A: a b | B: b"))
    let error = try #require(await errors.next())
    #expect(error.code == .duplicateItemID && error.itemID == "b")
    #expect(await source.snapshot.sections == layout("A: a b"), "the previous state stays")

    feed.yield(layout("B: c | A: b"))
    feed.finish()
    #expect(await source.finished() == nil)
    await recorder.showing(await source.snapshot)
    #expect(await recorder.violations == [])
    let shown = await recorder.batches.map { $0.snapshot.sections }
    #expect(!shown.contains(layout("A: a b | B: b")))
    #expect(shown.last == layout("B: c | A: b"))
  }

  @Test("an observed source reports its sequence's failure and keeps its state")
  func failingSequence() async throws {
    struct Lost: Error {}
    let (values, feed) = AsyncThrowingStream.makeStream(of: [TestSection].self)
    let source = try ObservedDataSource(values)
    feed.yield(layout("A: a"))
    feed.finish(throwing: Lost())
    #expect(await source.finished() is Lost)
    #expect(await source.snapshot.sections == layout("A: a"))
  }

  @Test("cancelling an observed source stops it following; subscribers stay")
  func cancelled() async throws {
    let (values, feed) = AsyncStream.makeStream(of: [TestSection].self)
    let source = try ObservedDataSource(values, initial: layout("A: a"))
    let subscription = await source.subscribe()
    source.cancel()
    #expect(await source.finished() == nil)
    feed.yield(layout("A: b"))
    #expect(await source.snapshot.sections == layout("A: a"))
    #expect(source.subscriberCount == 1)
    _ = subscription.version
  }

  @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  @Test("a paced subscriber gets at most one batch per interval; what happens meanwhile is composed")
  func pacing() async throws {
    let clock = ManualClock()
    let source = try TestSource(sections: layout("A:"))
    let subscription = await source.subscribe(pacing: .interval(.milliseconds(16), clock: clock))
    let recorder = await BatchRecorder(subscription)
    try await source.appendItems([item("a")], toSection: "A")
    await source.settled()
    await recorder.showing(await source.snapshot)
    #expect(await recorder.batches.count == 1, "the first batch is not held")

    await clock.sleepers(atLeast: 1)  // the subscriber now waits out its interval
    for index in 0..<10 {
      try await source.appendItems([item("n\(index)")], toSection: "A")
      await source.settled()
    }
    #expect(await recorder.batches.count == 1, "nothing is delivered before the interval has passed")
    clock.advance(by: .milliseconds(15))
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .milliseconds(1))
    await recorder.showing(await source.snapshot)
    let batches = await recorder.batches
    #expect(batches.count == 2)
    #expect(
      batches.last?.from.number == 1 && batches.last?.to.number == 11 && batches.last?.isComposed == true)
    #expect(await recorder.violations == [])
  }
}
