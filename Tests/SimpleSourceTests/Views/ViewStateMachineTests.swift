// The view data source's state machine, without async: examples, then every sequence of events to a depth.

import Foundation
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("View state machine")
struct ViewStateMachineTests {
  typealias Machine = ViewStateMachine<String, String>

  /// A subscribed machine at version 0.
  func following() -> (Machine, epoch: Int) {
    var machine = Machine()
    let epoch = machine.beginFollowing()
    _ = machine.subscribed(epoch: epoch, version: 0)
    return (machine, epoch)
  }

  /// Runs an admitted reconciliation to its end: the moves it replayed, and whether it scheduled another.
  func reconcile(_ machine: inout Machine, epoch: Int, through version: Int) -> (
    moves: [String], again: Bool
  )? {
    guard case .compute(let edits, let moves) = machine.beginReconcile(epoch: epoch),
      machine.reconcileComputed(epoch: epoch, edits: edits) == .apply
    else { return nil }
    let again = machine.finished(at: version, reconciled: true)
    _ = machine.leave()
    return (moves, again)
  }

  @Test("a batch is applied as it is when no move is pending, and the gate opens after it")
  func plainBatch() {
    var machine = Machine()
    let epoch = machine.beginFollowing()
    #expect(machine.subscribed(epoch: epoch, version: 3) == [])
    #expect(machine.admit(.batch(to: 4), epoch: epoch) == .apply)
    #expect(machine.admit(.batch(to: 5), epoch: epoch) == .wait, "one applier at a time")
    #expect(machine.park("next") == nil)
    #expect(machine.finished(at: 4, reconciled: false) == false)
    #expect(machine.leave() == ["next"])
    #expect(machine.version == 4)
    #expect(machine.violations.isEmpty)
  }

  @Test("work of an earlier subscription is dropped")
  func staleWorkDropped() {
    var machine = Machine()
    let first = machine.beginFollowing()
    _ = machine.subscribed(epoch: first, version: 0)
    let second = machine.beginFollowing()
    #expect(machine.subscribed(epoch: first, version: 9) == nil, "the earlier follow lost")
    #expect(machine.admit(.batch(to: 1), epoch: first) == .drop)
    _ = machine.subscribed(epoch: second, version: 5)
    machine.stop()
    #expect(machine.admit(.batch(to: 6), epoch: second) == .drop, "stop() drops the rest")
  }

  @Test("a move is rebased over batches until a batch includes it")
  func moveRebasedUntilIncluded() {
    var (machine, epoch) = following()
    let serial = machine.userMoved("a→2")
    #expect(machine.diverged)
    #expect(machine.admit(.batch(to: 1), epoch: epoch) == .reconcile, "a writer's batch is rebased")
    let first = reconcile(&machine, epoch: epoch, through: 1)
    #expect(first?.moves == ["a→2"] && first?.again == false)
    #expect(machine.diverged, "the move is still on its way")
    let landed = machine.moveLanded(serial, in: 2)
    #expect(landed.reconcile == false, "its batch has not arrived yet")
    #expect(machine.admit(.batch(to: 2), epoch: epoch) == .reconcile, "rebased once more, onto no move")
    #expect(machine.pendingMoves.isEmpty, "the batch includes the move")
    let last = reconcile(&machine, epoch: epoch, through: 2)
    #expect(last?.moves == [] && last?.again == false)
    #expect(!machine.diverged)
    #expect(machine.admit(.batch(to: 3), epoch: epoch) == .apply, "later batches apply as they are")
  }

  @Test("a move that lands in a version already shown schedules a reconciliation")
  func lateLandingReconciles() {
    var (machine, epoch) = following()
    let serial = machine.userMoved("a→2")
    #expect(machine.admit(.batch(to: 1), epoch: epoch) == .reconcile)
    #expect(reconcile(&machine, epoch: epoch, through: 1) != nil)
    #expect(machine.moveLanded(serial, in: 1).reconcile, "version 1 already included it")
    #expect(machine.admit(.reconcile, epoch: epoch) == .reconcile)
  }

