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

/// A replica store whose unflushed appends a power loss takes: it tracks how much of the journal reached
/// the disk (all of it after a compaction; after an append, all of it only when appends are flushed), and
/// ``losePower(keeping:)`` cuts the journal back to a point after that, with zeros where the file grew.
final class PowerLossStore<Section: SectionType>: ReplicaStore, Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  let store: FileReplicaStore<Section>
  /// The journal's length known to be on the disk.
  let flushed = Locked(0)

  init(_ store: FileReplicaStore<Section>) { self.store = store }

  var journal: URL { store.directory.appendingPathComponent("journal") }
  var journalLength: Int {
    ((try? FileManager.default.attributesOfItem(atPath: journal.path))?[.size] as? Int) ?? 0
  }
  var forgetsAppends: Bool { store.forgetsAppends }

  func load() throws(ReplicaStoreError) -> (state: ReplicaState<Section>?, journal: [WireMessage<Section>]) {
    let loaded = try store.load()
    flushed.withLock { $0 = journalLength }
    return loaded
  }

  func append(_ message: WireMessage<Section>) throws(ReplicaStoreError) -> Bool {
    let compacts = try store.append(message)
    if !store.forgetsAppends { flushed.withLock { $0 = journalLength } }
    return compacts
  }

  func compact(_ state: ReplicaState<Section>) throws(ReplicaStoreError) {
    try store.compact(state)
    flushed.withLock { $0 = journalLength }
  }

  /// Cuts the journal to a length between what was flushed and what was written, chosen by `choice`,
  /// and every third time pads it with zeros.
  func losePower(keeping choice: Int) {
    let (written, kept) = (journalLength, flushed.withLock { $0 })
    guard written > kept, let handle = try? FileHandle(forWritingTo: journal) else { return }
    defer { try? handle.close() }
    let cut = kept + choice % (written - kept + 1)
    try? handle.truncate(atOffset: UInt64(cut))
    if choice % 3 == 0 { try? handle.write(contentsOf: Data(count: 512)) }
  }
}

/// One server (a BasicDataSource behind a WireService that takes edits), clients following it through
/// queues the test delivers by hand, and another writer.
final class EditingWorld: Sendable {
  enum Step: Int, CaseIterable, CustomStringConvertible {
    case clientEdit, otherWriter, deliverUp, deliverDown, reconnect, restart, powerLoss, cleanStart
    var description: String {
      switch self {
      case .clientEdit: "edit"
      case .otherWriter: "other"
      case .deliverUp: "up"
      case .deliverDown: "down"
      case .reconnect: "reconnect"
      case .restart: "restart"
      case .powerLoss: "power loss"
      case .cleanStart: "clean start"
      }
    }
  }

  final class Client: Sendable {
    /// The source and the view following it; both replaced when the client restarts from its store.
    let current: Locked<(remote: RemoteDataSource<TestSection>, recorder: BatchRecorder<TestSection>)>
    var remote: RemoteDataSource<TestSection> { current.withLock { $0.remote } }
    var recorder: BatchRecorder<TestSection> { current.withLock { $0.recorder } }
    /// The folder of the client's replica store.
    let folder: URL
    let up = Locked<[WireMessage<TestSection>]>([])
    let down = Locked<[Data]>([])
    let session: Locked<WireSession<TestSection, NoScope>?> = Locked(nil)
    let submitted = Locked<[String]>([])
    /// The store of the current source, which a power loss cuts.
    let store = Locked<PowerLossStore<TestSection>?>(nil)
    /// When the store flushes.
    let sync: FileReplicaStore<TestSection>.Sync

    init(
      remote: RemoteDataSource<TestSection>, recorder: BatchRecorder<TestSection>, folder: URL,
      sync: FileReplicaStore<TestSection>.Sync
    ) {
      current = Locked((remote, recorder))
      self.folder = folder
      self.sync = sync
    }

