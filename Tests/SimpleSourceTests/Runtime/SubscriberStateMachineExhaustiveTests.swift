// Every sequence of one subscriber's events, explored: a source that publishes, cancels out and advances,
// a consumer that asks, parks (with a sink or without), takes and composes, a writer that writes to the
// sink outside the lock while anything else happens, a sink that takes or refuses, and an end, in every
// order the locks allow.

@testable import SimpleSourceCore
import SimpleSourceTesting
import SimpleSourceViews
import Testing

/// The states the source moves between, in persistent form, so that catch-ups derived from the missed
/// batches' ids (the `touched` of a composition) are exercised and not replaced by full diffs.
private let pool = ["A: a", "A: a b", "A: b a'"].map { Snapshot<TestSection>(tree: snapshot($0).tree) }

@Suite("Subscriber state machine, every sequence")
struct SubscriberStateMachineExhaustiveTests {
  typealias Machine = SubscriberStateMachine<TestSection, Int>
  typealias Delivery = SubscriptionDelivery<TestSection>

  /// One subscriber and the source and consumer around it, in the model. The source's versions and
  /// their states are known; the consumer holds a list view and the version it applied. Checked at every
  /// step: each batch handed over starts at the consumer's version (G1), is not empty (G4) and, applied
  /// by UIKit's rules, shows the source's state at its `to` (G2, G3); each version reported held is one
  /// whose state the consumer shows, reported in increasing order (G13); a parked consumer is resumed
  /// once, with its own waiter, and never while a write to its sink is out. A batch is written to a sink
  /// only while the consumer is parked with one, one write at a time, and is checked like a batch handed
  /// over. Once drained (the consumer asks until it parks), it shows the
  /// newest state and holds the newest version, whatever happened before.
  struct World: ExplorableWorld {
    enum Step: CustomStringConvertible {
      /// The source cuts its mutations since the last batch to the pool's state `k`: a batch, handed to
      /// the consumer if it waits, or queued for a writer when it is due to the consumer's sink.
      case publish(Int)
      /// A writer claims the queued subscriber and starts its write, if one is still due.
      case startWrite
      /// The write that is out is done: the sink took the batch or refused it (`accepted`).
      case finishWrite(accepted: Bool)
      /// The source's mutations since the last batch cancel out: a version and no batch, announced to
      /// subscribers as a quiet version, or (when a subscriber started from a state between) an advance.
      case cancelOut
      /// The consumer asks: it reports what it holds (outside the lock).
      case ask
      /// The consumer's request under the lock: a quiet version that arrived meanwhile, a delivery, or it
      /// parks, with a sink or without.
      case request(sinking: Bool)
      /// The consumer takes what it was handed: applies a batch, starts composing a catch-up (off the
      /// lock, so the source may move on before it is delivered), or reports a held version.
      case take
      /// The consumer's composed catch-up is diffed: it reports the delivery under the lock and applies it.
      case deliver
      /// The subscription is cancelled.
      case end

      var description: String {
        switch self {
        case .publish(let state): "publish \(state)"
        case .startWrite: "start write"
        case .finishWrite(let accepted): accepted ? "sink takes" : "sink refuses"
        case .cancelOut: "cancel out"
        case .ask: "ask"
        case .request(let sinking): sinking ? "request with a sink" : "request"
        case .take: "take"
        case .deliver: "deliver"
        case .end: "end"
        }
      }
    }

    /// Where the consumer is.
    enum Consumer {
      /// Applying what it took; it asks next.
      case busy
      /// It reported what it holds and is about to request.
      case asking
      /// Parked with waiter `id`, with a sink or without.
      case parked(Int, sinking: Bool)
      /// Handed a delivery it has not taken yet.
      case handed(Delivery)
      /// Diffing a catch-up off the lock: it will deliver `changeset`, `from` → `to`, which it made from the
      /// delivery `of`.
      case composing(from: Int, to: Int, Snapshot<TestSection>, Changeset<TestSection>, of: Delivery)
      /// Its stream ended.
      case ended
    }