  @Test("a diff computed across a move or a drag is computed again")
  func staleDiffRetried() {
    var (machine, epoch) = following()
    _ = machine.userMoved("a→2")
    #expect(machine.admit(.batch(to: 1), epoch: epoch) == .reconcile)
    guard case .compute(let edits, _) = machine.beginReconcile(epoch: epoch) else {
      Issue.record("expected a diff to compute")
      return
    }
    _ = machine.userMoved("b→0")
    #expect(machine.reconcileComputed(epoch: epoch, edits: edits) == .retry)
    machine.beginInteractiveMove()
    guard case .wait = machine.beginReconcile(epoch: epoch) else {
      Issue.record("a reconciliation waits for the drag to end")
      return
    }
    #expect(machine.parkUntilDragsEnd("reconciler") == nil)
    #expect(machine.endInteractiveMove() == ["reconciler"])
  }

  @Test("a refused move is taken back and reported once; waiters for moves are resumed")
  func failedMove() {
    var (machine, _) = following()
    let serial = machine.userMoved("a→2")
    #expect(machine.parkUntilLanded("settled") == nil)
    let failed = machine.moveFailed(serial)
    #expect(failed.move == "a→2" && failed.reconcile && failed.waiters == ["settled"])
    #expect(machine.moveFailed(serial).move == nil, "reported once")
    #expect(machine.parkUntilLanded("again") == "again", "nothing on its way: resume at once")
  }

  // MARK: - Every sequence of events

  /// Every sequence of events to the depth given by `SIMPLESOURCE_VIEW_STATE_DEPTH` (6 by default, 7 in
  /// CI's own step for it). The events are those of the tasks of a real `ListViewDataSource`, each step one main-actor turn:
  /// a writer's batch arrives; the user moves an item, begins or ends a drag; the delegate applies a move
  /// (in a new version, in the current one, or rejects it) and returns; a reconciliation's diff finishes;
  /// a parked task resumes; `follow` begins and its subscription returns; `stop()`; a task awaits
  /// `settled()`. After every step the machine's invariants hold, at most one task applies, stale
  /// work never applies, and every parked task is known to the machine. At the end of each sequence the
  /// drags end and every task runs to its end: nothing stays parked, and a view still following shows the
  /// source's newest version with no move pending.
  @Test("every sequence of events keeps the invariants and ends showing the source")
  func exhaustive() {
    let depth = ProcessInfo.processInfo.environment["SIMPLESOURCE_VIEW_STATE_DEPTH"].flatMap(Int.init) ?? 6
    var explorer = Explorer(depth: depth)
    explorer.explore(World.start(), trace: [])
    print(
      "View state machine: \(explorer.sequences) sequences of up to \(depth) events checked, "
        + "\(explorer.states) distinct states explored")
    #expect(explorer.failures.isEmpty, "\(explorer.failures.prefix(3).joined(separator: "\n"))")
    #expect(explorer.sequences > 10_000)
  }
}

// MARK: - The world the machine lives in

/// A task of the view data source, as far as the machine is concerned.
private enum Phase: Hashable {
  /// The follower with no batch in hand.
  case idle
  /// Asking the gate for `work`.
  case admitting(ViewStateMachine<Int, Int>.Work)
  /// Parked; `resume` is what it does when resumed.
  indirect case parked(resume: Phase)
  /// Holding the gate, about to ask for its next reconciliation step.
  case reconciling(through: Int)
  /// Its diff runs off the main actor.
  case computing(through: Int, edits: Int)
  /// The reordering delegate of move `serial` runs.
  case delegate(serial: Int)
  /// The delegate applied move `serial` in `version` and is returning.
  case returning(serial: Int, version: Int)
  /// `follow` is subscribing.
  case subscribing
  /// Awaiting `settled()`.
  case settling
  case done
}

private struct Process: Hashable {
  var epoch: Int
  var phase: Phase
  var isFollower = false
}

