// What a scope may cost: views shared by their canonical form, a budget of distinct views, and rates of
// subscribes and fresh views as token buckets, explored against an independent model.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

/// Two keys' buckets at 4 a second with bursts of 3, driven by takes of 1, 3 and 4 (past the burst) and by
/// time moving on a quarter second; the model is the generic cell rate algorithm in whole milliseconds:
/// each key's theoretical arrival time, moved on by 250 ms per token.
struct RateBucketsWorld: ExplorableWorld {
  enum Step: CustomStringConvertible {
    case take(Int, String)
    case wait

    var description: String {
      switch self {
      case .take(let count, let key): "take \(count) of \(key)"
      case .wait: "wait 250 ms"
      }
    }
  }

  static let interval = 250  // milliseconds per token: 4 a second
  static let burst = 3
  var machine = WireRateBuckets<String>(rate: WireRate(perSecond: 4, burst: burst))
  var now = 0
  /// The model: when each key's tokens would all be back, in milliseconds.
  var arrival: [String: Int] = [:]

  func steps() -> [Step] {
    [.take(1, "a"), .take(3, "a"), .take(4, "a"), .take(1, "b"), .wait]
  }

  mutating func perform(_ step: Step) throws {
    switch step {
    case .wait:
      now += Self.interval
    case .take(let count, let key):
      let decision = machine.take(count, for: key, now: Double(now) / 1_000)
      let next = max(arrival[key] ?? 0, now) + count * Self.interval
      let allowed = next - now <= Self.burst * Self.interval
      switch decision {
      case .overBurst:
        guard count > Self.burst else { throw ExplorationFailure(description: "over the burst at \(count)") }
      case .admitted:
        guard count <= Self.burst, allowed else {
          throw ExplorationFailure(description: "admitted \(count) of \(key) at \(now) ms; the model refuses")
        }
        arrival[key] = next
      case .refused(let retryAfter):
        guard count <= Self.burst, !allowed else {
          throw ExplorationFailure(description: "refused \(count) of \(key) at \(now) ms; the model admits")
        }
        let wait = next - now - Self.burst * Self.interval
        let told = Int((retryAfter * 1_000).rounded())
        guard told == wait else {
          throw ExplorationFailure(description: "retry after \(told) ms; the model says \(wait)")
        }
      }
    }
    for key in ["a", "b"] {
      let full = (arrival[key] ?? 0) <= now
      let tokens = machine.tokens(key, now: Double(now) / 1_000)
      let expected = Double(Self.burst) - Double(max(0, (arrival[key] ?? 0) - now)) / Double(Self.interval)
      guard abs(tokens - expected) < 1e-9 else {
        throw ExplorationFailure(description: "\(key) holds \(tokens) tokens; the model \(expected)")
      }
      _ = full
    }
    // Memory follows the keys that are not full: a full bucket is dropped at the latest after as many
    // calls as buckets are kept.
    guard machine.keptCount <= 2 else { throw ExplorationFailure(description: "kept \(machine.keptCount)") }
  }

  mutating func checkSettled() throws {}
}

/// A manual clock for a service's rates.
final class RateTestClock: Sendable {
  let time = Locked(0.0)
  /// Moves the time on by `seconds`.
  func advance(_ seconds: Double) { time.withLock { $0 += seconds } }
  var read: @Sendable () -> Double { { [time] in time.withLock { $0 } } }
}

@Suite("What a scope may cost", .timeLimit(.minutes(30)))
struct WireBudgetsTests {
  /// A search that ignores case, declared with its canonical form (`folding`) or without.
  static func search(folding: Bool) -> WireQuery<TestSection> {
    WireQuery(
      "search", parameters: ["text": .string], canonical: folding ? Self.lowercased : nil
    ) { arguments throws(WireQueryRefusal) in
      let text = try arguments.string("text").lowercased()
      return Projection(where: { $0.id.lowercased().contains(text) })
    }
  }

  /// String parameters lowercased.
  @Sendable static func lowercased(_ parameters: [String: WireValue]) -> [String: WireValue] {
    parameters.mapValues { value in
      guard case .string(let text) = value else { return value }
      return .string(text.lowercased())
    }
  }