    var machine: Machine
    /// The state of each version the source made.
    var states: [Snapshot<TestSection>]
    /// The last published batch's `to`: the next batch's `from` (G1).
    var published: Int
    /// The newest version published or advanced to: what a subscriber that joins later starts from.
    var offered: Int
    /// The version the subscriber started at, when it is newer than what the source had offered.
    var startedAhead: Int?
    var consumer = Consumer.busy
    /// How many times the subscriber is queued for a writer: a consumer woken while queued leaves a stale
    /// entry, which a writer claims and finds nothing to write for.
    var queued = 0
    /// The batch a writer is writing to the sink, outside the lock.
    var writing: UpdateBatch<TestSection>?
    /// Whether the subscription was cancelled.
    var isCancelled = false
    /// What the consumer shows, and the version it applied.
    var view: ReferenceListView<TestSection>
    var applied: Int
    /// The newest version reported held.
    var reported: Int
    /// Whether the consumer is a follower told of versions held with no batch (it asks with `announcing`).
    var announcing = false
    /// The newest version announced to it.
    var announced = 0
    var nextWaiter = 0
    /// How many versions the source may make in one sequence.
    let maxVersion: Int

    var newestVersion: Int { states.count - 1 }

    /// A subscriber of a source at version 0, holding its state.
    static func fresh(maxVersion: Int) -> World {
      let machine = Machine(
        version: 0, snapshot: pool[0], newest: nil, newestVersion: 0, newestSnapshot: pool[0])
      return World(
        machine: machine, states: [pool[0]], published: 0, offered: 0, view: ReferenceListView(pool[0]),
        applied: 0, reported: 0, maxVersion: maxVersion)
    }

    /// A subscriber that joined at version 1, which the source made and has not cut yet: it starts
    /// ahead of what was published (the source then advances instead of announcing quiet versions).
    static func ahead(maxVersion: Int) -> World {
      let machine = Machine(
        version: 1, snapshot: pool[1], newest: nil, newestVersion: 0, newestSnapshot: pool[0])
      return World(
        machine: machine, states: [pool[0], pool[1]], published: 0, offered: 0, startedAhead: 1,
        view: ReferenceListView(pool[1]), applied: 1, reported: 1, maxVersion: maxVersion + 1)
    }

    /// A subscriber that resumed from version 0 after two batches (0→1, 1→2): it missed both, and
    /// knows the ids they touched.
    static func resumed(maxVersion: Int) -> World {
      let first = batch(from: 0, pool[0], to: 1, pool[1])
      let second = batch(from: 1, pool[1], to: 2, pool[2])
      let machine = Machine(
        version: 0, snapshot: pool[0], newest: second, newestVersion: 2, newestSnapshot: pool[2],
        missedTouched: first.touchedIDs.flatMap { ids in second.touchedIDs.map { ids.union($0) } })
      return World(
        machine: machine, states: [pool[0], pool[1], pool[2]], published: 2, offered: 2,
        view: ReferenceListView(pool[0]), applied: 0, reported: 0, maxVersion: maxVersion + 2)
    }

    static func batch(
      from: Int, _ source: Snapshot<TestSection>, to: Int, _ target: Snapshot<TestSection>
    ) -> UpdateBatch<TestSection> {
      UpdateBatch(from: from, to: to, changeset: Changeset(from: source, to: target))
    }

    func steps() -> [Step] {
      var steps: [Step] = []
      if newestVersion < maxVersion {
        let publishedState = states[published]
        for state in pool.indices where !pool[state].hasSameContent(as: publishedState) {
          steps.append(.publish(state))
        }
        steps.append(.cancelOut)
      }
      if queued > 0 { steps.append(.startWrite) }
      if writing != nil { steps += [.finishWrite(accepted: true), .finishWrite(accepted: false)] }
      switch consumer {
      case .busy: steps.append(.ask)
      case .asking: steps += [.request(sinking: false), .request(sinking: true)]
      case .handed: steps.append(.take)
      case .composing: steps.append(.deliver)
      case .parked, .ended: break
      }
      if !isCancelled { steps.append(.end) }
      return steps
    }