/// The machine, the source it follows, and the tasks around it. A value: each branch of the exploration
/// copies it.
private struct World: Hashable {
  var machine = ViewStateMachine<Int, Int>()
  var source = 0
  /// Batches the follower has not taken yet (source versions).
  var inbox: [Int] = []
  var processes: [Int: Process] = [:]
  var nextProcess = 0
  var applying: Int?
  /// The epoch of the last subscription that returned, if still current.
  var following: Int?
  var writes = 2, moves = 2, drags = 2, follows = 1, stops = 1, settles = 1

  static func start() -> World {
    var world = World()
    let epoch = world.machine.beginFollowing()
    _ = world.machine.subscribed(epoch: epoch, version: 0)
    world.following = epoch
    world.spawn(Process(epoch: epoch, phase: .idle, isFollower: true))
    return world
  }

  mutating func spawn(_ process: Process) {
    processes[nextProcess] = process
    nextProcess += 1
  }

  mutating func resume(_ waiters: [Int]) throws(Failure) {
    for id in waiters {
      guard case .parked(let resume)? = processes[id]?.phase else {
        throw Failure("resumed \(id), not parked")
      }
      processes[id]?.phase = resume
    }
  }

  /// A task parks with `park`, which may hand it back at once.
  mutating func park(_ id: Int, resume: Phase, _ park: (inout ViewStateMachine<Int, Int>, Int) -> Int?)
    throws(Failure)
  {
    if park(&machine, id) == id {
      processes[id]?.phase = resume
    } else {
      processes[id]?.phase = .parked(resume: resume)
    }
  }

  mutating func scheduleReconcile() {
    spawn(Process(epoch: machine.epoch, phase: .admitting(.reconcile)))
  }

  /// The task `id` leaves the gate, and is done (the follower goes back to idle).
  mutating func leave(_ id: Int) throws(Failure) {
    guard applying == id else { throw Failure("\(id) left a gate it did not hold") }
    applying = nil
    try resume(machine.leave())
    let isFollower = processes[id]?.isFollower == true
    processes[id]?.phase = isFollower ? .idle : .done
  }

  mutating func finish(_ id: Int, at version: Int, reconciled: Bool) throws(Failure) {
    guard processes[id]?.epoch == machine.epoch else { throw Failure("stale work of \(id) applied") }
    guard version >= machine.version else { throw Failure("version went back to \(version)") }
    if machine.finished(at: version, reconciled: reconciled) { scheduleReconcile() }
    try leave(id)
  }

  /// Asks for the next reconciliation step, in the same main-actor turn as what led to it.
  mutating func reconcile(_ id: Int, through version: Int) throws(Failure) {
    switch machine.beginReconcile(epoch: processes[id]!.epoch) {
    case .wait: try park(id, resume: .reconciling(through: version)) { $0.parkUntilDragsEnd($1) }
    case .drop: try leave(id)
    case .compute(let edits, _): processes[id]?.phase = .computing(through: version, edits: edits)
    }
  }

  /// The steps task `id` can take now (several for a delegate).
  func steps(of id: Int) -> [Step] {
    guard let process = processes[id] else { return [] }
    switch process.phase {
    case .idle:
      return process.epoch == following && !inbox.isEmpty ? [.run(id, choice: 0)] : []
    case .parked, .done: return []
    case .delegate: return [.run(id, choice: 0), .run(id, choice: 1), .run(id, choice: 2)]
    default: return [.run(id, choice: 0)]
    }
  }

