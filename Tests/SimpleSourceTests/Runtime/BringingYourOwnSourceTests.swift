// The source of the article "Bringing your own source", as written there, checked by DataSourceConformance:
// a source fed by its own task, whose settled() waits for that task.

import SimpleSource
import SimpleSourceTesting
import Testing

// MARK: - The article's code

struct Quote: Identifiable, Equatable, Sendable {
  var id: String
  var price: Double
}

/// Prices pushed by a feed and published by the source's own task.
actor Prices: DataSourceType {
  typealias Quotes = Section<String, Quote>

  nonisolated let broadcaster: Broadcaster<Quotes>
  private let feed: AsyncStream<[Quote]>.Continuation
  private var task: Task<Void, Never>?
  /// How many values were sent, and how many the task has dealt with (published, or found unchanged).
  private var sent = 0
  private var done = 0
  private var waiters: [(target: Int, waiter: CheckedContinuation<Void, Never>)] = []

  init(_ quotes: [Quote]) async throws {
    broadcaster = Broadcaster(snapshot: try Snapshot([Quotes(id: "all", items: quotes)]))
    let (values, feed) = AsyncStream.makeStream(of: [Quote].self)
    self.feed = feed
    task = Task { [weak self] in
      for await quotes in values { await self?.publish(quotes) }
    }
  }

  deinit {
    task?.cancel()
    feed.finish()
    broadcaster.finish()
  }

  nonisolated var snapshot: Snapshot<Quotes> { get async { broadcaster.snapshot } }
  nonisolated var version: Version { get async { broadcaster.version } }

  nonisolated func subscribe(pacing: Pacing) async -> Subscription<Quotes> {
    broadcaster.subscribe(pacing: pacing)
  }

  nonisolated func subscribe(from version: Int, pacing: Pacing) async -> Resumption<Quotes> {
    broadcaster.subscribe(from: version, pacing: pacing)
  }

  /// What the feed calls with each new list of quotes: returns at once, the source's task publishes it.
  func send(_ quotes: [Quote]) {
    sent += 1
    feed.yield(quotes)
  }

  /// Returns once every list sent before the call is published (G10). Not `{}`: the source's own task
  /// publishes, so a list sent a moment ago may still be on its way.
  func settled() async {
    let target = sent
    if done >= target { return }
    await withCheckedContinuation { waiters.append((target, $0)) }
  }

  /// Publishes one list (a list with a repeated id is skipped: bad input never reaches subscribers).
  private func publish(_ quotes: [Quote]) async {
    if let next = try? Snapshot([Quotes(id: "all", items: quotes)]) {
      // The diff runs off this actor (G9); an unchanged list makes no version and no batch (G4).
      _ = try? await broadcaster.publish(next, as: broadcaster.version + 1)
    }
    done += 1
    let due = waiters.filter { $0.target <= done }
    waiters.removeAll { $0.target <= done }
    for entry in due { entry.waiter.resume() }
  }
}

// MARK: - Its check

@Suite("Bringing your own source", .timeLimit(.minutes(30)))
struct BringingYourOwnSourceTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 10, casesVariable: "SIMPLESOURCE_CONFORMANCE_RUNS")

  static func randomQuotes(using random: inout SeededGenerator) -> [Quote] {
    let names = ["aapl", "msft", "goog", "amzn", "nvda", "tsla", "meta", "orcl"]
    return names.shuffled(using: &random).prefix(Int.random(in: 0...names.count, using: &random)).map {
      Quote(id: $0, price: Double(Int.random(in: 1...3, using: &random)))
    }
  }

  @Test("the article's feed-driven source keeps the contract, its settled() included")
  func feedDrivenSource() async {
    var conformance = DataSourceConformance(
      makeSource: { try await Prices([Quote(id: "aapl", price: 1)]) },
      subscriberCount: { $0.broadcaster.subscriberCount }
    ) { prices, random in
      await prices.send(Self.randomQuotes(using: &random))
    }
    conformance.runs = Self.settings.cases
    let report = await conformance.run(seed: Self.settings.seed(forShard: 7))
    print("Conformance, a feed-driven source: \(report)")
    #expect(report.passed, "\(report)")
    #expect(report.batches > 0)
  }

  @Test("settled() waits for what was sent; a subscription holds what the task published")
  func settledWaitsForTheFeed() async throws {
    let prices = try await Prices([])
    let subscription = await prices.subscribe()
    let recorder = await BatchRecorder(subscription)
    for price in 1...50 { await prices.send([Quote(id: "aapl", price: Double(price))]) }
    await prices.settled()
    #expect(await prices.snapshot.item(withID: "aapl")?.price == 50, "settled() returned before the feed")
    #expect(try await subscription.reached(await prices.version))
    await recorder.showing(await prices.snapshot)
    #expect(await recorder.violations.isEmpty)
    await recorder.cancel()
  }
}