    mutating func perform(_ step: Step) throws {
      try performStep(step)
      // The waiter and the sink are kept beside the consumer's phase: each is held exactly while the phase
      // says so.
      let consumer = machine.consumer
      guard consumer.holdsWaiter == (machine.waiter != nil), consumer.holdsSink == (machine.sink != nil)
      else {
        throw ExplorationFailure(
          description: "consumer \(consumer) with waiter \(String(describing: machine.waiter)), "
            + "sink \(machine.sink == nil ? "none" : "held") after \(step)")
      }
    }

    mutating func performStep(_ step: Step) throws {
      switch step {
      case .publish(let state):
        let version = newestVersion + 1
        let batch = Self.batch(from: published, states[published], to: version, pool[state])
        states.append(pool[state])
        (published, offered) = (version, version)
        // As the mailbox does, under one lock: the publish, then whether a writer is owed the subscriber.
        try resume(machine.publish(batch, refreshing: []))
        if machine.queueWrite() {
          guard case .parked(_, sinking: true) = consumer, writing == nil else {
            throw ExplorationFailure(
              description: "queued for a write: a consumer \(consumer), writing \(writing != nil)")
          }
          queued += 1
          guard queued <= 2 else {
            throw ExplorationFailure(description: "queued \(queued) times: more than once and a wake-up")
          }
        }
      case .startWrite:
        queued -= 1
        guard let (_, batch) = machine.startWrite() else { return }
        try startWriting(batch)
      case .finishWrite(let accepted):
        guard let batch = writing else { return }
        writing = nil
        if accepted { try apply(from: batch.from.number, to: batch.to.number, batch.changeset) }
        let outcome = machine.wrote(took: accepted)
        if let held = outcome.held { try report(held) }
        try resume(outcome.resume)
        if let next = outcome.next { try startWriting(next) }
      case .cancelOut:
        let version = newestVersion + 1
        states.append(states[published])
        if let startedAhead, startedAhead > offered {
          // A subscriber holds a state these mutations went through: every subscriber is brought to
          // `version`, and the one at the published state composes nothing.
          offered = version
          let touched = Set(states[published].sections.flatMap(\.items).map(\.id))
            .union(states[startedAhead].sections.flatMap(\.items).map(\.id))
          try resume(
            machine.cancelledOut(to: version, snapshot: states[published], since: published, touched: touched)
          )
        } else {
          switch machine.reachedWithoutBatch(to: version) {
          case .report(let held):
            guard case .parked = consumer else {
              throw ExplorationFailure(
                description: "a quiet version \(held) reported for a consumer not parked")
            }
            guard !announcing else {
              throw ExplorationFailure(description: "a quiet version \(held) held before it was announced")
            }
            try report(held)
          case .resume(let waiter, let delivery):
            guard announcing, case .announce = delivery else {
              throw ExplorationFailure(description: "a quiet version woke the consumer with \(delivery)")
            }
            try resume((waiter, delivery))
          case nil: break
          }
        }
      case .ask:
        if let held = machine.asks(announcing: announcing) { try report(held) }
        consumer = .asking
      case .request(let sinking):
        let waiter = nextWaiter
        nextWaiter += 1
        if let held = machine.newlyHeld() {
          consumer = .handed(.held(held))
        } else if let delivery = machine.next(waiter: waiter, sink: sinking ? Self.sink : nil) {
          consumer = .handed(delivery)
        } else {
          consumer = .parked(waiter, sinking: sinking)
        }
      case .take:
        guard case .handed(let delivery) = consumer else { return }
        try take(delivery)
      case .deliver:
        guard case .composing(let from, let to, let snapshot, let changeset, _) = consumer else { return }
        machine.delivered(version: to, snapshot: snapshot)
        try apply(from: from, to: to, changeset)
        consumer = .busy
      case .end:
        isCancelled = true
        let waiter = machine.end()
        switch consumer {
        case .parked where writing != nil:
          // The writer wakes it with the end once the write is done.
          guard waiter == nil else {
            throw ExplorationFailure(description: "ending resumed waiter \(waiter!) while a write is out")
          }
        case .parked(let parked, _):
          guard waiter == parked else {
            throw ExplorationFailure(
              description: "ending resumed waiter \(String(describing: waiter)), not \(parked)")
          }
          consumer = .ended
        default:
          guard waiter == nil else {
            throw ExplorationFailure(description: "ending resumed waiter \(waiter!) of a consumer not parked")
          }
        }
      }
    }

