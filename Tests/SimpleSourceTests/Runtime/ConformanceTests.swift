// The conformance check of SimpleSourceTesting on the package's sources, a user's source built on
// Broadcaster, and sources broken on purpose (it must fail those).

import SimpleSource
import SimpleSourceTesting
import Testing

/// One random edit of a list of sections, drawn ahead so that it can be applied inside a transaction.
struct RandomEdit: Sendable {
  let kind: Int
  let a: Int
  let b: Int
  let id: String

  init(using random: inout SeededGenerator) {
    kind = Int.random(in: 0..<9, using: &random)
    a = Int.random(in: 0..<1_000, using: &random)
    b = Int.random(in: 0..<1_000, using: &random)
    id = "\(Int.random(in: 0..<60, using: &random))"  // repeats now and then: a rejected edit
  }

  /// Applies the edit; the result may hold a duplicate id, which the source must reject (G8).
  func apply(to sections: inout [TestSection]) {
    if sections.isEmpty || kind == 0 {
      sections.insert(TestSection(id: "S\(id)"), at: sections.isEmpty ? 0 : a % (sections.count + 1))
      return
    }
    let s = a % sections.count
    let count = sections[s].items.count
    switch kind {
    case 1, 2: sections[s].items.insert(TestItem(id), at: b % (count + 1))
    case 3 where count > 0: sections[s].items.remove(at: b % count)
    case 4 where count > 0: sections[s].items[b % count].version += 1
    case 5 where count > 0:
      let item = sections[s].items.remove(at: b % count)
      let target = b % sections.count
      sections[target].items.insert(item, at: a % (sections[target].items.count + 1))
    case 6: sections.swapAt(s, b % sections.count)
    case 7: sections[s].header = "\(id)"
    default: if sections.count > 1 { sections.remove(at: s) }
    }
  }
}

/// A user's own source on Broadcaster: an actor holding its sections, publishing each change.
actor BroadcastSource: DataSourceType {
  let broadcaster: Broadcaster<TestSection>
  private var sections: [TestSection]

  init(_ sections: [TestSection]) throws {
    broadcaster = Broadcaster(snapshot: try Snapshot(sections))
    self.sections = sections
  }

  var snapshot: Snapshot<TestSection> { broadcaster.snapshot }
  var version: Version { broadcaster.version }
  func subscribe(pacing: Pacing) -> Subscription<TestSection> { broadcaster.subscribe(pacing: pacing) }
  func settled() {}  // publish returns once the batch is offered

  func apply(_ edit: RandomEdit) async throws {
    var next = sections
    edit.apply(to: &next)
    let snapshot = try Snapshot(next)
    // The actor is re-entered while the diff runs off it: an edit made meanwhile is refused as stale by
    // the broadcaster (and not kept here), so the two never disagree.
    try await broadcaster.publish(snapshot, as: broadcaster.version + 1)
    sections = next
  }
}

/// Broken on purpose: queues every batch for every subscriber, so a stalled one gets them all (not G6).
actor UnboundedSource: DataSourceType {
  let base: BasicDataSource<TestSection>
  /// Whether to drop every third batch too (not G1).
  let dropsBatches: Bool

  init(_ sections: [TestSection], dropsBatches: Bool = false) throws {
    base = try BasicDataSource(sections: sections)
    self.dropsBatches = dropsBatches
  }

  var snapshot: Snapshot<TestSection> { get async { await base.snapshot } }
  var version: Version { get async { await base.version } }
  func settled() async { await base.settled() }

  func subscribe(pacing: Pacing) async -> Subscription<TestSection> {
    let inner = await base.subscribe(pacing: pacing)
    let (stream, continuation) = AsyncStream.makeStream(of: UpdateBatch<TestSection>.self)
    let drops = dropsBatches
    let forward = Task {
      var count = 0
      for await batch in inner.batches {
        count += 1
        if drops && count % 3 == 0 { continue }
        continuation.yield(batch)
      }
      continuation.finish()
    }
    continuation.onTermination = { _ in forward.cancel() }
    return Subscription(snapshot: inner.snapshot, version: inner.version.number, batches: stream) {
      forward.cancel()
      inner.cancel()
    }
  }
}

