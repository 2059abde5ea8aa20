// Synchronous tests of one subscriber's state machine: no async, no tasks, every event and action.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import SimpleSourceTesting
import Testing

@Suite("Subscriber state machine")
struct SubscriberStateMachineTests {
  typealias Machine = SubscriberStateMachine<TestSection, String>

  let v0 = snapshot("A: a")
  let v1 = snapshot("A: a b")
  let v2 = snapshot("A: a b c")

  func batch(_ from: Snapshot<TestSection>, _ to: Snapshot<TestSection>, _ fromVersion: Int, _ toVersion: Int)
    -> UpdateBatch<TestSection>
  {
    UpdateBatch(from: fromVersion, to: toVersion, changeset: Changeset(from: from, to: to))
  }

  func machine(at version: Int, _ snapshot: Snapshot<TestSection>) -> Machine {
    Machine(version: version, snapshot: snapshot, newest: nil, newestVersion: 0, newestSnapshot: v0)
  }

  @Test("G13: the version held is what was taken, and quiet versions once the newest state is taken")
  func heldVersionAndQuiet() {
    var machine = machine(at: 0, v0)
    #expect(machine.heldVersion == 0)
    var held = machine.reachedWithoutBatch(to: 3).reported
    #expect(held == nil, "not waiting: told when it asks")
    #expect(machine.heldVersion == 3, "it holds the newest state, which is also version 3's")
    held = machine.reachedWithoutBatch(to: 2).reported
    #expect(held == nil && machine.heldVersion == 3, "an older quiet version changes nothing")
    // The next batch starts where the last published one ended (G1), not at the quiet version.
    _ = machine.publish(batch(v0, v1, 0, 4), refreshing: [])
    #expect(machine.heldVersion == 0, "a batch it has not taken: it holds only what it took")
    held = machine.reachedWithoutBatch(to: 5).reported
    #expect(held == nil && machine.heldVersion == 0, "a quiet version after a batch not taken is not held")
    guard case .batch? = machine.next(waiter: "w") else {
      Issue.record("expected the shared batch")
      return
    }
    #expect(machine.heldVersion == 5, "the batch taken, then the quiet version after it")
    #expect(machine.newlyHeld() == 5, "asking, it is told first what it holds")
    let waits = machine.next(waiter: "w")
    #expect(waits == nil)
    held = machine.reachedWithoutBatch(to: 6).reported
    #expect(held == 6, "waiting with everything taken: held at once")
    let ended = machine.end()
    #expect(ended == "w")
    held = machine.reachedWithoutBatch(to: 7).reported
    #expect(held == nil, "ended")
  }

  @Test("a waiting subscriber is resumed with the shared batch")
  func waitingGetsSharedBatch() {
    var machine = machine(at: 0, v0)
    #expect(machine.next(waiter: "w") == nil)
    let resume = machine.publish(batch(v0, v1, 0, 1), refreshing: [])
    #expect(resume?.0 == "w")
    guard case .batch(let delivered)? = resume?.1 else {
      Issue.record("expected the shared batch")
      return
    }
    #expect(delivered.from == 0 && delivered.to == 1)
    #expect(machine.next(waiter: "again") == nil, "nothing newer: it waits")
  }

  @Test("a subscriber that missed batches gets one composition from its own version")
  func laggingSubscriberComposes() {
    var machine = machine(at: 0, v0)
    #expect(machine.publish(batch(v0, v1, 0, 1), refreshing: ["a"]) == nil)
    #expect(machine.publish(batch(v1, v2, 1, 2), refreshing: []) == nil)
    guard
      case .compose(let from, let fromVersion, let to, let toVersion, let refreshing, let touched)? =
        machine.next(
          waiter: "w")
    else {
      Issue.record("expected a composition")
      return
    }
    #expect(from.sections == v0.sections && to.sections == v2.sections)
    #expect(fromVersion == 0 && toVersion == 2)
    #expect(refreshing == ["a"], "force-refreshes of missed batches are kept")
    #expect(touched == ["b", "c"], "the ids the missed batches changed, to derive the catch-up from")
    machine.delivered(version: 2, snapshot: v2)
    let v3 = snapshot("A: a b c d")
    _ = machine.publish(batch(v2, v3, 2, 3), refreshing: [])
    guard case .batch(let next)? = machine.next(waiter: "w") else {
      Issue.record("expected the shared batch after delivery")
      return
    }
    #expect(next.from == 2)
  }

