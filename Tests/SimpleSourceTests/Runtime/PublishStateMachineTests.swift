// The publish pipeline's state machine, without async: examples, then every sequence of events to a depth.

import Foundation
import Testing

@testable import SimpleSourceCore

@Suite("Publish state machine")
struct PublishStateMachineTests {
  /// States are contents (an `Int`), ids are `Int`, waiters and preparers are `String`.
  typealias Machine = PublishStateMachine<Int, Int, String, String>

  @Test("the first commit starts the loop, later ones join it; the loop stops in the step that finds nothing")
  func loopStartsOnce() {
    var machine = Machine(state: 0)
    let r1 = machine.committed()
    #expect(r1 == (1, true))
    let r2 = machine.committed(refreshing: [7])
    #expect(r2 == (2, false))
    let r3 = machine.continuePublishing()
    #expect(r3)
    let cut = machine.cut(2, log: .touched([1]))
    #expect(cut.fromVersion == 0 && cut.toVersion == 2 && cut.touching == [1] && cut.refreshing == [7])
    let r4 = machine.committed()
    #expect(r4 == (3, false), "the loop runs: no second loop")
    guard case .publish(from: 0, to: 2) = machine.diffed(cut, isEmpty: false).publication else {
      Issue.record("expected a publication")
      return
    }
    let r5 = machine.continuePublishing()
    #expect(r5, "version 3 is left")
    _ = machine.diffed(machine.cut(3, log: .touched([2])), isEmpty: false)
    let r6 = machine.continuePublishing()
    #expect(!r6)
    let r7 = machine.committed()
    #expect(r7 == (4, true), "a new loop after the last one stopped")
    #expect(machine.violations.isEmpty)
  }

  @Test(
    "mutations that cancel out publish nothing, unless a subscriber started between them: then it is brought there"
  )
  func cancelledOut() {
    var machine = Machine(state: 0)
    _ = machine.committed()
    let r8 = machine.continuePublishing()
    #expect(r8)
    var cut = machine.cut(0, log: .touched([1]))
    guard case .nothing = machine.diffed(cut, isEmpty: true).publication else {
      Issue.record("nothing to publish")
      return
    }
    #expect(machine.offeredVersion == 0)
    let r9 = machine.continuePublishing()
    #expect(!r9)

    _ = machine.committed()  // version 2: a subscriber starts here, then it is undone
    machine.subscribed()
    _ = machine.committed()
    let r10 = machine.continuePublishing()
    #expect(r10)
    cut = machine.cut(0, log: .touched([2]))
    #expect(cut.touching == [1, 2], "the ids of the cut that published nothing are kept")
    guard
      case .cancelledOut(to: 3, since: 0, touched: [1, 2]) = machine.diffed(cut, isEmpty: true).publication
    else {
      Issue.record("the subscriber is brought to version 3")
      return
    }
    #expect(machine.offeredVersion == 3)
    #expect(machine.violations.isEmpty)
  }

  @Test("a waiter returns at once for a cut version, when its version is cut, when cancelled, or at the end")
  func waiters() {
    var machine = Machine(state: 0)
    guard case .resume("now", reached: true) = machine.settle(through: 0, "now") else {
      Issue.record("version 0 is cut")
      return
    }
    _ = machine.committed()
    _ = machine.committed()
    guard case .wait(let one) = machine.settle(through: 1, "one"),
      case .wait(let two) = machine.settle(through: 2, "two"),
      case .wait(let three) = machine.settle(through: 3, "three")
    else {
      Issue.record("versions 1 and 2 are not cut yet")
      return
    }
    let r11 = machine.cancelSettle(one)
    #expect(r11 == "one")
    let r12 = machine.cancelSettle(one)
    #expect(r12 == nil, "cancelled once")
    let r13 = machine.continuePublishing()
    #expect(r13)
    let second = machine.cut(2, log: .nothing)
    let resumed = machine.diffed(second, isEmpty: false).resume
    #expect(resumed == ["two"])
    let r14 = machine.cancelSettle(two)
    #expect(r14 == nil, "already resumed")
    let r15 = machine.finish()
    #expect(r15.waiters == ["three"] && r15.preparers.isEmpty)
    guard case .resume("late", reached: false) = machine.settle(through: 9, "late") else {
      Issue.record("after the end, waits return at once")
      return
    }
    _ = three
    #expect(machine.violations.isEmpty)
  }