    /// The world's whole state as far as what follows can tell (see ``ExplorableWorld/key``), so that a
    /// state reached by several orders is explored once for each depth left. Snapshots are named by their
    /// place in `pool` (every state the world holds is one of it), batches by their versions (each is the
    /// diff of two of `states`), and waiters by how long ago they were made (only their equality is read).
    /// The view is left out: after every step it shows the state of `applied` (each batch is checked to),
    /// and nothing reads its cells' serial numbers.
    var key: AnyHashable? { AnyHashable(Key(self)) }

    struct Key: Hashable {
      enum Delivery: Hashable {
        case batch(from: Int, to: Int)
        case compose(
          from: Int, fromVersion: Int, to: Int, toVersion: Int, refreshing: Set<String>, touched: Set<String>?
        )
        case end
        case held(Int)
        case announce(Int)
      }
      enum Consumer: Hashable {
        case busy, asking, ended
        case parked(age: Int, sinking: Bool)
        case handed(Delivery)
        case composing(from: Int, to: Int, Delivery)
      }
      enum MachineConsumer: Hashable {
        case running, ended
        case waiting(age: Int)
        case parked(age: Int, queued: Bool)
        case writing(age: Int)
        case endedWhileWriting(age: Int)
      }
      struct Machine: Hashable {
        var consumer: MachineConsumer
        var received, taken, newest, unbatched, progress, announced: Int
        var cancelledOut: [Int]?
        var announces: Bool
        var heldSnapshot: Int?
        var heldBatch: [Int]?
        var refreshing: Set<String>
        var missedFrom: Int?
        var missedTouched: Set<String>??
        var newestBatch: [Int]?
        var newestSnapshot: Int
        var lane: SubscriptionLane
      }

      var states: [Int]
      var published, offered, queued, applied, reported, announced, maxVersion: Int
      var startedAhead: Int?
      var writing: [Int]?
      var isCancelled, announcing: Bool
      var consumer: Consumer
      var machine: Machine

      init(_ world: World) {
        func age(_ waiter: Int) -> Int { world.nextWaiter - waiter }
        states = world.states.map(Self.place)
        (published, offered, queued) = (world.published, world.offered, world.queued)
        (applied, reported, announced) = (world.applied, world.reported, world.announced)
        maxVersion = world.maxVersion
        startedAhead = world.startedAhead
        writing = world.writing.map(Self.versions)
        (isCancelled, announcing) = (world.isCancelled, world.announcing)
        consumer =
          switch world.consumer {
          case .busy: .busy
          case .asking: .asking
          case .ended: .ended
          case .parked(let waiter, let sinking): .parked(age: age(waiter), sinking: sinking)
          case .handed(let delivery): .handed(Self.delivery(delivery))
          case .composing(let from, let to, _, _, let delivery):
            // The changeset and snapshot are made from the delivery.
            .composing(from: from, to: to, Self.delivery(delivery))
          }
        let machine = world.machine
        let versions = machine.versions
        let machineConsumer: MachineConsumer =
          switch (machine.consumer, machine.waiter.map(age) ?? -1) {
          case (.running, _): .running
          case (.ended, _): .ended
          case (.waiting, let age): .waiting(age: age)
          case (.parked(let queued), let age): .parked(age: age, queued: queued)
          case (.writing, let age): .writing(age: age)
          case (.endedWhileWriting, let age): .endedWhileWriting(age: age)
          }
        var heldSnapshot: Int?
        var heldBatch: [Int]?
        switch machine.held {
        case .snapshot(let snapshot): heldSnapshot = Self.place(snapshot)
        case .batch(let batch): heldBatch = Self.versions(batch)
        }
        self.machine = Machine(
          consumer: machineConsumer, received: versions.received, taken: versions.taken,
          newest: versions.newest, unbatched: versions.unbatched, progress: versions.progress,
          announced: versions.announced, cancelledOut: versions.cancelledOut.map { [$0.since, $0.to] },
          announces: versions.announces, heldSnapshot: heldSnapshot, heldBatch: heldBatch,
          refreshing: machine.refreshing, missedFrom: machine.missed?.from,
          missedTouched: machine.missed?.touched,
          newestBatch: machine.newest.map(Self.versions), newestSnapshot: Self.place(machine.newestSnapshot),
          lane: machine.lane)
      }

