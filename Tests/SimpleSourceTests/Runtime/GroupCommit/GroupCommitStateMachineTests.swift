// Every sequence of group commit's events: writers submitting, the loop committing groups, cancellations.

@testable import SimpleSourceCore
import Testing

@Suite("Group commit state machine")
struct GroupCommitStateMachineTests {
  typealias Machine = GroupCommitStateMachine<Int>

  @Test("a write forms a group when none commits, and joins the next otherwise; groups keep arrival order")
  func groupsInArrivalOrder() {
    var machine = Machine()
    guard case .startGroup([1]) = machine.submit(1) else {
      Issue.record("the first write starts the loop"); return
    }
    guard case .none = machine.submit(2), case .none = machine.submit(3) else {
      Issue.record("later writes wait for the next group")
      return
    }
    guard case .nextGroup([2, 3]) = machine.groupCommitted() else { Issue.record("the next group"); return }
    guard case .stop = machine.groupCommitted() else { Issue.record("the loop stops"); return }
    guard case .startGroup([4]) = machine.submit(4) else { Issue.record("and starts again"); return }
  }

  /// The model: writes submitted, each answered once, by its group or its cancellation.
  struct World: ExplorableWorld {
    enum Step: CustomStringConvertible {
      case submit
      case commitGroup
      case cancel(Int)
      var description: String {
        switch self {
        case .submit: "submit"
        case .commitGroup: "group committed"
        case .cancel(let write): "cancel \(write)"
        }
      }
    }

    var machine = Machine()
    var submitted = 0
    /// The group the loop is committing, if it runs; the writes waiting for the next group.
    var committing: [Int]?
    var waiting: [Int] = []
    /// Writes answered (by a group or a cancellation), in the order groups answered them.
    var answered: [Int] = []
    var cancelled: Set<Int> = []

    func steps() -> [Step] {
      var steps: [Step] = submitted < 5 ? [.submit] : []
      if committing != nil { steps.append(.commitGroup) }
      steps += (1...max(submitted, 1)).filter { $0 <= submitted }.map { .cancel($0) }
      return steps
    }

    mutating func perform(_ step: Step) throws {
      switch step {
      case .submit:
        submitted += 1
        switch machine.submit(submitted) {
        case .startGroup(let group):
          guard committing == nil, group == [submitted] else {
            throw ExplorationFailure(description: "a second loop, or a group of others: \(group)")
          }
          committing = group
        case .none:
          guard committing != nil else { throw ExplorationFailure(description: "a write left with no loop") }
          waiting.append(submitted)
        case .nextGroup, .stop:
          throw ExplorationFailure(description: "a submit answered as a commit")
        }
      case .commitGroup:
        guard let group = committing else { return }
        answer(group)
        switch machine.groupCommitted() {
        case .nextGroup(let next):
          guard next == waiting, !next.isEmpty else {
            throw ExplorationFailure(description: "next group \(next), waiting \(waiting)")
          }
          committing = next
          waiting = []
        case .stop:
          guard waiting.isEmpty else {
            throw ExplorationFailure(description: "stopped with \(waiting) waiting")
          }
          committing = nil
        case .startGroup, .none:
          throw ExplorationFailure(description: "a commit answered as a submit")
        }
      case .cancel(let write):
        let handed = machine.cancel { $0 == write }
        if let index = waiting.firstIndex(of: write) {
          guard handed == write else { throw ExplorationFailure(description: "\(write) not handed back") }
          waiting.remove(at: index)
          cancelled.insert(write)
          answered.append(write)
        } else if handed != nil {
          throw ExplorationFailure(description: "cancelling \(write), not waiting, handed \(handed!) back")
        }
      }
      if Set(answered).count != answered.count {
        throw ExplorationFailure(description: "a write answered twice: \(answered)")
      }
    }

    mutating func answer(_ group: [Int]) { answered += group }

    mutating func checkSettled() throws {
      // The loop commits until it stops: then every write was answered exactly once.
      var turns = 0
      while committing != nil {
        try perform(.commitGroup)
        turns += 1
        if turns > 20 { throw ExplorationFailure(description: "the loop never stops") }
      }
      guard answered.sorted() == Array(1...max(submitted, 1)).filter({ $0 <= submitted }) else {
        throw ExplorationFailure(description: "answered \(answered) of \(submitted)")
      }
      // Groups answer in arrival order (cancelled writes aside).
      let byGroups = answered.filter { !cancelled.contains($0) }
      guard byGroups == byGroups.sorted() else {
        throw ExplorationFailure(description: "groups answered out of arrival order: \(byGroups)")
      }
    }
  }

  @Test(
    "every sequence of submits, group commits and cancellations answers each write once, in arrival order")
  func everySequence() throws {
    try checkEverySequence(
      "Group commit state machine", from: World(), depthVariable: "SIMPLESOURCE_GROUP_COMMIT_DEPTH",
      defaultDepth: 8)
  }
}