    /// A store in `folder`, kept as the one a power loss cuts.
    func newStore() -> PowerLossStore<TestSection> {
      // Compacted whenever the journal outgrows the state: most steps compact.
      let store = PowerLossStore(
        FileReplicaStore<TestSection>(directory: folder, sync: sync, compactingAfter: 0))
      self.store.withLock { $0 = store }
      return store
    }
  }

  let source: BasicDataSource<TestSection>
  let service: WireService<TestSection, NoScope>
  let clients: [Client]
  let counter = Locked(0)
  /// Each edit id the server made, in order: an edit sent again (after a reconnect or a restart) is
  /// answered without being made twice.
  let made: Locked<[String]>
  /// Each edit id the server refused.
  let refused: Locked<Set<String>>
  /// Every edit id any client submitted, across restarts: each must end made or refused by the server.
  let everSubmitted = Locked<Set<String>>([])
  /// How the edits ended, over every world of a test: confirmed, refused.
  static let outcomes = Locked((confirmed: 0, refused: 0))

  private init(
    source: BasicDataSource<TestSection>, service: WireService<TestSection, NoScope>, clients: [Client],
    made: Locked<[String]>, refused: Locked<Set<String>>
  ) {
    self.source = source
    self.service = service
    self.clients = clients
    self.made = made
    self.refused = refused
  }

  deinit {
    for client in clients { try? FileManager.default.removeItem(at: client.folder) }
  }

  /// A world of `count` clients; with `stores`, each keeps a replica store (and may restart from it).
  static func make(
    clients count: Int, stores: Bool = true, sync: FileReplicaStore<TestSection>.Sync = .compactions
  ) async throws -> EditingWorld {
    let source = try BasicDataSource(sections: layout("A: a b c | B: d"))
    let made = Locked<[String]>([])
    let transactions = WireWriter<TestSection, NoScope>.transactions(on: source)
    let refused = Locked<Set<String>>([])
    let writer = WireWriter<TestSection, NoScope> { (edit, scope, visible) throws(WireError) in
      do throws(WireError) {
        let version = try await transactions.write(edit, scope, visible)
        made.withLock { $0.append(edit.id) }
        return version
      } catch {
        refused.withLock { _ = $0.insert(edit.id) }
        throw error
      }
    }
    let service = WireService(source: source, stream: "s", edits: writer)
    var clients: [Client] = []
    for index in 0..<count {
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "replica-\(UUID().uuidString)")
      let placeholder = RemoteDataSource<TestSection>()
      let client = Client(
        remote: placeholder, recorder: await BatchRecorder(await placeholder.subscribe()), folder: folder,
        sync: sync)
      let remote = RemoteDataSource<TestSection>(
        clientID: "c\(index)", store: stores ? client.newStore() : nil)
      let recorder = await BatchRecorder(await remote.subscribe(), refreshStyle: .reconfigure)
      client.current.withLock { $0 = (remote, recorder) }
      clients.append(client)
    }
    let world = EditingWorld(source: source, service: service, clients: clients, made: made, refused: refused)
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
      if let id = try? await client.remote.submit(operations) {
        client.submitted.withLock { $0.append(id) }
        // A number counted again after a restart must not name an edit made before: the server would
        // answer the new edit with the old one's answer, and never make it.
        guard everSubmitted.withLock({ $0.insert(id).inserted }) else {
          throw ExplorationFailure(description: "the edit id \(id) was used for a second edit")
        }
      }
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
    case .restart, .powerLoss, .cleanStart:
      // The client's process ends without a word: its connection drops with what was in flight, and a new
      // source starts from the store (another client id offered: the store's wins). A power loss first
      // takes what the store had not flushed; a clean start finds no store, and is offered its old id.
      if let session = client.session.withLock({ $0 }) { await session.close() }
      client.up.withLock { $0 = [] }
      client.down.withLock { $0 = [] }
      let before = await client.remote.pending.entries.map(\.id)
      if step == .powerLoss { client.store.withLock { $0 }?.losePower(keeping: next()) }
      if step == .cleanStart { try? FileManager.default.removeItem(at: client.folder) }
      let remote = RemoteDataSource<TestSection>(
        clientID: step == .cleanStart ? "c\(index)" : "new-\(next())", store: client.newStore())
      if let error = await remote.storeError { throw ExplorationFailure(description: "restarting: \(error)") }
      // What the store forgot of the pending edits, and the server never got, is forgotten: allowed for
      // an edit never sent (its client saw it pending, never confirmed).
      let kept = Set(await remote.pending.entries.map(\.id))
      let answered = Set(made.withLock { $0 }).union(refused.withLock { $0 })
      let forgotten = before.filter { !kept.contains($0) && !answered.contains($0) }
      // A store that flushes every record forgets nothing it journalled, whatever the power does.
      if client.sync == .everyRecord && step == .powerLoss && !forgotten.isEmpty {
        throw ExplorationFailure(description: "a power loss under everyRecord forgot the edits \(forgotten)")
      }
      everSubmitted.withLock { $0.subtract(forgotten) }
      let recorder = await BatchRecorder(await remote.subscribe(), refreshStyle: .reconfigure)
      client.current.withLock { $0 = (remote, recorder) }
      // Edits answered before the end were answered; the pending ones are sent again and must be.
      let pending = await remote.pending.entries.map(\.id)
      client.submitted.withLock { $0 = pending }
      await connect(client)
      // The client comes back before its next event: it holds the server's state again (a clean start
      // holds nothing until then), so the next edit is one it can make.
      if step != .restart { try await comeBack(index) }
    }
    let violations = await client.remote.pendingViolations()
    if !violations.isEmpty { throw ExplorationFailure(description: "\(violations)") }
  }

  /// Delivers the client's messages, then the server's answers to them.
  func comeBack(_ index: Int) async throws {
    try await perform(.deliverUp, client: index)
    if let session = clients[index].session.withLock({ $0 }) { await session.settled() }
    while !clients[index].down.withLock({ $0.isEmpty }) { try await perform(.deliverDown, client: index) }
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
        } catch  where [.unanswered, .answerForgotten, .unknownEdit].contains(error.code) {
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
    let made = made.withLock { $0 }
    guard Set(made).count == made.count else {
      throw ExplorationFailure(description: "an edit was made twice: \(made)")
    }
    let lost = everSubmitted.withLock { $0 }.subtracting(made).subtracting(refused.withLock { $0 })
    guard lost.isEmpty else {
      throw ExplorationFailure(description: "edits neither made nor refused by the server: \(lost.sorted())")
    }
    for client in clients {
      if let session = client.session.withLock({ $0 }) { await session.close() }
    }
  }
}

