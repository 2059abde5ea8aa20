// The pending-edits state machine of a remote source, on its own: every sequence of edits made, waits,
// connections, answers in any order (and answers to edits not pending), cancellations and the end,
// against a model of what it must have done.

import Foundation
import Testing

@testable import SimpleSourceWire

@Suite("Pending edits state machine")
struct PendingEditsTests {
  /// Every sequence of events to the depth `SIMPLESOURCE_PENDING_EDITS_DEPTH` gives (7 by default, 8 in CI):
  /// three edits made, waits for each (and for one never made), connections and disconnections, answers
  /// to any edit in any order and twice, cancellations and the end. A connection sends every pending edit
  /// in order; one made while connected is sent, one made while not is not; an answer removes exactly its
  /// edit and resumes exactly its waiters, once; a wait after the answer gets it at once.
  @Test("every sequence of events keeps the pending edits' promises")
  func exhaustive() throws {
    try checkEverySequence(
      "Pending edits", from: PendingWorld(), depthVariable: "SIMPLESOURCE_PENDING_EDITS_DEPTH",
      defaultDepth: 7)
  }

  @Test("an example: edits sent on connect in order, answered out of order, a late wait gets its answer")
  func example() {
    var edits = PendingEdits<String, Int, String>()
    #expect(edits.make("a", "edit a") == false, "not connected: not sent")
    #expect(edits.connect() == ["edit a"])
    #expect(edits.make("b", "edit b") == true, "connected: sent at once")
    guard case .parked(let waitingA) = edits.wait(for: "a", "waiter a") else {
      Issue.record("a waiter for a pending edit parks")
      return
    }
    #expect(edits.answer("b", 7) == ("edit b", []))
    #expect(edits.answer("b", 8) == (nil, []), "a second answer changes nothing")
    guard case .answered(7) = edits.wait(for: "b", "late") else {
      Issue.record("a wait after the answer gets it at once")
      return
    }
    edits.disconnect()
    #expect(edits.connect() == ["edit a"], "a reconnect sends what is pending again")
    #expect(edits.cancelWait(waitingA) == "waiter a")
    #expect(edits.answer("a", 9) == ("edit a", []), "its waiter left; the edit was still pending")
    #expect(edits.isEmpty && edits.violations.isEmpty)
  }
}

enum PendingStep: CustomStringConvertible {
  case make
  case wait(Int)
  case connect
  case disconnect
  case answer(Int)
  case cancel(Int)
  case finish

  var description: String {
    switch self {
    case .make: "make"
    case .wait(let edit): "wait e\(edit)"
    case .connect: "connect"
    case .disconnect: "disconnect"
    case .answer(let edit): "answer e\(edit)"
    case .cancel(let waiter): "cancel w\(waiter)"
    case .finish: "finish"
    }
  }
}

/// The machine and a model: edits are `e0`, `e1`, … and their answer is their number times 10; waiters
/// are `w0`, `w1`, ….
struct PendingWorld: ExplorableWorld {
  var machine = PendingEdits<String, Int, String>()
  var made = 0
  var pending: [Int] = []
  var answered: [Int: Int] = [:]
  var connected = false
  var finished = false
  /// Parked waiters: the machine's id, and the edit each waits for.
  var parked: [String: (id: Int, edit: Int)] = [:]
  var waiters = 0

  func steps() -> [PendingStep] {
    if finished { return [] }
    var steps: [PendingStep] = made < 3 ? [.make] : []
    steps += (0...min(made, 2)).map { .wait($0) }
    steps += [connected ? .disconnect : .connect]
    steps += (0..<made).map { .answer($0) }
    steps += parked.keys.sorted().compactMap { name in Int(name.dropFirst()).map { .cancel($0) } }
    steps.append(.finish)
    return steps
  }

  mutating func perform(_ step: PendingStep) throws(PublishFailure) {
    switch step {
    case .make:
      let sent = machine.make("e\(made)", "edit e\(made)")
      try expect(
        sent == connected, "an edit made while \(connected ? "" : "not ")connected was sent: \(sent)")
      pending.append(made)
      made += 1
    case .wait(let edit):
      let name = "w\(waiters)"
      waiters += 1
      switch machine.wait(for: "e\(edit)", name) {
      case .answered(let answer):
        try expect(
          answered[edit] == answer,
          "e\(edit) answered \(answer), the model \(String(describing: answered[edit]))")
      case .unknown:
        try expect(
          answered[edit] == nil && (finished || !pending.contains(edit)), "e\(edit) is pending, not unknown")
      case .parked(let id):
        try expect(
          pending.contains(edit) && answered[edit] == nil, "parked a waiter for e\(edit), not pending")
        parked[name] = (id, edit)
      }
    case .connect:
      let sent = machine.connect()
      try expect(sent == pending.map { "edit e\($0)" }, "a connection sent \(sent), pending \(pending)")
      connected = true
    case .disconnect:
      machine.disconnect()
      connected = false
    case .answer(let edit):
      let (handedBack, resumed) = machine.answer("e\(edit)", edit * 10)
      let wasPending = handedBack != nil
      try expect(
        handedBack == (pending.contains(edit) ? "edit e\(edit)" : nil),
        "answer e\(edit) handed back \(String(describing: handedBack))")
      let due = parked.filter { $0.value.edit == edit }.keys.sorted()
      try expect(
        resumed.sorted() == (wasPending ? due : []), "answer e\(edit) resumed \(resumed), the model \(due)")
      if wasPending {
        pending.removeAll { $0 == edit }
        answered[edit] = edit * 10
        for name in due { parked[name] = nil }
      }
    case .cancel(let number):
      let name = "w\(number)"
      guard let (id, _) = parked.removeValue(forKey: name) else { return }
      try expect(machine.cancelWait(id) == name, "cancelling \(name) did not hand it back")
    case .finish:
      let resumed = machine.finish()
      try expect(resumed.sorted() == parked.keys.sorted(), "the end resumed \(resumed)")
      parked = [:]
      finished = true
      connected = false
    }
    try expect(machine.violations.isEmpty, "\(machine.violations)")
    try expect(machine.entries.map(\.id) == pending.map { "e\($0)" }, "pending \(machine.entries.map(\.id))")
    try expect(machine.isConnected == connected, "connected \(machine.isConnected)")
  }

  mutating func checkSettled() throws(PublishFailure) {
    // Answering everything that is pending resumes every waiter still parked.
    for edit in pending {
      let (_, resumed) = machine.answer("e\(edit)", edit * 10)
      for name in resumed { parked[name] = nil }
    }
    try expect(parked.isEmpty, "waiters never resumed: \(parked.keys.sorted())")
  }

  private func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(PublishFailure) {
    if !condition { throw PublishFailure(description: message()) }
  }
}