      /// `snapshot`'s place in `pool`, whose states differ in content; -1 for the empty state an ended
      /// machine keeps.
      static func place(_ snapshot: Snapshot<TestSection>) -> Int {
        if snapshot.sections.isEmpty { return -1 }
        guard let place = pool.firstIndex(where: { $0.hasSameContent(as: snapshot) }) else {
          fatalError("a state that is not in the pool")
        }
        return place
      }

      /// A batch's versions: its changeset is the diff of the world's states at them.
      static func versions(_ batch: UpdateBatch<TestSection>) -> [Int] {
        [batch.from.number, batch.to.number]
      }

      static func delivery(_ delivery: SubscriptionDelivery<TestSection>) -> Delivery {
        switch delivery {
        case .batch(let batch): .batch(from: batch.from.number, to: batch.to.number)
        case .compose(let from, let fromVersion, let to, let toVersion, let refreshing, let touched):
          .compose(
            from: place(from), fromVersion: fromVersion, to: place(to), toVersion: toVersion,
            refreshing: refreshing, touched: touched)
        case .end: .end
        case .held(let version): .held(version)
        case .announce(let version): .announce(version)
        }
      }
    }

    /// A sink as the machine holds it; the model decides whether it takes a batch (the step's `accepted`).
    static let sink: SubscriptionSink<TestSection> = { _ in true }

    /// A writer starts writing `batch` to the sink: only a consumer parked with one, one write at a time,
    /// and the batch starts where the consumer is.
    mutating func startWriting(_ batch: UpdateBatch<TestSection>) throws {
      guard case .parked(_, sinking: true) = consumer, writing == nil, batch.from == applied else {
        throw ExplorationFailure(
          description:
            "a write of \(batch.from)→\(batch.to) to a consumer \(consumer) at \(applied), writing \(writing != nil)"
        )
      }
      writing = batch
    }

    /// A publisher or writer resumed a waiter with a delivery: it must be the parked consumer's, with no
    /// write out.
    mutating func resume(_ resumed: (Int, Delivery)?) throws {
      guard let (waiter, delivery) = resumed else { return }
      guard writing == nil else {
        throw ExplorationFailure(description: "resumed waiter \(waiter) while a write is out")
      }
      guard case .parked(let parked, _) = consumer, parked == waiter else {
        throw ExplorationFailure(description: "resumed waiter \(waiter), but the consumer is \(consumer)")
      }
      consumer = .handed(delivery)
    }

    /// The consumer reports that it holds `version`: a newer one, whose state it shows.
    mutating func report(_ version: Int) throws {
      guard version > reported else {
        throw ExplorationFailure(description: "reported \(version) after \(reported)")
      }
      // A follower told of quiet versions holds one only once it dealt with it.
      guard !announcing || version <= max(applied, announced) else {
        throw ExplorationFailure(
          description:
            "reported \(version) before it was announced (applied \(applied), announced \(announced))")
      }
      guard version <= newestVersion, view.shows(states[version].sections) else {
        throw ExplorationFailure(
          description: "reported holding \(version) while showing \(view.itemIDs) at \(applied)")
      }
      reported = version
    }

