// Clients that write: a RemoteDataSource's edits shown at once, sent to a real WireService, rebased on
// every state the server sends, confirmed or rolled back, across dropped connections. Every ordering of
// those events to a depth, and long random runs with two clients; after settling, every client shows the
// server's state, every edit was answered once, and every batch its views received was valid.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

extension RemoteDataSource where Section == TestSection {
  /// What the source breaks of its own promise: it shows the state held with the pending edits on top.
  func pendingViolations() -> [String] {
    var expected = held
    for edit in pending.edits {
      if let next = try? expected.applying({ (transaction) throws(DataSourceError<String, String>) in
        try edit.apply(to: &transaction)
      }) {
        expected = next
      }
    }
    let shown = broadcaster.snapshot
    return shown.sections == expected.sections ? [] : ["shows \(shown), held + pending is \(expected)"]
  }
}

/// One server (a BasicDataSource behind a WireService that takes edits), clients following it through
/// queues the test delivers by hand, and another writer.
final class EditingWorld: Sendable {
  enum Step: Int, CaseIterable, CustomStringConvertible {
    case clientEdit, otherWriter, deliverUp, deliverDown, reconnect
    var description: String {
      switch self {
      case .clientEdit: "edit"
      case .otherWriter: "other"
      case .deliverUp: "up"
      case .deliverDown: "down"
      case .reconnect: "reconnect"
      }
    }
  }

  final class Client: Sendable {
    let remote: RemoteDataSource<TestSection>
    let recorder: BatchRecorder<TestSection>
    let up = Locked<[WireMessage<TestSection>]>([])
    let down = Locked<[Data]>([])
    let session: Locked<WireSession<TestSection, NoScope>?> = Locked(nil)
    let submitted = Locked<[String]>([])

    init(remote: RemoteDataSource<TestSection>, recorder: BatchRecorder<TestSection>) {
      self.remote = remote
      self.recorder = recorder
    }
  }

  let source: BasicDataSource<TestSection>
  let service: WireService<TestSection, NoScope>
  let clients: [Client]
  let counter = Locked(0)
  /// How the edits ended, over every world of a test: confirmed, refused.
  static let outcomes = Locked((confirmed: 0, refused: 0))

  private init(
    source: BasicDataSource<TestSection>, service: WireService<TestSection, NoScope>, clients: [Client]
  ) {
    self.source = source
    self.service = service
    self.clients = clients
  }