  /// Runs one main-actor turn of task `id`.
  mutating func run(_ id: Int, choice: Int) throws(Failure) {
    guard let process = processes[id] else { throw Failure("no task \(id)") }
    switch process.phase {
    case .idle:
      processes[id]?.phase = .admitting(.batch(to: inbox.removeFirst()))
      try run(id, choice: 0)
    case .admitting(let work):
      switch machine.admit(work, epoch: process.epoch) {
      case .wait: try park(id, resume: .admitting(work)) { $0.park($1) }
      case .drop: processes[id]?.phase = process.isFollower ? .idle : .done
      case .apply:
        guard applying == nil else { throw Failure("two tasks apply") }
        guard case .batch(let to) = work else { throw Failure("a reconciliation applied as a batch") }
        applying = id
        try finish(id, at: to, reconciled: false)
      case .reconcile:
        guard applying == nil else { throw Failure("two tasks apply") }
        applying = id
        if case .batch(let to) = work {
          try reconcile(id, through: to)
        } else {
          try reconcile(id, through: machine.version)
        }
      }
    case .reconciling(let through):
      try reconcile(id, through: through)
    case .computing(let through, let edits):
      switch machine.reconcileComputed(epoch: process.epoch, edits: edits) {
      case .drop: try leave(id)
      case .retry: try reconcile(id, through: through)
      case .apply: try finish(id, at: through, reconciled: true)
      }
    case .delegate(let serial):
      switch choice {
      case 0:
        source += 1
        if following != nil { inbox.append(source) }
        processes[id]?.phase = .returning(serial: serial, version: source)
      case 1:
        processes[id]?.phase = .returning(serial: serial, version: source)
      default:
        let (_, reconcile, waiters) = machine.moveFailed(serial)
        if reconcile { scheduleReconcile() }
        try resume(waiters)
        processes[id]?.phase = .done
      }
    case .returning(let serial, let version):
      let (reconcile, waiters) = machine.moveLanded(serial, in: version)
      if reconcile { scheduleReconcile() }
      try resume(waiters)
      processes[id]?.phase = .done
    case .subscribing:
      processes[id]?.phase = .done
      guard let waiters = machine.subscribed(epoch: process.epoch, version: source) else { return }
      try resume(waiters)
      following = process.epoch
      inbox = []
      spawn(Process(epoch: process.epoch, phase: .idle, isFollower: true))
    case .settling:
      if machine.hasUnlandedMoves {
        try park(id, resume: .settling) { $0.parkUntilLanded($1) }
      } else {
        processes[id]?.phase = .done
      }
    case .parked, .done:
      throw Failure("\(id) ran while \(process.phase)")
    }
  }

  /// Every step possible now.
  var enabled: [Step] {
    var steps: [Step] = []
    if writes > 0 { steps.append(.write) }
    if moves > 0 { steps.append(.userMove) }
    if drags > 0 { steps.append(.beginDrag) }
    if machine.interactiveMoves > 0 { steps.append(.endDrag) }
    if follows > 0 { steps.append(.follow) }
    if stops > 0 { steps.append(.stop) }
    if settles > 0 { steps.append(.settle) }
    for id in processes.keys.sorted() { steps += self.steps(of: id) }
    return steps
  }

  mutating func perform(_ step: Step) throws(Failure) {
    switch step {
    case .write:
      writes -= 1
      source += 1
      if following != nil { inbox.append(source) }
    case .userMove:
      moves -= 1
      let serial = machine.userMoved(moves)
      spawn(Process(epoch: machine.epoch, phase: .delegate(serial: serial)))
    case .beginDrag:
      drags -= 1
      machine.beginInteractiveMove()
    case .endDrag:
      try resume(machine.endInteractiveMove())
    case .follow:
      follows -= 1
      following = nil
      inbox = []
      spawn(Process(epoch: machine.beginFollowing(), phase: .subscribing))
    case .stop:
      stops -= 1
      following = nil
      inbox = []
      machine.stop()
    case .settle:
      settles -= 1
      spawn(Process(epoch: machine.epoch, phase: .settling))
    case .run(let id, let choice):
      try run(id, choice: choice)
    }
    try check()
  }

  /// What must hold after every step.
  func check() throws(Failure) {
    if let violation = machine.violations.first { throw Failure(violation) }
    if (applying != nil) != machine.isApplying { throw Failure("the gate's holder is unknown") }
    let parked = Set(processes.filter { if case .parked = $0.value.phase { true } else { false } }.keys)
    let known = machine.gateWaiters + machine.landingWaiters
    if parked != Set(known) || known.count != Set(known).count {
      throw Failure("parked tasks \(parked.sorted()) but the machine knows \(known)")
    }
    if machine.version > source { throw Failure("the view is ahead of the source") }
  }

