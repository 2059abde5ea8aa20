// Every sequence of group commit's events: writers submitting, leaders taking groups or leaving,
// followers cancelled.

@testable import SimpleSourceCore
import Testing

@Suite("Group commit state machine")
struct GroupCommitStateMachineTests {
  typealias Machine = GroupCommitStateMachine<Int>

  @Test("the write that finds none waiting leads; its turn takes every write waiting, in arrival order")
  func leadersTakeGroups() {
    var machine = Machine()
    #expect(machine.submit(1) == .lead)
    #expect(machine.submit(2) == .follow)
    #expect(machine.submit(3) == .follow)
    #expect(machine.take() == [1, 2, 3])
    #expect(machine.submit(4) == .lead, "a write after the take leads the next group")
    #expect(machine.submit(5) == .follow)
    #expect(machine.cancel { $0 == 4 } == nil, "a leader is not cancelled as a follower")
    #expect(machine.cancel { $0 == 5 } == 5)
    #expect(machine.submit(6) == .follow)
    #expect(machine.leaderLeft() == 6, "a leader that leaves hands the lead to the next write waiting")
    #expect(machine.take() == [6])
  }

  /// The model: writes submitted, each answered once, by its group or its cancellation; one leader on its
  /// way whenever a write waits.
  struct World: ExplorableWorld {
    enum Step: CustomStringConvertible {
      case submit
      /// The leader's turn came: it takes its group.
      case take
      /// The leader's task was cancelled behind a prepared write: it leaves.
      case leaderLeaves
      case cancel(Int)
      var description: String {
        switch self {
        case .submit: "submit"
        case .take: "take"
        case .leaderLeaves: "leader leaves"
        case .cancel(let write): "cancel \(write)"
        }
      }
    }

    var machine = Machine()
    var submitted = 0
    /// The writes waiting, in arrival order, and the one told to lead.
    var waiting: [Int] = []
    var leader: Int?
    /// Writes answered (by a group, a cancellation or leaving), in order.
    var answered: [Int] = []
    var groups: [[Int]] = []

    func steps() -> [Step] {
      var steps: [Step] = submitted < 5 ? [.submit] : []
      if leader != nil { steps += [.take, .leaderLeaves] }
      steps += (1...max(submitted, 1)).filter { $0 <= submitted }.map { .cancel($0) }
      return steps
    }

    mutating func perform(_ step: Step) throws {
      switch step {
      case .submit:
        submitted += 1
        let role = machine.submit(submitted)
        guard role == (waiting.isEmpty ? .lead : .follow) else {
          throw ExplorationFailure(description: "\(submitted) told \(role) with \(waiting) waiting")
        }
        if role == .lead { leader = submitted }
        waiting.append(submitted)
      case .take:
        let group = machine.take()
        guard group == waiting, group.first == leader else {
          throw ExplorationFailure(
            description: "took \(group); waiting \(waiting), leader \(String(describing: leader))")
        }
        groups.append(group)
        answered += group
        waiting = []
        leader = nil
      case .leaderLeaves:
        let next = machine.leaderLeft()
        answered.append(waiting.removeFirst())
        guard next == waiting.first else {
          throw ExplorationFailure(
            description: "handed the lead to \(String(describing: next)), waiting \(waiting)")
        }
        leader = next
      case .cancel(let write):
        let handed = machine.cancel { $0 == write }
        if let index = waiting.firstIndex(of: write), index > 0 {
          guard handed == write else { throw ExplorationFailure(description: "\(write) not handed back") }
          waiting.remove(at: index)
          answered.append(write)
        } else if let handed {
          throw ExplorationFailure(
            description: "cancelling \(write), a leader or taken, handed \(handed) back")
        }
      }
      if Set(answered).count != answered.count {
        throw ExplorationFailure(description: "a write answered twice: \(answered)")
      }
      if machine.waiting != waiting {
        throw ExplorationFailure(description: "the machine holds \(machine.waiting), the model \(waiting)")
      }
      if waiting.isEmpty != (leader == nil) {
        throw ExplorationFailure(description: "\(waiting) waiting with leader \(String(describing: leader))")
      }
    }

    mutating func checkSettled() throws {
      // Every leader takes its group in the end: then every write was answered exactly once.
      if leader != nil { try perform(.take) }
      guard answered.sorted() == Array(1...max(submitted, 1)).filter({ $0 <= submitted }) else {
        throw ExplorationFailure(description: "answered \(answered) of \(submitted)")
      }
      // Groups hold writes in arrival order, each group after the one before it.
      let byGroups = groups.flatMap { $0 }
      guard byGroups == byGroups.sorted() else {
        throw ExplorationFailure(description: "groups out of arrival order: \(groups)")
      }
    }
  }

  @Test(
    "every sequence of submits, takes, leaders leaving and cancellations answers each write once, in arrival order"
  )
  func everySequence() throws {
    try checkEverySequence(
      "Group commit state machine", from: World(), depthVariable: "SIMPLESOURCE_GROUP_COMMIT_DEPTH",
      defaultDepth: 8)
  }
}