  static func make(clients count: Int) async throws -> EditingWorld {
    let source = try BasicDataSource(sections: layout("A: a b c | B: d"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    var clients: [Client] = []
    for index in 0..<count {
      let remote = RemoteDataSource<TestSection>(clientID: "c\(index)")
      let recorder = await BatchRecorder(await remote.subscribe(), refreshStyle: .reconfigure)
      clients.append(Client(remote: remote, recorder: recorder))
    }
    let world = EditingWorld(source: source, service: service, clients: clients)
    for client in clients { await world.connect(client) }
    return world
  }

  /// A new connection: a new session, and the client's subscribe and pending edits queued to it.
  func connect(_ client: Client) async {
    let down = client.down
    client.session.withLock { $0 = service.session { data in down.withLock { $0.append(data) } } }
    let up = client.up
    await client.remote.connect { message in up.withLock { $0.append(message) } }
  }

  func next() -> Int {
    counter.withLock {
      $0 += 1; return $0
    }
  }

  func perform(_ step: Step, client index: Int = 0) async throws {
    let client = clients[index]
    switch step {
    case .clientEdit:
      let shown = await client.remote.snapshot.sections
      let items = shown.flatMap(\.items)
      let number = next()
      let operations: [WireOperation<TestSection>]
      switch number % 4 {
      case 0 where items.count > 1: operations = [.move(items[0].id, .end(of: shown.last!.id))]
      case 1 where !items.isEmpty: operations = [.insert([TestItem("n\(number)")], .before(items[0].id))]
      case 2 where items.count > 2: operations = [.delete([items.last!.id])]
      case 3 where !items.isEmpty:
        operations = [
          .replace(TestItem(items[0].id, version: items[0].version + 1)), .move(items[0].id, .end(of: "A")),
        ]
      default: operations = [.insert([TestItem("n\(number)")], .end(of: "A"))]
      }
      if let id = try? await client.remote.submit(operations) { client.submitted.withLock { $0.append(id) } }
    case .otherWriter:
      let items = (await source.snapshot).sections.flatMap(\.items)
      let number = next()
      // A delete refuses the client's pending edits that name the item.
      switch number % 3 {
      case 0 where items.count > 2: _ = try? await source.deleteItems([items[0].id])
      case 1 where items.count > 1: _ = try? await source.moveItem(items.last!.id, before: items[0].id)
      default: _ = try? await source.appendItems([TestItem("s\(number)")], toSection: "B")
      }
      await source.settled()
    case .deliverUp:
      let messages = client.up.withLock { messages in
        defer { messages = [] }; return messages
      }
      guard let session = client.session.withLock({ $0 }) else { return }
      for message in messages { await session.receive(bytes(message)) }
    case .deliverDown:
      if let session = client.session.withLock({ $0 }) { await session.settled() }
      let data = client.down.withLock { $0.isEmpty ? nil : $0.removeFirst() }
      if let data {
        do {
          try await client.remote.receive(data)
        } catch {
          let message = (try? WireCoder().read(data, as: TestSection.self).0).map { "\($0)" } ?? "?"
          throw ExplorationFailure(description: "the client refused \(message): \(error)")
        }
      }
    case .reconnect:
      // The old connection ends first: what it had in flight, both ways, is lost.
      await client.remote.disconnect()
      if let session = client.session.withLock({ $0 }) { await session.close() }
      client.up.withLock { $0 = [] }
      client.down.withLock { $0 = [] }
      await connect(client)
    }
    let violations = await client.remote.pendingViolations()
    if !violations.isEmpty { throw ExplorationFailure(description: "\(violations)") }
  }

  /// Delivers everything both ways until nothing is left, then checks every promise.
  func settleAndCheck() async throws {
    for _ in 0..<20 {
      var moved = false
      for (index, client) in clients.enumerated() {
        if !client.up.withLock({ $0.isEmpty }) {
          moved = true
          try await perform(.deliverUp, client: index)
        }
        if let session = client.session.withLock({ $0 }) { await session.settled() }
        while !client.down.withLock({ $0.isEmpty }) {
          moved = true
          try await perform(.deliverDown, client: index)
        }
      }
      if !moved { break }
    }
    let truth = await source.snapshot
    for (index, client) in clients.enumerated() {
      let remote = client.remote
      guard await remote.snapshot.sections == truth.sections else {
        throw ExplorationFailure(
          description: "client \(index) shows \(await remote.snapshot), the server \(truth)")
      }
      guard await remote.pendingEditCount == 0 else {
        throw ExplorationFailure(
          description: "client \(index) still has \(await remote.pendingEditCount) pending")
      }
      for id in client.submitted.withLock({ $0 }) {
        do {
          _ = try await remote.answer(to: id)
          Self.outcomes.withLock { $0.confirmed += 1 }
        } catch  where error.code == .unanswered {
          throw ExplorationFailure(description: "client \(index): edit \(id) never answered")
        } catch {
          Self.outcomes.withLock { $0.refused += 1 }
        }
      }
      guard await client.recorder.showing(truth) else {
        throw ExplorationFailure(description: "client \(index)'s view never showed the server's state")
      }
      let violations = await client.recorder.violations
      if !violations.isEmpty { throw ExplorationFailure(description: "client \(index): \(violations)") }
    }
    for client in clients {
      if let session = client.session.withLock({ $0 }) { await session.close() }
    }
  }
}

@Suite("Optimistic edits", .timeLimit(.minutes(10)))
struct OptimisticEditTests {
  static let settings = RandomTestSettings.current(defaultCases: 60, casesVariable: "SIMPLESOURCE_EDIT_RUNS")

  /// Every sequence of a client's edits, another writer's edits (some deleting what a pending edit names,
  /// so the server refuses it), deliveries of the client's messages to the server and of the server's, one
  /// message at a time, and reconnections (dropping what was in flight both ways), to the depth
  /// `SIMPLESOURCE_EDIT_DEPTH` gives (5 by default, 6 in CI). At every step the client shows the server's
  /// state it holds with its pending edits on top; after settling it shows the server's state, nothing is
  /// pending, every edit was answered, and its view received only valid batches.
  @Test("every ordering of edits, other writers, answers and reconnects converges")
  func everyOrdering() async throws {
    let depth = ProcessInfo.processInfo.environment["SIMPLESOURCE_EDIT_DEPTH"].flatMap(Int.init) ?? 5
    let steps = EditingWorld.Step.allCases
    var sequences = 0
    var sequence = [Int](repeating: 0, count: depth)
    repeat {
      let world = try await EditingWorld.make(clients: 1)
      let trace = sequence.map { steps[$0] }
      do {
        for step in trace { try await world.perform(step) }
        try await world.settleAndCheck()
      } catch {
        Issue.record("after \(trace): \(error)")
        return
      }
      sequences += 1
      var position = depth - 1
      while position >= 0 {
        sequence[position] += 1
        if sequence[position] < steps.count { break }
        sequence[position] = 0
        position -= 1
      }
      if position < 0 { break }
    } while true
    let outcomes = EditingWorld.outcomes.withLock { $0 }
    print("Optimistic edits: \(sequences) orderings of \(depth) events converged (edits so far: \(outcomes))")
    #expect(outcomes.confirmed > 0 && outcomes.refused > 0, "both answers happen")
  }

  @Test("random runs with two clients: both converge on the server, every batch valid")
  func randomRuns() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 60))
    for run in 0..<settings.cases {
      let world = try await EditingWorld.make(clients: 2)
      let picks = (0..<30).map { _ in
        (EditingWorld.Step.allCases.randomElement(using: &random)!, Int.random(in: 0..<2, using: &random))
      }
      do {
        for (step, client) in picks { try await world.perform(step, client: client) }
        try await world.settleAndCheck()
      } catch {
        Issue.record("run \(run): \(error); \(settings.replay)")
        return
      }
    }
    print(
      "Optimistic edits: \(settings.cases) random runs of 30 events, two clients, converged; \(settings.replay)"
    )
  }
}