  /// Ends the drags and runs every task to its end, delegates applying their moves.
  mutating func drain() throws(Failure) {
    for _ in 0..<500 {
      if machine.interactiveMoves > 0 {
        try perform(.endDrag)
        continue
      }
      let world = self
      guard let step = processes.keys.sorted().lazy.flatMap({ world.steps(of: $0) }).first else { break }
      try perform(step)
    }
    if processes.values.contains(where: { if case .parked = $0.phase { true } else { false } }) {
      throw Failure("a task stays parked")
    }
    if processes.values.contains(where: { $0.phase != .done && $0.phase != .idle }) {
      throw Failure("a task never ends")
    }
    guard following == machine.epoch else { return }
    if machine.version != source {
      throw Failure("the view ends at \(machine.version), the source at \(source)")
    }
    if machine.diverged || !machine.pendingMoves.isEmpty { throw Failure("the view ends rebased") }
  }
}

private enum Step: Equatable, CustomStringConvertible {
  case write, userMove, beginDrag, endDrag, follow, stop, settle
  case run(Int, choice: Int)

  var description: String {
    switch self {
    case .write: "write"
    case .userMove: "move"
    case .beginDrag: "begin drag"
    case .endDrag: "end drag"
    case .follow: "follow"
    case .stop: "stop"
    case .settle: "settle"
    case .run(let id, let choice): "run \(id)" + (choice == 0 ? "" : "/\(choice)")
    }
  }
}

private struct Failure: Error {
  let message: String
  init(_ message: String) { self.message = message }
}

/// Walks every sequence of events. A state reached again with as many events to go has the same
/// sequences after it, so each (state, events to go) is explored once and its count of sequences reused:
/// the count is exact, the work is the number of distinct states.
private struct Explorer {
  struct Key: Hashable {
    let world: World
    let remaining: Int
  }

  let depth: Int
  /// Sequences checked (each a path from the start to a drained end).
  var sequences = 0
  /// Distinct (state, events to go) explored.
  var states = 0
  var failures: [String] = []
  private var counted: [Key: Int] = [:]

  init(depth: Int) { self.depth = depth }

  mutating func explore(_ world: World, trace: [Step]) {
    sequences = count(world, trace: trace)
  }

  /// The number of sequences from `world` with `depth - trace.count` events to go.
  private mutating func count(_ world: World, trace: [Step]) -> Int {
    let key = Key(world: world, remaining: depth - trace.count)
    if let known = counted[key] { return known }
    guard failures.count < 20 else { return 0 }
    states += 1
    let enabled = trace.count < depth ? world.enabled : []
    var total = 0
    if enabled.isEmpty {
      var drained = world
      do { try drained.drain() } catch { failures.append("\(trace) then drain: \(error.message)") }
      total = 1
    }
    for step in enabled {
      var next = world
      do {
        try next.perform(step)
      } catch {
        failures.append("\(trace + [step]): \(error.message)")
        continue
      }
      total += count(next, trace: trace + [step])
    }
    counted[key] = total
    return total
  }
}

extension ViewStateMachine.PendingMove: Equatable, Hashable
where Move: Hashable {
  static func == (lhs: Self, rhs: Self) -> Bool {
    (lhs.serial, lhs.move, lhs.includedIn) == (rhs.serial, rhs.move, rhs.includedIn)
  }
  func hash(into hasher: inout Hasher) {
    hasher.combine(serial)
    hasher.combine(move)
    hasher.combine(includedIn)
  }
}

extension ViewStateMachine: Equatable, Hashable where Move: Hashable, Waiter: Hashable {
  /// Every stored property: two machines are equal when every future event does the same to both.
  private var parts: [AnyHashable] {
    [
      epoch, isSubscribed, version, pendingMoves, moveSerial, localEdits, diverged, interactiveMoves,
      isApplying, gateWaiters, landingWaiters,
    ]
  }
  static func == (lhs: Self, rhs: Self) -> Bool { lhs.parts == rhs.parts }
  func hash(into hasher: inout Hasher) { hasher.combine(parts) }
}