  @Test(
    "the catch-up knows the missed batches' ids only when it holds the first one's from, and no batch reshaped"
  )
  func catchUpIDs() {
    func composedTouched(_ machine: inout Machine) -> Set<String>?? {
      guard case .compose(_, _, _, _, _, let touched)? = machine.next(waiter: "w") else { return nil }
      return .some(touched)
    }
    // Held version 0, missed 0→1 and 1→2: known.
    var lagging = machine(at: 0, v0)
    _ = lagging.publish(batch(v0, v1, 0, 1), refreshing: [])
    _ = lagging.publish(batch(v1, v2, 1, 2), refreshing: [])
    #expect(composedTouched(&lagging) == .some(["b", "c"]))
    // A subscriber whose snapshot is newer than the published batches' start: a full diff.
    var ahead = machine(at: 1, v1)
    _ = ahead.publish(batch(v0, v2, 0, 2), refreshing: [])
    #expect(composedTouched(&ahead) == .some(nil))
    // A missed batch that inserted a section: a full diff.
    var reshaped = machine(at: 0, v0)
    let withSection = snapshot("A: a b | B:")
    _ = reshaped.publish(batch(v0, withSection, 0, 1), refreshing: [])
    _ = reshaped.publish(batch(withSection, snapshot("A: a b | B: c"), 1, 2), refreshing: [])
    #expect(composedTouched(&reshaped) == .some(nil))
    // Past a sixteenth of the list (at least 16 ids), the ids are dropped: memory stays bounded.
    func items(_ range: Range<Int>) -> Snapshot<TestSection> {
      snapshot("A: " + range.map { "i\($0)" }.joined(separator: " "))
    }
    var stalled = machine(at: 0, v0)
    var previous = v0
    for round in 0..<3 {
      let next = items(0..<(8 * round + 8))
      _ = stalled.publish(batch(previous, next, round, round + 1), refreshing: [])
      previous = next
    }
    #expect(composedTouched(&stalled) == .some(nil), "24 ids on a 24-item list")
  }

  @Test("an empty composition keeps the subscriber's version, and it waits for the next version")
  func emptyCompositionKeepsVersion() {
    var machine = machine(at: 0, v0)
    _ = machine.publish(batch(v0, v1, 0, 1), refreshing: [])
    _ = machine.publish(batch(v1, v0, 1, 2), refreshing: [])
    guard case .compose? = machine.next(waiter: "w") else {
      Issue.record("expected a composition")
      return
    }
    // The consumer found it empty and did not report a delivery: it now waits for version 3.
    #expect(machine.next(waiter: "w") == nil)
    let resume = machine.publish(batch(v0, v2, 2, 3), refreshing: [])
    guard case .compose(_, let fromVersion, _, let toVersion, _, _)? = resume?.1 else {
      Issue.record("expected a composition from version 0")
      return
    }
    #expect(fromVersion == 0 && toVersion == 3)
  }

  @Test("a subscriber registered ahead of the published version skips older batches")
  func registeredAhead() {
    var machine = machine(at: 2, v2)
    #expect(machine.publish(batch(v0, v1, 0, 1), refreshing: []) == nil)
    #expect(machine.next(waiter: "w") == nil)
  }

  /// The composition a machine hands over now, as (from, to, touched), or `nil` for anything else;
  /// checks that it goes to `target`.
  func composition(_ delivery: SubscriptionDelivery<TestSection>?, to target: Snapshot<TestSection>)
    -> (from: Int, to: Int, touched: Set<String>?)?
  {
    guard case .compose(_, let from, let to, let toVersion, _, let touched)? = delivery else { return nil }
    #expect(to.sections == target.sections, "a composition goes to the advanced state")
    return (from, toVersion, touched)
  }

  @Test("advance: a waiting subscriber at the published version composes from it, from the ids touched")
  func advanceFromPublished() {
    // Published: 0 to 1. Mutations 2 and 3 then cancelled out: version 3 holds v1's content again.
    var machine = machine(at: 0, v0)
    _ = machine.publish(batch(v0, v1, 0, 1), refreshing: [])
    #expect(machine.next(waiter: "w") == .batch(batch(v0, v1, 0, 1)))
    #expect(machine.next(waiter: "w") == nil)
    let resumed = machine.cancelledOut(to: 3, snapshot: v1, since: 1, touched: ["b"])
    #expect(resumed?.0 == "w")
    let composed = composition(resumed?.1, to: v1)
    #expect(composed?.from == 1 && composed?.to == 3 && composed?.touched == ["b"])
    #expect(machine.next(waiter: "w") == nil, "it has seen 3; an empty composition is not reported")
    #expect(machine.cancelledOut(to: 3, snapshot: v1, since: 1, touched: []) == nil, "a repeated advance")
    // The next shared batch still starts at the published version 1, which this subscriber holds.
    let next = machine.publish(batch(v1, v2, 1, 4), refreshing: [])
    #expect(next?.0 == "w" && next?.1 == .batch(batch(v1, v2, 1, 4)))
  }