  static func search(_ text: String) -> WireQueryRequest {
    WireQueryRequest("search", ["text": .string(text)])
  }

  /// A session of `scope` that subscribed to `views` (format 3), and what it received.
  static func subscribe(
    _ service: WireService<TestSection, String>, _ scope: String, _ views: [String: WireQueryRequest?],
    from: Int? = nil, stream: String? = nil, origin: String? = nil
  ) async -> (WireSession<TestSection, String>, WireClient) {
    let client = WireClient()
    let session = service.session(scope: scope, origin: origin) { client.receive($0) }
    await session.receive(bytes(.subscribeViews(views, stream: stream, from: from), format: 3))
    return (session, client)
  }

  @Test("every sequence of takes and waits admits, refuses and tells the retry-after as the cell rate model")
  func rateBucketsExplored() throws {
    try checkEverySequence(
      "Rate buckets", from: RateBucketsWorld(), depthVariable: "SIMPLESOURCE_RATES_DEPTH", defaultDepth: 6)
  }

  @Test("a rate admits after its retry-after, not before; a bucket that refilled is no longer kept")
  func retryAfterAdmits() {
    var buckets = WireRateBuckets<Int>(rate: WireRate(perSecond: 2, burst: 3))
    for _ in 0..<3 { #expect(buckets.take(for: 1, now: 0) == .admitted) }
    #expect(buckets.take(for: 1, now: 0) == .refused(retryAfter: 0.5))
    #expect(buckets.take(for: 1, now: 0.499) == .refused(retryAfter: 0.001))
    #expect(buckets.take(for: 1, now: 0.5) == .admitted)
    #expect(buckets.take(4, for: 2, now: 0.5) == .overBurst)
    #expect(buckets.keptCount == 1)
    // Key 1 is full again after 1.5 s: the next calls sweep it.
    for key in 10..<12 { _ = buckets.take(0, for: key, now: 3.0) }
    #expect(buckets.keptCount == 0)
  }

  @Test(
    "a scope's state follows the source in the lane of its sessions' views on average, rounded up, and comes back as they leave"
  )
  func scopeStateTakesTheLaneOfItsViews() async throws {
    let source = try BasicDataSource(sections: layout("A: ab Ac b"))
    let service = WireService(source: source, stream: "s", queries: [Self.search(folding: true)]) {
      (_: String) in { _ in true }
    }
    let (whole, _) = await Self.subscribe(service, "u", ["all": nil])
    #expect(await service.lane(ofScope: "u") == SubscriptionLane(1))
    let (three, _) = await Self.subscribe(
      service, "u", ["x": Self.search("a"), "y": Self.search("b"), "z": nil])
    // Four views over two sessions.
    #expect(await service.lane(ofScope: "u") == SubscriptionLane(2))
    let plain = service.session(scope: "u") { _ in }
    await plain.receive(bytes(.subscribe(stream: nil, from: nil, query: nil)))
    // Four views over three sessions, rounded up.
    #expect(await service.lane(ofScope: "u") == SubscriptionLane(2))
    await three.close()
    // One view over two sessions, rounded up.
    #expect(await service.lane(ofScope: "u") == SubscriptionLane(1))
    await whole.close()
    #expect(await service.lane(ofScope: "u") == .first)
    await plain.close()
    #expect(await service.lane(ofScope: "u") == nil)
  }

  @Test("a view spelled two ways is one view when its query folds them, and two when it does not")
  func spellingsShareOneView() async throws {
    for folding in [true, false] {
      let source = try BasicDataSource(sections: layout("A: ab Ac b"))
      let service = WireService(source: source, stream: "s", queries: [Self.search(folding: folding)]) {
        (_: String) in { _ in true }
      }
      let (first, firstClient) = await Self.subscribe(service, "u", ["v": Self.search("A")])
      let (second, secondClient) = await Self.subscribe(service, "u", ["v": Self.search("a")])
      #expect(await service.liveViewCount == (folding ? 1 : 2))
      #expect(
        firstClient.state.withLock { $0.errors.isEmpty } && secondClient.state.withLock { $0.errors.isEmpty })
      // Both spellings resume on one stream when folded.
      let streams = Set(
        [Self.search("A"), Self.search("a")].map { request in
          WireService<TestSection, String>.viewStream(
            of: "s", query: (try? Self.search(folding: folding).canonicalRequest(for: request)) ?? request,
            scope: "u")
        })
      #expect(streams.count == (folding ? 1 : 2))
      await first.close()
      await second.close()
      #expect(await service.liveViewCount == 0)
    }
  }