  @Test("a prepared write holds the source: direct writes are refused, preparers queue, release hands it on")
  func reservations() {
    var machine = Machine(state: 0)
    guard case .granted(let first) = machine.reserve("a") else {
      Issue.record("a free source is granted at once")
      return
    }
    #expect(machine.isReserved)
    guard case .wait(let b) = machine.reserve("b"), case .wait(let c) = machine.reserve("c"),
      case .wait(let d) = machine.reserve("d")
    else {
      Issue.record("later preparers wait")
      return
    }
    let cancelled = machine.cancelReserve(c)
    #expect(cancelled == "c")
    let applied = machine.released(first, committing: true, refreshing: [4])
    #expect(applied.version == 1 && applied.startPublishing && machine.pendingRefresh == [4])
    #expect(applied.next?.preparer == "b", "first come, first served; the cancelled one skipped")
    let stale = machine.released(first, committing: false)
    #expect(stale.next == nil && stale.version == 1 && machine.isReserved, "a stale ticket releases nothing")
    guard let second = applied.next?.ticket else { return }
    let abandoned = machine.released(second, committing: false)
    #expect(abandoned.version == 1 && !abandoned.startPublishing && abandoned.next?.preparer == "d")
    let ended = machine.finish()
    #expect(ended.preparers.isEmpty, "d holds the source; nobody waits")
    guard case .ended = machine.reserve("e") else {
      Issue.record("after the end, preparers are told at once")
      return
    }
    _ = (b, d)
    #expect(machine.violations.isEmpty)
  }

  /// Every sequence of events to the depth `SIMPLESOURCE_PUBLISH_STATE_DEPTH` gives (6 by default, 7 in
  /// CI): writers committing contents (some reshaping, some forced refreshes), subscribers starting,
  /// waiters settling and cancelling, and the publish loop's steps (continue, cut, diff) interleaved with
  /// them. After each event the invariants hold; after draining the loop from every prefix, every
  /// subscriber shows the source's content, every due waiter was resumed exactly once, and the batches
  /// chained (G1), were never empty (G4), and were derived from every id touched since the last one.
  @Test("every interleaving of writers, subscribers, waiters and the loop keeps the contract")
  func exhaustive() throws {
    try checkEverySequence(
      "Publish state machine", from: PublishWorld(), depthVariable: "SIMPLESOURCE_PUBLISH_STATE_DEPTH",
      defaultDepth: 6)
  }

  /// As ``exhaustive()``, with two-phase writes among the events: preparers asking for the source (granted
  /// or queued), cancelled while they wait, applying a change or nothing, abandoning, and releasing a
  /// ticket twice; direct writes made while the source is held, which queue with the preparers, are
  /// granted in their turn, run and pass the source on (or are cancelled while they wait). After each
  /// event: one holder at most, grants in arrival order whatever the kind of writer, a holder's base
  /// version still the source's when it applies (no direct write or other preparer came between), the
  /// applied version its base + 1, every direct write made once, and the loop publishes it.
  @Test("every interleaving with prepared writes keeps the source reserved, fair, and the contract")
  func exhaustiveReservations() throws {
    try checkEverySequence(
      "Publish state machine with prepared writes", from: PublishWorld(reservations: true),
      depthVariable: "SIMPLESOURCE_PUBLISH_STATE_DEPTH", defaultDepth: 6)
  }
}

/// One step of the exhaustive exploration.
enum PublishStep: CustomStringConvertible {
  case commit(content: Int, reshaped: Bool)
  case refresh
  case subscribe
  case settle(ahead: Int)
  case cancel(String)
  case loop
  case prepare
  case cancelPreparer(String)
  case apply(changing: Bool)
  case abandon
  case releaseAgain
  /// The direct writer granted the source runs on the actor: it commits and passes the source on.
  case runDirect

  var description: String {
    switch self {
    case .commit(let content, let reshaped): "commit \(content)\(reshaped ? " reshaped" : "")"
    case .refresh: "refresh"
    case .subscribe: "subscribe"
    case .settle(let ahead): "settle +\(ahead)"
    case .cancel(let waiter): "cancel \(waiter)"
    case .loop: "loop"
    case .prepare: "prepare"
    case .cancelPreparer(let preparer): "cancel \(preparer)"
    case .apply(let changing): changing ? "apply" : "apply nothing"
    case .abandon: "abandon"
    case .releaseAgain: "release again"
    case .runDirect: "run direct write"
    }
  }
}