  @Test(
    "advance, then two batches it does not take: the catch-up knows the ids of the first batch as well as the second's"
  )
  func advanceThenMissedSharedBatch() {
    // At the published version 0 (a). Mutations 1 and 2 cancelled out (they touched a), while another
    // subscriber started between them: this one is to compose from 0 with a's id. Then 0 to 3 (adds b),
    // which would be its next shared batch, and 3 to 4 (adds c) before it took it.
    var machine = machine(at: 0, v0)
    #expect(machine.cancelledOut(to: 2, snapshot: v0, since: 0, touched: ["a"]) == nil, "nobody waits")
    _ = machine.publish(batch(v0, v1, 0, 3), refreshing: [])
    _ = machine.publish(batch(v1, v2, 3, 4), refreshing: [])
    let composed = composition(machine.next(waiter: "w"), to: v2)
    #expect(composed?.from == 0 && composed?.to == 4)
    // b was added by the batch it never took: a catch-up from a's and c's ids alone would miss it.
    let touched = composed?.touched ?? nil
    #expect(touched == nil || touched!.isSuperset(of: ["b", "c"]), "touched: \(String(describing: touched))")
  }

  @Test("advance: a subscriber that started past the published version composes from its own, in full")
  func advanceFromAhead() {
    var machine = Machine(version: 2, snapshot: v2, newest: nil, newestVersion: 0, newestSnapshot: v0)
    #expect(machine.cancelledOut(to: 3, snapshot: v0, since: 0, touched: ["b", "c"]) == nil, "nobody waits")
    let composed = composition(machine.next(waiter: "w"), to: v0)
    #expect(composed?.from == 2 && composed?.to == 3 && composed?.touched == .some(nil))
    machine.delivered(version: 3, snapshot: v0)
    #expect(machine.next(waiter: "w") == nil)
  }

  @Test("advance: a subscriber already past it is untouched; a lagging one gets the shared batch first")
  func advanceOthers() {
    var past = Machine(version: 5, snapshot: v1, newest: nil, newestVersion: 0, newestSnapshot: v0)
    #expect(past.cancelledOut(to: 3, snapshot: v0, since: 0, touched: []) == nil)
    #expect(past.next(waiter: "w") == nil)

    var lagging = machine(at: 0, v0)
    _ = lagging.publish(batch(v0, v1, 0, 1), refreshing: [])
    #expect(lagging.cancelledOut(to: 3, snapshot: v1, since: 1, touched: ["b"]) == nil)
    #expect(lagging.next(waiter: "w") == .batch(batch(v0, v1, 0, 1)))
    let composed = composition(lagging.next(waiter: "w"), to: v1)
    #expect(composed?.from == 1 && composed?.to == 3)

    var ended = machine(at: 0, v0)
    _ = ended.end()
    #expect(ended.cancelledOut(to: 3, snapshot: v0, since: 0, touched: []) == nil)
  }

  @Test("ending is idempotent, returns the waiter once, and ends later requests")
  func ending() {
    var machine = machine(at: 0, v0)
    #expect(machine.next(waiter: "one") == nil)
    #expect(machine.end() == "one")
    #expect(machine.end() == nil)
    guard case .end? = machine.next(waiter: "late") else {
      Issue.record("an ended subscriber ends")
      return
    }
    #expect(machine.publish(batch(v0, v1, 0, 1), refreshing: []) == nil)
  }
}

extension SubscriptionDelivery: Equatable {
  static func == (lhs: Self, rhs: Self) -> Bool {
    switch (lhs, rhs) {
    case (.end, .end): true
    case (.batch(let l), .batch(let r)): l.from == r.from && l.to == r.to
    case (.compose(_, let lf, _, let lt, let lr, let lx), .compose(_, let rf, _, let rt, let rr, let rx)):
      lf == rf && lt == rt && lr == rr && lx == rx
    default: false
    }
  }
}

extension Optional where Wrapped == SubscriberStateMachine<TestSection, String>.Reached {
  /// The version a quiet version asks to report, for a subscriber not told of them.
  fileprivate var reported: Int? {
    guard case .report(let version)? = self else { return nil }
    return version
  }
}