    mutating func take(_ delivery: Delivery) throws {
      switch delivery {
      case .batch(let batch):
        try apply(from: batch.from.number, to: batch.to.number, batch.changeset)
        consumer = .busy
      case .compose(let from, let fromVersion, let to, let toVersion, let refreshing, let touched):
        // Every version after the one it holds was published or advanced to with its ids, so a catch-up
        // is derived from them; only a state no batch started from (a subscriber that joined ahead of the
        // published batches) needs the full diff.
        if touched == nil && fromVersion != startedAhead {
          throw ExplorationFailure(
            description: "a catch-up \(fromVersion)→\(toVersion) fell back to a full diff")
        }
        let differ = Differ<TestSection>()
        let changeset =
          touched.flatMap { differ.logged(from, to, $0, refreshing) } ?? differ.diff(from, to, refreshing)
        if changeset.isEmpty {
          // Not delivered (G4): the consumer asks again, holding what it held.
          guard fromVersion == applied, view.shows(to.sections) else {
            throw ExplorationFailure(
              description: "an empty composition from \(fromVersion) to a state not shown")
          }
          consumer = .busy
          return
        }
        consumer = .composing(from: fromVersion, to: toVersion, to, changeset, of: delivery)
      case .held(let version):
        try report(version)
        consumer = .busy
      case .announce(let version):
        // A follower deals with a version no batch carries: it shows that version's state already.
        guard announcing, version > max(applied, announced), version <= newestVersion,
          view.shows(states[version].sections)
        else {
          throw ExplorationFailure(
            description: "announced \(version) to a consumer at \(applied) (announced \(announced))")
        }
        announced = version
        consumer = .busy
      case .end:
        consumer = .ended
      }
    }

    mutating func apply(from: Int, to: Int, _ changeset: Changeset<TestSection>) throws {
      guard from == applied, to > from, to <= newestVersion else {
        throw ExplorationFailure(description: "a batch \(from)→\(to) for a consumer at \(applied)")
      }
      guard !changeset.isEmpty else { throw ExplorationFailure(description: "an empty batch \(from)→\(to)") }
      do { try view.apply(changeset) } catch {
        throw ExplorationFailure(description: "batch \(from)→\(to) broke UIKit's rules: \(error)")
      }
      guard view.shows(states[to].sections) else {
        throw ExplorationFailure(description: "batch \(from)→\(to) shows \(view.itemIDs)")
      }
      applied = to
    }

    mutating func checkSettled() throws {
      // The consumer asks until it parks (or its stream ends): it then holds the newest version.
      var turns = 0
      while true {
        turns += 1
        guard turns < 50 else { throw ExplorationFailure(description: "the consumer never parks") }
        if writing != nil {
          try perform(.finishWrite(accepted: true))
          continue
        }
        if queued > 0 {
          try perform(.startWrite)
          continue
        }
        switch consumer {
        case .busy: try perform(.ask)
        case .asking: try perform(.request(sinking: false))
        case .handed: try perform(.take)
        case .composing: try perform(.deliver)
        case .parked, .ended:
          if case .ended = consumer { return }
          guard view.shows(states[newestVersion].sections) else {
            throw ExplorationFailure(
              description: "parked showing \(view.itemIDs), not version \(newestVersion)")
          }
          guard reported == newestVersion, machine.heldVersion == newestVersion,
            !announcing || max(applied, announced) == newestVersion
          else {
            throw ExplorationFailure(
              description:
                "parked holding \(reported) (machine: \(machine.heldVersion)), not \(newestVersion)")
          }
          return
        }
      }
    }
  }

  @Test(
    "every sequence of publish, cancel out, ask, request (with a sink or not), take, deliver, a write out of the lock (taken or refused) and end keeps G1-G4 and G13, and catches up from the missed ids; a follower is told each quiet version before it holds it",
    arguments: ["fresh", "ahead", "resumed"], [false, true])
  func everySequence(start: String, announcing: Bool) throws {
    var world: World =
      switch start {
      case "ahead": .ahead(maxVersion: 4)
      case "resumed": .resumed(maxVersion: 4)
      default: .fresh(maxVersion: 4)
      }
    world.announcing = announcing
    world.announced = world.applied
    try checkEverySequence(
      "Subscriber state machine (\(start)\(announcing ? ", announcing" : ""))", from: world,
      depthVariable: "SIMPLESOURCE_SUBSCRIBER_DEPTH",
      defaultDepth: 6)
  }
}