@Suite("Optimistic edits", .timeLimit(.minutes(30)))
struct OptimisticEditTests {
  static let settings = RandomTestSettings.current(defaultCases: 60, casesVariable: "SIMPLESOURCE_EDIT_RUNS")

  /// The depth of the exploration with other writers and reconnects: `SIMPLESOURCE_EDIT_DEPTH`, 5 by
  /// default (6 in CI).
  static let depth = Self.variable("SIMPLESOURCE_EDIT_DEPTH") ?? 5
  /// The depth of the exploration with restarts: `SIMPLESOURCE_RESTART_DEPTH`, 4 by default (6 in CI).
  static let restartDepth = Self.variable("SIMPLESOURCE_RESTART_DEPTH") ?? 4
  /// The depth of the power-loss exploration: `SIMPLESOURCE_POWER_LOSS_DEPTH`, 4 by default (5 in CI),
  /// the shortest sequence that confirms an edit never made when epochs are missing (an edit, its
  /// delivery, a power loss, an edit that reuses its id).
  static let powerLossDepth = Self.variable("SIMPLESOURCE_POWER_LOSS_DEPTH") ?? 4

  static func variable(_ name: String) -> Int? {
    ProcessInfo.processInfo.environment[name].flatMap(Int.init)
  }

  /// Every sequence of a client's edits, another writer's edits (some deleting what a pending edit names,
  /// so the server refuses it), deliveries of the client's messages to the server and of the server's, one
  /// message at a time, and reconnections (dropping what was in flight both ways), to ``depth``. At every
  /// step the client shows the server's state it holds with its pending edits on top; after settling it
  /// shows the server's state, nothing is pending, every edit was answered, and its view received only
  /// valid batches.
  @Test("every ordering of edits, other writers, answers and reconnects converges")
  func everyOrdering() async throws {
    let sequences = try await explore(
      [.clientEdit, .otherWriter, .deliverUp, .deliverDown, .reconnect], depth: Self.depth)
    let outcomes = EditingWorld.outcomes.withLock { $0 }
    print(
      "Optimistic edits: \(sequences) orderings of \(Self.depth) events converged (edits so far: \(outcomes))"
    )
    #expect(outcomes.confirmed > 0 && outcomes.refused > 0, "both answers happen")
  }