/// The mistake the article warns about: `settled() {}` on a source fed by its own task.
///
/// Its feed holds the lists it is sent until the source is next read, then hands them to the source's
/// task: so that task has work left when `settled() {}` returns however the tasks are scheduled (on one
/// core, a feed handed its lists at once can publish them all before the check reads the source).
final class HastyPrices: DataSourceType {
  let prices: Prices
  /// What the source must show once its feed is done: the last list sent.
  let lastSent: Locked<Snapshot<Prices.Quotes>>
  /// Lists sent and not yet handed to the source's task.
  let held = Locked<[[Quote]]>([])

  init(_ prices: Prices) async {
    self.prices = prices
    lastSent = Locked(await prices.snapshot)
  }

  /// Takes `lists`; the source's task gets them at the next read of the source.
  func send(_ lists: [[Quote]]) {
    if let last = lists.last, let state = try? Snapshot([Prices.Quotes(id: "all", items: last)]) {
      lastSent.withLock { $0 = state }
    }
    held.withLock { $0.append(contentsOf: lists) }
  }

  var snapshot: Snapshot<Prices.Quotes> {
    get async {
      let shown = await prices.snapshot
      let lists = held.withLock { held in
        defer { held = [] }
        return held
      }
      if !lists.isEmpty { await prices.send(all: lists) }
      return shown
    }
  }
  var version: Version { get async { await prices.version } }
  func subscribe(pacing: Pacing) async -> Subscription<Prices.Quotes> {
    await prices.subscribe(pacing: pacing)
  }
  func settled() async {}
}

extension Prices {
  /// Sends `lists` in one turn of the actor, as a feed that delivers a burst at once.
  func send(all lists: [[Quote]]) {
    for quotes in lists { send(quotes) }
  }
}

extension BringingYourOwnSourceTests {
  @Test("settled() {} on a source fed by its own task is reported, after one time-out, in the first run")
  func hastySettledIsReported() async {
    var conformance = DataSourceConformance(
      makeSource: {
        let hasty = await HastyPrices(try await Prices([Quote(id: "aapl", price: 1)]))
        return (hasty, hasty)
      },
      expecting: { hasty, _ in hasty.lastSent.withLock { $0 } }
    ) { hasty, random in
      // Many lists in a row: the source's task is still publishing them when settled() returns.
      var lists: [[Quote]] = []
      for _ in 0..<20 { lists.append(Self.randomQuotes(using: &random)) }
      hasty.send(lists)
    }
    conformance.runs = 50
    conformance.timeoutSeconds = 1
    let report = await conformance.run(seed: Self.settings.seed(forShard: 8))
    // The report of a source broken on purpose stays in the assertions: a passing run prints no failure.
    #expect(!report.passed, "\(report)")
    // Whichever check first sees the feed still publishing, the run names G10.
    #expect(report.failures.contains { $0.contains("G10") }, "\(report)")
    #expect(report.runs < conformance.runs, "the check ends after the first failing run")
  }
}
