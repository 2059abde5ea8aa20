// Limits per scope: the admissions machine explored against a model, and a service that refuses a scope's
// subscribe past its limit with a typed error while other scopes go on.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

/// Three sessions and two scopes with a limit of two, driven by admits, leaves and restores; the model is
/// a plain map from session to scope.
struct AdmissionsWorld: ExplorableWorld {
  enum Step: CustomStringConvertible {
    case admit(Int, String)
    case leave(Int)
    /// A subscribe admitted, then refused: counted again where it counted before.
    case refusedSubscribe(Int, String)

    var description: String {
      switch self {
      case .admit(let session, let scope): "admit \(session) to \(scope)"
      case .leave(let session): "leave \(session)"
      case .refusedSubscribe(let session, let scope): "refused subscribe of \(session) to \(scope)"
      }
    }
  }

  static let limit = 2
  var machine = ScopeAdmissions<String, Int>()
  var model: [Int: String] = [:]

  func steps() -> [Step] {
    (0..<3).flatMap { session in
      [Step.leave(session)]
        + ["a", "b"].flatMap { [Step.admit(session, $0), .refusedSubscribe(session, $0)] }
    }
  }

  mutating func perform(_ step: Step) throws {
    switch step {
    case .admit(let session, let scope):
      let fits = model[session] == scope || model.values.filter { $0 == scope }.count < Self.limit
      let admitted = machine.admit(session, to: scope, limit: Self.limit)
      guard admitted == fits else {
        throw ExplorationFailure(description: "admitted \(admitted), model \(fits)")
      }
      if fits { model[session] = scope }
    case .leave(let session):
      machine.leave(session)
      model[session] = nil
    case .refusedSubscribe(let session, let scope):
      let before = machine.scope(of: session)
      if machine.admit(session, to: scope, limit: Self.limit) { machine.restore(session, to: before) }
    }
    for session in 0..<3 where machine.scope(of: session) != model[session] {
      throw ExplorationFailure(description: "session \(session) in \(machine.scope(of: session) ?? "-")")
    }
    let counted = machine.sessions.mapValues(\.count)
    let expected = Dictionary(grouping: model.values, by: { $0 }).mapValues(\.count)
    guard counted == expected else {
      throw ExplorationFailure(description: "counts \(counted), model \(expected)")
    }
    guard counted.values.allSatisfy({ $0 <= Self.limit }) else {
      throw ExplorationFailure(description: "over the limit: \(counted)")
    }
  }

  mutating func checkSettled() throws {}
}

@Suite("Limits per scope", .timeLimit(.minutes(30)))
struct WireLimitsTests {
  @Test(
    "every sequence of admits, leaves and refused subscribes counts each session in one scope, within the limit"
  )
  func admissionsExplored() throws {
    try checkEverySequence(
      "Scope admissions", from: AdmissionsWorld(), depthVariable: "SIMPLESOURCE_ADMISSIONS_DEPTH",
      defaultDepth: 4)
  }

  @Test("a service with no scope limits no subscriptions by default: its clients all share the one scope")
  func noScopeIsNotLimited() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let service = WireService(source: source, stream: "s")
    var sessions: [WireSession<TestSection, NoScope>] = []
    for _ in 0..<(WireLimits().subscriptionsPerScope + 6) {
      let (session, client) = await service.connect(subscribe(nil))
      #expect(client.state.withLock { $0.errors.isEmpty })
      #expect(await session.isSubscribed)
      sessions.append(session)
    }
    for session in sessions { await session.close() }
  }

  @Test(
    "a scope past its subscriptions is refused with limitReached; other scopes go on; a close frees a place")
  func subscriptionsPerScope() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let service = WireService(
      source: source, stream: "s", queries: WireServiceTests.queries,
      limits: WireLimits(subscriptionsPerScope: 2, viewsPerSubscribe: 3)
    ) { (_: String) in { _ in true } }
    func connect(_ user: String, _ query: WireQueryRequest? = nil) async -> (
      WireSession<TestSection, String>, WireClient
    ) {
      let client = WireClient()
      let session = service.session(scope: user) { client.receive($0) }
      await session.receive(subscribe(query))
      return (session, client)
    }
    let (first, _) = await connect("mallory")
    // A refused subscribe of a new session does not take a place.
    let (unknown, unknownClient) = await connect("mallory", WireQueryRequest("nothing"))
    #expect(unknownClient.state.withLock { $0.errors.map(\.code) } == [.unknownQuery])
    let (second, _) = await connect("mallory")
    let (third, thirdClient) = await connect("mallory")
    #expect(thirdClient.state.withLock { $0.errors.map(\.code) } == [.limitReached])
    #expect(await !third.isSubscribed)
    // A second subscribe of a counted session is not another place.
    await second.receive(subscribe(WireQueryRequest("prefix", ["prefix": .string("a")])))
    #expect(await second.isSubscribed)
    let (other, otherClient) = await connect("alice")
    #expect(await other.isSubscribed && otherClient.state.withLock { $0.errors.isEmpty })
    // Moving into a full scope is refused and ends the old subscription.
    await other.setScope("mallory")
    #expect(otherClient.state.withLock { $0.errors.map(\.code) } == [.limitReached])
    #expect(await !other.isSubscribed)
    await first.close()
    await third.receive(subscribe(nil))
    #expect(await third.isSubscribed)
    // Too many views in one subscribe.
    let views = Dictionary(uniqueKeysWithValues: (0..<4).map { ("v\($0)", WireQueryRequest?.none) })
    await other.setScope("bob")
    await other.receive(bytes(.subscribeViews(views, stream: nil, from: nil), format: 3))
    #expect(otherClient.state.withLock { $0.errors.map(\.code) } == [.limitReached, .limitReached])
    for session in [second, unknown, third, other] { await session.close() }
  }
}
