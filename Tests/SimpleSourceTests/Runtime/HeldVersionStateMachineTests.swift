// Every sequence of HeldVersion's events up to a fixed depth, synchronously, checking its invariants.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import Testing

@Suite("HeldVersion state machine")
struct HeldVersionStateMachineTests {
  typealias Machine = HeldVersionStateMachine<Int>

  enum Event: CustomStringConvertible {
    case makeID
    case wait(target: Int)  // registers the oldest id made and not yet registered
    case hold(Int)
    case cancel(Int)  // by id
    case finish

    var description: String {
      switch self {
      case .makeID: "makeID"
      case .wait(let target): "wait(\(target))"
      case .hold(let version): "hold(\(version))"
      case .cancel(let id): "cancel(\(id))"
      case .finish: "finish"
      }
    }
  }

  /// What the test knows of one run: the answer each id got, and the ids registered.
  struct Run {
    var machine = Machine(version: 0)
    var made: [Int] = []
    var unregistered: [Int] = []
    var targets: [Int: Int] = [:]
    var answers: [Int: Bool] = [:]
    var cancelled: Set<Int> = []
    var path: [Event] = []

    mutating func answer(_ id: Int, _ reached: Bool) {
      #expect(answers[id] == nil, "id \(id) answered twice: \(path)")
      answers[id] = reached
      if reached {
        #expect(
          machine.version >= targets[id, default: .max], "id \(id) answered before its version: \(path)")
      } else {
        #expect(machine.isFinished || cancelled.contains(id), "id \(id) refused without cause: \(path)")
      }
    }

    mutating func perform(_ event: Event) {
      path.append(event)
      switch event {
      case .makeID:
        let id = machine.makeID()
        made.append(id)
        unregistered.append(id)
      case .wait(let target):
        let id = unregistered.removeFirst()
        targets[id] = target
        if let reached = machine.wait(for: target, id: id, waiter: id) { answer(id, reached) }
      case .hold(let version):
        for id in machine.hold(through: version) { answer(id, true) }
      case .cancel(let id):
        cancelled.insert(id)
        if let waiter = machine.cancel(id: id) { answer(waiter, false) }
      case .finish:
        for id in machine.finish() { answer(id, false) }
      }
      checkInvariants()
    }

    func checkInvariants() {
      for pending in machine.pending {
        #expect(pending.version > machine.version, "a satisfied waiter is still pending: \(path)")
        #expect(answers[pending.id] == nil, "an answered waiter is still pending: \(path)")
      }
      if machine.isFinished { #expect(machine.pending.isEmpty, "waiters left after finish: \(path)") }
      #expect(Set(machine.unregistered.keys) == Set(unregistered), "unregistered ids kept wrongly: \(path)")
      let registered = Set(targets.keys)
      for id in registered where answers[id] == nil {
        #expect(machine.pending.contains { $0.id == id }, "id \(id) neither answered nor pending: \(path)")
      }
    }

    func events() -> [Event] {
      var events: [Event] = [.makeID, .hold(1), .hold(2), .finish]
      if !unregistered.isEmpty { events += [.wait(target: 1), .wait(target: 2)] }
      events += made.map { .cancel($0) }
      return events
    }
  }

  @Test("every sequence of up to 7 events keeps every waiter answered once and only when due")
  func exhaustive() {
    var sequences = 0
    func explore(_ run: Run, depth: Int) {
      sequences += 1
      guard depth > 0 else { return }
      for event in run.events() {
        var next = run
        next.perform(event)
        explore(next, depth: depth - 1)
      }
    }
    explore(Run(), depth: 7)
    print("HeldVersion state machine: \(sequences) sequences of up to 7 events")
    #expect(sequences > 100_000)
  }

  @Test("a cancellation that arrives before the wait is registered makes the wait return false at once")
  func cancelBeforeWait() {
    var machine = Machine(version: 0)
    let id = machine.makeID()
    #expect(machine.cancel(id: id) == nil)
    #expect(machine.wait(for: 1, id: id, waiter: 7) == false)
    #expect(machine.pending.isEmpty && machine.unregistered.isEmpty)
  }
}