struct PublishFailure: Error, CustomStringConvertible {
  let description: String
}

/// The machine, the source it stands for, and everything the contract says about them.
struct PublishWorld: ExplorableWorld, Hashable {
  typealias Machine = PublishStateMachine<Int, Int, String, String>

  enum Phase: Hashable {
    case idle
    /// The loop's task is about to ask whether to continue.
    case top
    /// It decided to continue; writers may still join before the cut.
    case windowing
    case diffing(Machine.Cut)
  }

  var machine = Machine(state: 0)
  var phase = Phase.idle
  /// The source's content, and the content of every version.
  var content = 0
  var contents = [0]
  /// Item ids touched by each version (a version's id is its content), and whether it reshaped.
  var touched: [Set<Int>] = [[]]
  var reshaped = [false]
  /// What each subscriber holds (its content), as batches bring it.
  var subscribers: [Int] = []
  /// Parked waiters: name → (version, id); resumed ones.
  var parked: [String: Parked] = [:]
  var resumed: Set<String> = []
  var waiterCount = 0
  /// The `to` of the last publication, and its content.
  var lastPublished = 0
  var lastPublishedContent = 0
  /// Whether two-phase writes are among the steps (fewer others then, to keep the count of sequences low).
  var reservations = false
  /// The writer holding the source: its name, ticket, the version it was granted at, and whether it is a
  /// direct write (which runs and releases in one step once its task runs) rather than a prepared one.
  var holder: Holder?
  /// Writers waiting, in the order they asked: name, the id their cancellation uses, and whether direct.
  var queue: [Queued] = []
  /// Direct writes made while the source was held: asked, and made (each exactly once).
  var directAsked = 0
  var directMade = 0
  var preparerCount = 0
  /// Tickets released already, to release again.
  var releasedTickets: [Int] = []

  /// A parked waiter: the version it waits for, and the id its cancellation uses.
  struct Parked: Hashable {
    let version: Int
    let id: Int
  }
  /// The writer holding the source.
  struct Holder: Hashable {
    let name: String
    let ticket: Int
    let base: Int
    let direct: Bool
  }
  /// A writer waiting for the source.
  struct Queued: Hashable {
    let name: String
    let id: Int
    let direct: Bool
  }

  init(reservations: Bool = false) { self.reservations = reservations }

  func steps() -> [PublishStep] {
    if reservations { return reservationSteps() }
    var steps: [PublishStep] = [.commit(content: (content + 1) % 3, reshaped: false)]
    steps.append(.commit(content: (content + 2) % 3, reshaped: true))
    steps += [.refresh, .subscribe, .settle(ahead: 0), .settle(ahead: 1)]
    steps += parked.keys.sorted().map { .cancel($0) }
    if case .idle = phase {} else { steps.append(.loop) }
    return steps
  }

  func reservationSteps() -> [PublishStep] {
    var steps: [PublishStep] = [.commit(content: (content + 1) % 3, reshaped: false), .subscribe]
    steps += [.settle(ahead: 1), .prepare]
    steps += queue.map { .cancelPreparer($0.name) }
    if let holder {
      steps += holder.direct ? [.runDirect] : [.apply(changing: true), .apply(changing: false), .abandon]
    }
    if !releasedTickets.isEmpty { steps.append(.releaseAgain) }
    if case .idle = phase {} else { steps.append(.loop) }
    return steps
  }