@Suite("DataSourceConformance", .timeLimit(.minutes(30)))
struct ConformanceTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 10, casesVariable: "SIMPLESOURCE_CONFORMANCE_RUNS")

  @Test("BasicDataSource keeps the contract")
  func basicDataSource() async {
    var conformance = DataSourceConformance(
      makeSource: { try BasicDataSource(sections: layout("A: a b | B: c")) },
      subscriberCount: { $0.subscriberCount }
    ) { source, random in
      let edit = RandomEdit(using: &random)
      switch edit.kind {
      case 1: try await source.appendItems([TestItem(edit.id)], toSection: "A")
      case 3: try await source.deleteItems([edit.id])
      default: try await source.update { edit.apply(to: &$0) }
      }
    }
    conformance.runs = Self.settings.cases
    let report = await conformance.run(seed: Self.settings.seed(forShard: 1))
    print("Conformance, BasicDataSource: \(report)")
    #expect(report.passed, "\(report)")
    #expect(report.batches > 0)
  }

  @Test("a user's source built on Broadcaster keeps the contract")
  func broadcasterSource() async {
    var conformance = DataSourceConformance(
      makeSource: { try BroadcastSource(layout("A: a b | B: c")) },
      subscriberCount: { $0.broadcaster.subscriberCount }
    ) { source, random in
      try await source.apply(RandomEdit(using: &random))
    }
    conformance.runs = Self.settings.cases
    let report = await conformance.run(seed: Self.settings.seed(forShard: 2))
    print("Conformance, Broadcaster: \(report)")
    #expect(report.passed, "\(report)")
    #expect(report.batches > 0)
  }

  @Test("a source that queues every batch fails G6, one that drops batches fails G1, and both fail G13")
  func brokenSourcesFail() async {
    for drops in [false, true] {
      var conformance = DataSourceConformance(
        makeSource: { try UnboundedSource(layout("A: a b | B: c"), dropsBatches: drops) }
      ) { source, random in
        let edit = RandomEdit(using: &random)
        try await source.base.update { edit.apply(to: &$0) }
        // One batch per mutation, not a few coalesced ones: the stalled subscriber then gets many batches
        // from a source that queues them all, and a source that drops every third one drops some.
        await source.base.settled()
      }
      conformance.runs = 3
      conformance.timeoutSeconds = 2
      let report = await conformance.run(seed: Self.settings.seed(forShard: 3))
      #expect(!report.passed)
      let expected = drops ? "G1" : "G6"
      #expect(report.failures.contains { $0.contains(expected) }, "expected a \(expected) failure: \(report)")
      // Its subscriptions, made from parts, cannot tell what their consumer holds.
      #expect(report.failures.contains { $0.contains("G13") }, "expected a G13 failure: \(report)")
    }
  }
}

/// A feed of states that tells when each was taken: the source asks for value k + 1 only once it has
/// applied value k, so "asked k + 1 times" means "applied the k-th value".
final class HandOffFeed: AsyncSequence, Sendable {
  typealias Element = [TestSection]
  private let state:
    Locked<(values: [[TestSection]], pushed: Int, waiter: CheckedContinuation<[TestSection]?, Never>?)>
  private let asked = HeldVersion()
  private let latest: Locked<[TestSection]>

  init(_ initial: [TestSection]) {
    state = Locked(([], 0, nil))
    latest = Locked(initial)
  }

  /// Pushes the latest state edited by `edit`, and returns once the source has applied it.
  func push(_ edit: RandomEdit) async {
    // The next state and its place in the feed are decided under the locks (so concurrent pushes queue
    // in the order they edit); a waiting consumer is resumed after they are released.
    let (number, waiter, next) = latest.withLock { latest in
      var next = latest
      edit.apply(to: &next)
      // A state with a duplicate id is pushed too (the source must reject it), but not built on.
      if (try? Snapshot(next)) != nil { latest = next }
      return state.withLock { state in
        state.pushed += 1
        let waiter = state.waiter
        state.waiter = nil
        if waiter == nil { state.values.append(next) }
        return (state.pushed, waiter, next)
      }
    }
    waiter?.resume(returning: next)
    _ = await asked.reached(number + 1)
  }

  struct Iterator: AsyncIteratorProtocol {
    let feed: HandOffFeed
    mutating func next() async -> [TestSection]? { await feed.take() }
  }

  func makeAsyncIterator() -> Iterator { Iterator(feed: self) }

  private func take() async -> [TestSection]? {
    asked.hold(through: asked.current + 1)
    return await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> [TestSection]?? in
        if !state.values.isEmpty { return .some(state.values.removeFirst()) }
        state.waiter = continuation
        return .none
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }
}

extension ConformanceTests {
  @Test("ObservedDataSource keeps the contract, driven through its feed")
  func observedDataSource() async {
    let start = layout("A: a b | B: c")
    var conformance = DataSourceConformance(
      makeSource: {
        let feed = HandOffFeed(start)
        return (source: try ObservedDataSource(feed, initial: start), driver: feed)
      },
      subscriberCount: { $0.subscriberCount }
    ) { feed, random in
      await feed.push(RandomEdit(using: &random))
    }
    conformance.runs = Self.settings.cases
    let report = await conformance.run(seed: Self.settings.seed(forShard: 7))
    print("Conformance, ObservedDataSource: \(report)")
    #expect(report.passed, "\(report)")
    #expect(report.batches > 0)
  }
}