  /// Every sequence of edits, deliveries both ways and restarts of the client from its replica store (its
  /// process ends with messages in flight both ways), to ``restartDepth``: after settling, the
  /// client shows the server's state with nothing pending, every edit it made before or after a restart
  /// was made by the server or refused, none was made twice, and every pending edit was answered.
  @Test("every ordering of edits, answers and restarts from the store converges, each edit made once")
  func everyOrderingWithRestarts() async throws {
    let sequences = try await explore(
      [.clientEdit, .deliverUp, .deliverDown, .restart], depth: Self.restartDepth)
    print("Optimistic edits: \(sequences) orderings of \(Self.restartDepth) events with restarts converged")
  }

  /// Every sequence of edits, deliveries both ways, power losses (the store under `Sync.compactions` loses
  /// what it had not flushed, cut at any point after it) and clean starts (the store gone, the client
  /// offered its old id), to ``powerLossDepth``: no edit id names two edits (the server would confirm the second
  /// with the first's answer and never make it), and every edit the store kept or the server got ends made
  /// once or refused.
  @Test("every ordering of edits, answers, power losses and clean starts: no edit confirmed but not made")
  func everyOrderingWithPowerLoss() async throws {
    let sequences = try await explore(
      [.clientEdit, .deliverUp, .deliverDown, .powerLoss, .cleanStart], depth: Self.powerLossDepth)
    print(
      "Optimistic edits: \(sequences) orderings of \(Self.powerLossDepth) events with power losses converged")
  }

  /// The same under `Sync.everyRecord`, one shallower: a power loss forgets no edit the client made (its
  /// append was flushed before it was sent), so every edit ends made once or refused.
  @Test("under everyRecord, every ordering of edits, answers and power losses forgets no edit")
  func everyOrderingWithPowerLossFlushingEveryRecord() async throws {
    let depth = max(2, Self.powerLossDepth - 1)
    let sequences = try await explore(
      [.clientEdit, .deliverUp, .deliverDown, .powerLoss], depth: depth, sync: .everyRecord)
    print(
      "Optimistic edits: \(sequences) orderings of \(depth) events with power losses under everyRecord converged"
    )
  }

  /// Runs every sequence of `steps` of length `depth` on a new world with one client, then settles and
  /// checks it; returns the number of sequences.
  func explore(
    _ steps: [EditingWorld.Step], depth: Int, sync: FileReplicaStore<TestSection>.Sync = .compactions
  ) async throws -> Int {
    // Stores only where a step restarts from one: they cost a file system's writes at every step.
    let stores = steps.contains(.restart) || steps.contains(.powerLoss) || steps.contains(.cleanStart)
    var sequences = 0
    var sequence = [Int](repeating: 0, count: depth)
    repeat {
      let world = try await EditingWorld.make(clients: 1, stores: stores, sync: sync)
      let trace = sequence.map { steps[$0] }
      do {
        // Power losses start from a client that holds the server's state: the interesting sequences (an
        // edit made, the power lost, an edit counted again) fit in the depth.
        if steps.contains(.powerLoss) { try await world.comeBack(0) }
        for step in trace { try await world.perform(step) }
        try await world.settleAndCheck()
      } catch {
        Issue.record("after \(trace): \(error)")
        return sequences
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
    return sequences
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
