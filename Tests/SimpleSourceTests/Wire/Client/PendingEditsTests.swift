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

@Suite("Pending edits posted over HTTP")
struct PostedEditsTests {
  /// Every sequence of events to the depth `SIMPLESOURCE_POSTING_DEPTH` gives (7 by default): three edits
  /// made, posts started, confirmed or not answered, reads covering a version, answers (a refusal, or the
  /// same answer over a WebSocket) and the end. One post at a time, the oldest edit not confirmed; a
  /// confirmed edit stays pending until a version that covers it, then is answered with its own.
  @Test("every sequence of posts, confirmations, covered versions and answers keeps the posting promises")
  func exhaustive() throws {
    try checkEverySequence(
      "Posted edits", from: PostingWorld(), depthVariable: "SIMPLESOURCE_POSTING_DEPTH", defaultDepth: 7)
  }

  @Test("an example: posted in order, one at a time; a confirmed edit answered once a read covers it")
  func example() {
    var edits = PendingEdits<String, Int, String>()
    _ = edits.make("a", "edit a")
    _ = edits.make("b", "edit b")
    #expect(edits.nextPost()?.id == "a")
    #expect(edits.nextPost() == nil, "one post at a time")
    edits.posted("a", confirmedAt: 7)
    #expect(edits.entries.map(\.id) == ["a", "b"], "confirmed, still pending: shown until read")
    #expect(edits.nextPost()?.id == "b", "the next one not confirmed")
    edits.posted("b", confirmedAt: nil)
    #expect(edits.covered(6).isEmpty)
    #expect(edits.covered(9).map(\.id) == ["a"])
    #expect(edits.answer("a", 7).edit == "edit a")
    #expect(edits.nextPost()?.id == "b", "not answered: posted again")
    #expect(edits.violations.isEmpty)
  }
}

enum PostingStep: CustomStringConvertible {
  case make
  case post
  case postEnded(confirmed: Bool)
  case cover(Int)
  case answer(Int)
  case finish

  var description: String {
    switch self {
    case .make: "make"
    case .post: "post"
    case .postEnded(let confirmed): confirmed ? "post confirmed" : "post unanswered"
    case .cover(let version): "cover v\(version)"
    case .answer(let edit): "answer e\(edit)"
    case .finish: "finish"
    }
  }
}

/// The machine and a model of its posts: edits are `e0`, `e1`, `e2`, confirmed at their number times 10.
struct PostingWorld: ExplorableWorld {
  var machine = PendingEdits<String, Int, String>()
  var made = 0
  var pending: [Int] = []
  var posting: Int?
  var confirmed: [Int: Int] = [:]
  var finished = false

  func steps() -> [PostingStep] {
    if finished { return [] }
    var steps: [PostingStep] = made < 3 ? [.make] : []
    steps.append(posting == nil ? .post : .postEnded(confirmed: true))
    if posting != nil { steps.append(.postEnded(confirmed: false)) }
    steps += [.cover(10), .cover(20)]
    steps += (0..<made).map { .answer($0) }
    steps.append(.finish)
    return steps
  }

  mutating func perform(_ step: PostingStep) throws(PublishFailure) {
    switch step {
    case .make:
      _ = machine.make("e\(made)", "edit e\(made)")
      pending.append(made)
      made += 1
    case .post:
      let next = machine.nextPost()
      let expected = posting == nil ? pending.first { confirmed[$0] == nil } : nil
      try expect(next?.id == expected.map { "e\($0)" }, "posted \(String(describing: next?.id))")
      try expect(next.map { $0.edit == "edit \($0.id)" } ?? true, "posted another edit's body")
      posting = expected
    case .postEnded(let isConfirmed):
      guard let edit = posting else { return }
      machine.posted("e\(edit)", confirmedAt: isConfirmed ? edit * 10 : nil)
      posting = nil
      if isConfirmed && pending.contains(edit) { confirmed[edit] = edit * 10 }
    case .cover(let version):
      let due = machine.covered(version)
      let expected = pending.filter { confirmed[$0].map { $0 <= version } ?? false }
      try expect(
        due.map(\.id) == expected.map { "e\($0)" } && due.map(\.version) == expected.map { $0 * 10 },
        "covering v\(version) answers \(due.map(\.id)), the model \(expected)")
      // The source answers them, with their own versions.
      for edit in expected { answer(edit) }
    case .answer(let edit):
      answer(edit)
    case .finish:
      _ = machine.finish()
      posting = nil
      finished = true
    }
    try expect(machine.violations.isEmpty, "\(machine.violations)")
    try expect(machine.entries.map(\.id) == pending.map { "e\($0)" }, "pending \(machine.entries.map(\.id))")
    try expect(machine.posting == posting.map { "e\($0)" }, "posting \(String(describing: machine.posting))")
    try expect(
      machine.confirmedByPost == Dictionary(uniqueKeysWithValues: confirmed.map { ("e\($0.key)", $0.value) }),
      "confirmed \(machine.confirmedByPost)")
  }

  var key: AnyHashable? {
    [made, posting ?? -1, finished ? 1 : 0, -1] + pending + [-2]
      + confirmed.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
  }

  mutating func checkSettled() throws(PublishFailure) {
    // Posting on until nothing is left: every edit gets confirmed, a read covers it, and it is answered.
    guard !finished else { return }
    if let edit = posting { machine.posted("e\(edit)", confirmedAt: edit * 10) }
    while let (id, _) = machine.nextPost() { machine.posted(id, confirmedAt: 0) }
    for (id, version) in machine.covered(30) { _ = machine.answer(id, version) }
    try expect(machine.isEmpty, "edits never answered: \(machine.entries.map(\.id))")
  }

  private mutating func answer(_ edit: Int) {
    _ = machine.answer("e\(edit)", edit * 10)
    pending.removeAll { $0 == edit }
    confirmed[edit] = nil
    if posting == edit { posting = nil }
  }

  private func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(PublishFailure) {
    if !condition { throw PublishFailure(description: message()) }
  }
}