  mutating func perform(_ step: PublishStep) throws(PublishFailure) {
    switch step {
    case .commit, .refresh:
      // A direct write: the actor asks first, and a held source queues it behind the writers before it.
      if machine.isReserved {
        guard holder != nil else { throw PublishFailure(description: "reserved with no holder") }
        preparerCount += 1
        let name = "d\(preparerCount)"
        guard case .wait(let id) = machine.reserve(name) else {
          throw PublishFailure(description: "\(name) not queued behind a held source")
        }
        queue.append(Queued(name: name, id: id, direct: true))
        directAsked += 1
        break
      }
      if case .commit(let newContent, let isReshaping) = step {
        content = newContent
        commit(touching: [newContent], reshaped: isReshaping, refreshing: [])
      } else {
        commit(touching: [], reshaped: false, refreshing: [9])
      }
    case .prepare:
      preparerCount += 1
      let name = "p\(preparerCount)"
      switch machine.reserve(name) {
      case .granted(let ticket):
        guard holder == nil, queue.isEmpty else {
          throw PublishFailure(description: "\(name) granted a held source")
        }
        holder = Holder(name: name, ticket: ticket, base: machine.version, direct: false)
      case .wait(let id):
        guard holder != nil else { throw PublishFailure(description: "\(name) waits for a free source") }
        queue.append(Queued(name: name, id: id, direct: false))
      case .ended:
        throw PublishFailure(description: "the source never ends here")
      }
    case .cancelPreparer(let name):
      guard let index = queue.firstIndex(where: { $0.name == name }) else { return }
      let cancelled = queue.remove(at: index)
      guard machine.cancelReserve(cancelled.id) == name else {
        throw PublishFailure(description: "cancelling \(name) did not hand it back")
      }
      // A direct write cancelled while it waits makes nothing.
      if cancelled.direct { directAsked -= 1 }
    case .runDirect:
      guard let held = holder, held.direct else { return }
      content = (content + 1) % 3
      commit(touching: [content], reshaped: false, refreshing: [])
      directMade += 1
      let release = machine.released(held.ticket, committing: false)
      guard release.version == machine.version, !release.startPublishing else {
        throw PublishFailure(description: "\(held.name) passing the source on made something")
      }
      try handOn(release, from: held.ticket)
    case .apply(let changing):
      guard let held = holder else { return }
      guard machine.version == held.base else {
        throw PublishFailure(
          description: "\(held.name) applies to version \(machine.version), prepared at \(held.base)")
      }
      if changing { content = (content + 1) % 3 }
      let release = machine.released(held.ticket, committing: changing, refreshing: [])
      guard release.version == held.base + (changing ? 1 : 0) else {
        throw PublishFailure(description: "\(held.name) made version \(release.version) from \(held.base)")
      }
      if changing { record(content: content, touching: [content], start: release.startPublishing) }
      try handOn(release, from: held.ticket)
    case .abandon:
      guard let held = holder else { return }
      let release = machine.released(held.ticket, committing: false)
      guard release.version == held.base, !release.startPublishing else {
        throw PublishFailure(description: "abandoning \(held.name) made something")
      }
      try handOn(release, from: held.ticket)
    case .releaseAgain:
      let version = machine.version
      let held = machine.reservation
      let release = machine.released(releasedTickets[0], committing: false)
      guard release.next == nil, machine.version == version, machine.reservation == held else {
        throw PublishFailure(description: "releasing ticket \(releasedTickets[0]) again changed something")
      }
    case .subscribe:
      machine.subscribed()
      subscribers.append(content)
    case .settle(let ahead):
      waiterCount += 1
      let name = "w\(waiterCount)"
      switch machine.settle(through: machine.version + ahead, name) {
      case .resume(let waiter, let reached):
        guard waiter == name, reached == (machine.version + ahead <= machine.cutVersion) else {
          throw PublishFailure(description: "\(name) resumed before its version was cut")
        }
        try resume([waiter])
      case .wait(let id): parked[name] = Parked(version: machine.version + ahead, id: id)
      }
    case .cancel(let name):
      guard let entry = parked.removeValue(forKey: name) else { return }
      guard machine.cancelSettle(entry.id) == name else {
        throw PublishFailure(description: "cancelling \(name) did not hand it back")
      }
      try resume([name])
    case .loop:
      try loopStep()
    }
    let violations = machine.violations
    if !violations.isEmpty { throw PublishFailure(description: violations.joined(separator: "; ")) }
  }

  mutating func commit(touching ids: Set<Int>, reshaped isReshaping: Bool, refreshing: Set<Int>) {
    let (version, start) = machine.committed(refreshing: refreshing)
    precondition(version == contents.count)
    record(content: content, touching: ids, reshaped: isReshaping, start: start)
  }

  /// Notes a version the machine made, and starts the loop when it says so.
  mutating func record(content: Int, touching ids: Set<Int>, reshaped isReshaping: Bool = false, start: Bool)
  {
    contents.append(content)
    touched.append(ids)
    reshaped.append(isReshaping)
    if start {
      guard case .idle = phase else { preconditionFailure("a second loop") }
      phase = .top
    }
  }