  @Test("a canonical form that changes a parameter's kind is refused as invalidParameters")
  func canonicalKeepsKinds() throws {
    let broken = WireQuery<TestSection>(
      "broken", parameters: ["n": .integer], canonical: { _ in ["n": .string("x")] }
    ) { _ in .all }
    #expect(throws: WireError.self) {
      try broken.canonicalRequest(for: WireQueryRequest("broken", ["n": .integer(1)]))
    }
    #expect((try? broken.canonicalRequest(for: WireQueryRequest("broken", ["n": .integer(1)]))) == nil)
  }

  @Test(
    "the budget refuses the view past it and names it; shared views cost nothing more; a close gives the budget back"
  )
  func viewsPerScope() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let service = WireService(
      source: source, stream: "s", queries: [Self.search(folding: true)],
      limits: WireLimits(viewsPerSubscribe: 16, viewsPerScope: 16, subscribes: nil, freshViews: nil)
    ) { (_: String) in { _ in true } }
    let sixteen = Dictionary(uniqueKeysWithValues: (0..<16).map { ("v\($0)", Self.search("t\($0)")) })
    let (first, firstClient) = await Self.subscribe(service, "mallory", sixteen)
    #expect(firstClient.state.withLock { $0.errors.isEmpty })
    // The 17th distinct view of the scope, in any spelling, is refused, and named.
    let (second, secondClient) = await Self.subscribe(
      service, "mallory", ["a": Self.search("T3"), "b": Self.search("T16")])
    let refusal = try #require(secondClient.state.withLock { $0.errors.first })
    #expect(refusal.code == .limitReached)
    #expect(refusal.detail.contains("view b") && refusal.detail.contains("viewsPerScope"))
    #expect(await !second.isSubscribed)
    #expect(await service.liveViewCount == 16)
    // Views the scope shows already are shared: admitted.
    await second.receive(bytes(.subscribeViews(["a": Self.search("T3")], stream: nil, from: nil), format: 3))
    #expect(await second.isSubscribed)
    // Another scope has its own budget.
    let (other, otherClient) = await Self.subscribe(service, "alice", ["x": Self.search("t99")])
    #expect(otherClient.state.withLock { $0.errors.isEmpty })
    // A session that swaps its own views for as many others stays within the budget.
    let others = Dictionary(uniqueKeysWithValues: (0..<15).map { ("w\($0)", Self.search("u\($0)")) })
    await first.receive(bytes(.subscribeViews(others, stream: nil, from: nil), format: 3))
    #expect(firstClient.state.withLock { $0.errors.isEmpty })
    #expect(await service.liveViewsPerScope["mallory"]?.count == 16)
    await first.close()
    await second.receive(bytes(.subscribeViews(["b": Self.search("t16")], stream: nil, from: nil), format: 3))
    #expect(secondClient.state.withLock { $0.errors.count } == 1)
    for session in [second, other] { await session.close() }
    // What the closed sessions held is given back: no live view, no count.
    #expect(await service.liveViewCount == 0)
    #expect(await service.liveViewsPerScope.isEmpty)
  }

  @Test(
    "an origin's budget counts the views of all its scopes; one its scope shows already costs nothing more; other origins have their own; a close gives it back"
  )
  func viewsPerOrigin() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let service = WireService(
      source: source, stream: "s", queries: [Self.search(folding: true)],
      limits: WireLimits(viewsPerOrigin: 4, subscribes: nil, freshViews: nil)
    ) { (_: String) in { _ in true } }
    // Two users of one address: two views each, four in all (a view is projected per scope).
    let (first, firstClient) = await Self.subscribe(
      service, "u1", ["a": Self.search("t1"), "b": Self.search("t2")], origin: "10.0.0.1")
    let (second, secondClient) = await Self.subscribe(
      service, "u2", ["a": Self.search("t1"), "b": Self.search("t2")], origin: "10.0.0.1")
    #expect(
      firstClient.state.withLock { $0.errors.isEmpty } && secondClient.state.withLock { $0.errors.isEmpty })
    // A third user of the address asks for a fifth view: refused, named; the others stay.
    let (third, thirdClient) = await Self.subscribe(
      service, "u3", ["c": Self.search("t1"), "d": Self.search("T3")], origin: "10.0.0.1")
    let refusal = try #require(thirdClient.state.withLock { $0.errors.first })
    #expect(refusal.code == .limitReached)
    #expect(refusal.detail.contains("view c") && refusal.detail.contains("viewsPerOrigin"))
    #expect(await !third.isSubscribed)
    #expect(await first.isSubscribed)
    #expect(await second.isSubscribed)
    #expect(await service.liveViewCount == 4)
    // A view the address shows already for this scope, in another spelling, costs nothing more.
    let (again, againClient) = await Self.subscribe(
      service, "u1", ["x": Self.search("T1")], origin: "10.0.0.1")
    #expect(againClient.state.withLock { $0.errors.isEmpty })
    // Another address, and a session with no origin, are not held to this one's budget.
    let (elsewhere, elsewhereClient) = await Self.subscribe(
      service, "u3", ["c": Self.search("t5"), "d": Self.search("t6")], origin: "10.0.0.2")
    let (unknown, unknownClient) = await Self.subscribe(service, "u3", ["e": Self.search("t7")])
    #expect(
      elsewhereClient.state.withLock { $0.errors.isEmpty }
        && unknownClient.state.withLock { $0.errors.isEmpty })
    // A session that swaps the views only it shows for as many others stays within the budget.
    await second.receive(bytes(.subscribeViews(["a": Self.search("t1")], stream: nil, from: nil), format: 3))
    #expect(secondClient.state.withLock { $0.errors.isEmpty })
    await first.receive(
      bytes(
        .subscribeViews(["p": Self.search("t8"), "q": Self.search("t9")], stream: nil, from: nil), format: 3))
    #expect(firstClient.state.withLock { $0.errors.isEmpty })
    #expect(await service.viewsOfOrigins["10.0.0.1"]?.count == 4)
    // Closing gives the address's budget back.
    await first.close()
    await third.receive(bytes(.subscribeViews(["d": Self.search("t3")], stream: nil, from: nil), format: 3))
    #expect(thirdClient.state.withLock { $0.errors.count } == 1)
    for session in [second, third, again, elsewhere, unknown] { await session.close() }
    #expect(await service.viewsOfOrigins.isEmpty)
    #expect(await service.liveViewCount == 0)
  }

  @Test(
    "the rows budget refuses the view that would pass it, and any new view at it; shared views cost nothing more; rows follow writes; a close gives them back"
  )
  func rowsPerScope() async throws {
    // "a" matches four rows, "b" and "1" two each, "z" none.
    let source = try BasicDataSource(sections: layout("A: a1 a2 a3 a4 b1 b2"))
    let service = WireService(
      source: source, stream: "s", queries: [Self.search(folding: true)],
      limits: WireLimits(rowsPerScope: 6, subscribes: nil, freshViews: nil)
    ) { (_: String) in { _ in true } }
    let (first, firstClient) = await Self.subscribe(service, "mallory", ["x": Self.search("a")])
    #expect(firstClient.state.withLock { $0.errors.isEmpty })
    // Two more views of two rows each would show eight: refused once projected, the first one named.
    let (second, secondClient) = await Self.subscribe(
      service, "mallory", ["y": Self.search("1"), "z": Self.search("2")])
    let refusal = try #require(secondClient.state.withLock { $0.errors.first })
    #expect(refusal.code == .limitReached)
    #expect(
      refusal.detail.contains("view y") && refusal.detail.contains("would show 8 rows")
        && refusal.detail.contains("rowsPerScope"), "\(refusal.detail)")
    #expect(await !second.isSubscribed)
    #expect(await service.liveViewsPerScope["mallory"]?.count == 1)
    // One of two rows fits exactly.
    await second.receive(bytes(.subscribeViews(["y": Self.search("b")], stream: nil, from: nil), format: 3))
    #expect(secondClient.state.withLock { $0.errors.count } == 1)
    #expect(await second.isSubscribed)
    // At the budget no new view is taken, even one that matches nothing, before it is projected.
    let (third, thirdClient) = await Self.subscribe(service, "mallory", ["w": Self.search("zzz")])
    let atBudget = try #require(thirdClient.state.withLock { $0.errors.first })
    #expect(atBudget.detail.contains("view w") && atBudget.detail.contains("show 6 rows, as many as"))
    // A view the scope shows already, in another spelling, costs nothing more; another scope has its own.
    await third.receive(bytes(.subscribeViews(["v": Self.search("A")], stream: nil, from: nil), format: 3))
    #expect(thirdClient.state.withLock { $0.errors.count } == 1)
    let (other, otherClient) = await Self.subscribe(service, "alice", ["x": Self.search("a")])
    #expect(otherClient.state.withLock { $0.errors.isEmpty })
    // Closing gives the rows back; then rows that writes add to a view count against the next subscribe.
    for session in [second, third] { await session.close() }
    try await source.appendItems([TestItem("a5"), TestItem("a6")], toSection: "A")
    await first.settled()
    let (fourth, fourthClient) = await Self.subscribe(service, "mallory", ["u": Self.search("zzz")])
    let grown = try #require(fourthClient.state.withLock { $0.errors.first })
    #expect(grown.detail.contains("show 6 rows"), "\(grown.detail)")
    await first.close()
    await fourth.receive(bytes(.subscribeViews(["u": Self.search("b")], stream: nil, from: nil), format: 3))
    #expect(fourthClient.state.withLock { $0.errors.count } == 1)
    for session in [fourth, other] { await session.close() }
    #expect(await service.liveViewsPerScope.isEmpty)
  }

  @Test("an origin's rows budget counts the views of all its scopes; other origins have their own")
  func rowsPerOrigin() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 a2 a3 a4 b1 b2"))
    let service = WireService(
      source: source, stream: "s", queries: [Self.search(folding: true)],
      limits: WireLimits(rowsPerOrigin: 6, subscribes: nil, freshViews: nil)
    ) { (_: String) in { _ in true } }
    let (first, firstClient) = await Self.subscribe(
      service, "u1", ["x": Self.search("a")], origin: "10.0.0.1")
    let (second, secondClient) = await Self.subscribe(
      service, "u2", ["x": Self.search("a")], origin: "10.0.0.1")
    let refusal = try #require(secondClient.state.withLock { $0.errors.first })
    #expect(firstClient.state.withLock { $0.errors.isEmpty })
    #expect(
      refusal.detail.contains("this address's views would show 8 rows")
        && refusal.detail.contains("rowsPerOrigin"), "\(refusal.detail)")
    let (elsewhere, elsewhereClient) = await Self.subscribe(
      service, "u2", ["x": Self.search("a")], origin: "10.0.0.2")
    #expect(elsewhereClient.state.withLock { $0.errors.isEmpty })
    // A session that swaps its only view for another is counted without the one it gives up.
    await first.receive(bytes(.subscribeViews(["x": Self.search("a1")], stream: nil, from: nil), format: 3))
    #expect(firstClient.state.withLock { $0.errors.isEmpty })
    await second.receive(bytes(.subscribeViews(["x": Self.search("a")], stream: nil, from: nil), format: 3))
    #expect(secondClient.state.withLock { $0.errors.count } == 1)
    for session in [first, second, elsewhere] { await session.close() }
    #expect(await service.viewsOfOrigins.isEmpty)
  }

  @Test("the subscribe rate refuses the burst's next with a retry-after, and admits it after the retry-after")
  func subscribeRate() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let clock = RateTestClock()
    let service = WireService(
      source: source, stream: "s",
      limits: WireLimits(subscribes: WireRate(perSecond: 2, burst: 3), freshViews: nil)
    ) { (_: String) in { _ in true } }
    await service.useClock(clock.read)
    var sessions: [WireSession<TestSection, String>] = []
    for _ in 0..<3 {
      let (session, client) = await Self.subscribe(service, "u", ["all": nil])
      #expect(client.state.withLock { $0.errors.isEmpty })
      sessions.append(session)
    }
    let (late, lateClient) = await Self.subscribe(service, "u", ["all": nil])
    let refusal = try #require(lateClient.state.withLock { $0.errors.first })
    #expect(refusal.code == .rateLimited && refusal.retryAfter == 0.5)
    // Another scope is not slowed.
    let (other, otherClient) = await Self.subscribe(service, "v", ["all": nil])
    #expect(otherClient.state.withLock { $0.errors.isEmpty })
    clock.advance(0.499)
    await late.receive(bytes(.subscribeViews(["all": nil], stream: nil, from: nil), format: 3))
    #expect(lateClient.state.withLock { $0.errors.map(\.code) } == [.rateLimited, .rateLimited])
    clock.advance(0.5)
    await late.receive(bytes(.subscribeViews(["all": nil], stream: nil, from: nil), format: 3))
    #expect(lateClient.state.withLock { $0.errors.count } == 2)
    #expect(await late.isSubscribed)
    for session in sessions + [late, other] { await session.close() }
  }

  @Test(
    "an origin is rated whatever its scopes; a refusal by the origin's rate takes nothing from the scope's")
  func originRates() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let clock = RateTestClock()
    let service = WireService(
      source: source, stream: "s", queries: [Self.search(folding: true)],
      limits: WireLimits(
        subscribes: WireRate(perSecond: 1, burst: 2), freshViews: nil,
        subscribesPerOrigin: WireRate(perSecond: 1, burst: 2),
        freshViewsPerOrigin: WireRate(perSecond: 1, burst: 2))
    ) { (_: String) in { _ in true } }
    await service.useClock(clock.read)
    let address = "192.0.2.7"
    var sessions: [WireSession<TestSection, String>] = []
    for scope in ["a", "b"] {
      let (session, client) = await Self.subscribe(service, scope, ["all": nil], origin: address)
      #expect(client.state.withLock { $0.errors.isEmpty })
      sessions.append(session)
    }
    // A third scope from the same address: refused by the address's rate, its own scope untouched.
    let (third, thirdClient) = await Self.subscribe(service, "c", ["all": nil], origin: address)
    let refusal = try #require(thirdClient.state.withLock { $0.errors.first })
    #expect(refusal.code == .rateLimited && refusal.retryAfter == 1.0)
    #expect(refusal.detail.contains("origin") && refusal.detail.contains("subscribesPerOrigin"))
    // Scope c's own bucket is full: from elsewhere it subscribes twice at once.
    for _ in 0..<2 {
      let (session, client) = await Self.subscribe(service, "c", ["all": nil], origin: "198.51.100.1")
      #expect(client.state.withLock { $0.errors.isEmpty })
      sessions.append(session)
    }
    // Fresh views per origin: two at once from the address.
    clock.advance(10.0)
    let (viewer, viewerClient) = await Self.subscribe(
      service, "d", ["x": Self.search("a"), "y": Self.search("b"), "z": Self.search("c")], origin: address)
    #expect(viewerClient.state.withLock { $0.errors.map(\.code) } == [.limitReached])
    await viewer.receive(bytes(.subscribeViews(["x": Self.search("a")], stream: nil, from: nil), format: 3))
    #expect(viewerClient.state.withLock { $0.errors.count } == 1)
    for session in sessions + [third, viewer] { await session.close() }
  }

  @Test("a retry-after carries a jitter of up to half the wait")
  func jitter() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let clock = RateTestClock()
    let service = WireService(
      source: source, stream: "s", limits: WireLimits(subscribes: WireRate(perSecond: 1, burst: 1))
    ) { (_: String) in { _ in true } }
    await service.useClock(clock.read, jitter: { $0 * Double.random(in: 0..<0.5) })
    let (first, _) = await Self.subscribe(service, "u", ["all": nil])
    var waits: [Double] = []
    let (late, client) = await Self.subscribe(service, "u", ["all": nil])
    for _ in 0..<20 {
      await late.receive(bytes(.subscribeViews(["all": nil], stream: nil, from: nil), format: 3))
    }
    waits = client.state.withLock { $0.errors.compactMap(\.retryAfter) }
    #expect(waits.count == 21)
    #expect(waits.allSatisfy { $0 >= 1.0 && $0 <= 1.5 }, "1 s and up to half of it, to the millisecond")
    #expect(Set(waits).count > 1)
    await first.close()
    await late.close()
  }

  @Test(
    "fresh views are rated; a shared view is not fresh; a resume of views no one holds counts as fresh ones")
  func freshViewRate() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let clock = RateTestClock()
    let service = WireService(
      source: source, stream: "s", queries: [Self.search(folding: true)], keepingIdleViews: 0,
      limits: WireLimits(subscribes: nil, freshViews: WireRate(perSecond: 1, burst: 2))
    ) { (_: String) in { _ in true } }
    await service.useClock(clock.read)
    let (first, firstClient) = await Self.subscribe(
      service, "u", ["x": Self.search("a"), "y": Self.search("b")])
    #expect(firstClient.state.withLock { $0.errors.isEmpty })
    // Shared: not fresh, admitted although the bucket is empty.
    let (second, secondClient) = await Self.subscribe(service, "u", ["x": Self.search("A")])
    #expect(secondClient.state.withLock { $0.errors.isEmpty })
    let (third, thirdClient) = await Self.subscribe(service, "u", ["z": Self.search("c")])
    #expect(thirdClient.state.withLock { $0.errors.map(\.code) } == [.rateLimited])
    #expect(thirdClient.state.withLock { $0.errors.first?.retryAfter } == 1.0)
    // More fresh views at once than the burst never fit: a limit, not a rate.
    let three = Dictionary(uniqueKeysWithValues: (0..<3).map { ("n\($0)", Self.search("n\($0)")) })
    await third.receive(bytes(.subscribeViews(three, stream: nil, from: nil), format: 3))
    #expect(thirdClient.state.withLock { $0.errors.last?.code } == .limitReached)
    // A resume of views no one holds (none is kept idle) costs what a fresh subscribe costs.
    let version = firstClient.state.withLock { $0.version }
    let stream = firstClient.state.withLock { $0.stream }
    await first.close()
    await second.close()
    clock.advance(1.0)
    let (resumed, resumedClient) = await Self.subscribe(
      service, "u", ["x": Self.search("a"), "y": Self.search("b")], from: version, stream: stream)
    #expect(resumedClient.state.withLock { $0.errors.map(\.code) } == [.rateLimited])
    clock.advance(1.0)
    await resumed.receive(
      bytes(
        .subscribeViews(["x": Self.search("a"), "y": Self.search("b")], stream: stream, from: version),
        format: 3))
    #expect(resumedClient.state.withLock { $0.errors.count } == 1)
    #expect(await resumed.isSubscribed)
    for session in [third, resumed] { await session.close() }
  }

  @Test(
    "an error's retry-after crosses the wire in seconds and back; one that is not a duration is malformed")
  func retryAfterOnTheWire() throws {
    let coder = WireCoder()
    let error = WireError(.rateLimited, "slow down", retryAfter: 1.25)
    let data = coder.encode(WireMessage<TestSection>.error(error))
    #expect(String(decoding: data, as: UTF8.self).contains("\"retryAfter\":1.25"))
    guard case .error(let decoded) = try coder.decode(data, as: TestSection.self) else {
      Issue.record("not an error message")
      return
    }
    #expect(decoded == error)
    let bad = Data(
      #"{"format":"simplesource","formatVersion":2,"type":"error","code":"rateLimited","detail":"x","retryAfter":-1}"#
        .utf8)
    #expect(throws: WireError.self) { try coder.decode(bad, as: TestSection.self) }
  }
}