  /// The holder released the source: the next in the queue holds it now, at the current version.
  mutating func handOn(_ release: Machine.Release, from ticket: Int) throws(PublishFailure) {
    releasedTickets.append(ticket)
    holder = nil
    guard let next = release.next else {
      if !queue.isEmpty {
        throw PublishFailure(description: "\(queue[0].name) left waiting for a free source")
      }
      return
    }
    guard !queue.isEmpty, next.preparer == queue[0].name else {
      throw PublishFailure(description: "\(next.preparer) granted out of turn")
    }
    let granted = queue.removeFirst()
    holder = Holder(name: next.preparer, ticket: next.ticket, base: machine.version, direct: granted.direct)
  }

  mutating func loopStep() throws(PublishFailure) {
    switch phase {
    case .idle: return
    case .top:
      phase = machine.continuePublishing() ? .windowing : .idle
    case .windowing:
      // The store's log: the ids edited since the last cut.
      let from = machine.diffing ?? machine.cutVersion
      let since = (from + 1..<machine.version + 1)
      let log = since.reduce(into: Set<Int>()) { $0.formUnion(touched[$1]) }
      let cut = machine.cut(
        content, log: since.contains { reshaped[$0] } ? .reshaped : EditLog(touching: log))
      guard cut.fromVersion == lastPublished, cut.from == lastPublishedContent,
        cut.toVersion == machine.version
      else {
        throw PublishFailure(
          description: "cut \(cut.fromVersion)→\(cut.toVersion) does not start at the last batch")
      }
      if let touching = cut.touching {
        // Every id edited since the last published batch is in it (G2 for a log-derived batch).
        let all = (lastPublished + 1..<cut.toVersion + 1).reduce(into: Set<Int>()) {
          $0.formUnion(touched[$1])
        }
        if !all.isSubset(of: touching) { throw PublishFailure(description: "the cut forgot touched ids") }
        if (lastPublished + 1..<cut.toVersion + 1).contains(where: { reshaped[$0] }) {
          throw PublishFailure(description: "a reshaped cut offered touched ids")
        }
      }
      phase = .diffing(cut)
    case .diffing(let cut):
      let isEmpty = cut.from == cut.to && cut.refreshing.isEmpty
      let offeredBefore = machine.offeredVersion
      let (publication, waiters) = machine.diffed(cut, isEmpty: isEmpty)
      switch publication {
      case .publish(let from, let to):
        guard !isEmpty, from == lastPublished, to == cut.toVersion else {
          throw PublishFailure(description: "publication \(from)→\(to) breaks the chain or is empty")
        }
        lastPublished = to
        lastPublishedContent = cut.to
        subscribers = subscribers.map { _ in cut.to }
      case .cancelledOut(let to, let since, _):
        guard isEmpty, since == lastPublished, to == cut.toVersion, to > offeredBefore else {
          throw PublishFailure(description: "cancelled out to \(to) since \(since) out of place")
        }
        subscribers = subscribers.map { _ in cut.to }
      case .nothing:
        guard isEmpty else { throw PublishFailure(description: "a change was not published") }
      }
      for waiter in waiters {
        guard let entry = parked.removeValue(forKey: waiter), entry.version <= cut.toVersion else {
          throw PublishFailure(description: "\(waiter) resumed early or twice")
        }
      }
      try resume(waiters)
      phase = .top
    }
  }

  mutating func resume(_ waiters: [String]) throws(PublishFailure) {
    for waiter in waiters where !resumed.insert(waiter).inserted {
      throw PublishFailure(description: "\(waiter) resumed twice")
    }
  }

  /// Runs the loop until it stops, then checks what every settled source promises.
  mutating func checkSettled() throws(PublishFailure) {
    var steps = 0
    while true {
      if case .idle = phase { break }
      try loopStep()
      steps += 1
      if steps > 100 { throw PublishFailure(description: "the loop does not stop") }
    }
    if machine.cutVersion != machine.version { throw PublishFailure(description: "versions left uncut") }
    let waitingDirect = queue.filter(\.direct).count + (holder?.direct == true ? 1 : 0)
    if directMade + waitingDirect != directAsked {
      throw PublishFailure(
        description: "\(directAsked) direct writes asked, \(directMade) made and \(waitingDirect) waiting")
    }
    if let stale = subscribers.first(where: { $0 != content }) {
      throw PublishFailure(description: "a subscriber shows \(stale), the source \(content) (G2)")
    }
    if let waiting = parked.first(where: { $0.value.version <= machine.version }) {
      throw PublishFailure(description: "\(waiting.key) still waits for a cut version (G10)")
    }
  }
}
