// The writes a hub owes its subscribers' sinks: every sequence of publishes that queue subscribers and
// writers that claim, write and stop, and a queue that is never drained.

@testable import SimpleSourceCore
import Testing

@Suite("Sink writers state machine")
struct SinkWritersStateMachineTests {
  typealias Machine = SinkWritersStateMachine<Int>

  /// The machine, and the writers it had started in the model: each about to claim, or writing one
  /// subscriber outside the lock. Checked at every step: no more than two writers run, the machine counts
  /// them as the model does, a queued subscriber always has a writer running (none is stranded), and
  /// subscribers are claimed in the order they were queued, each once per time it was queued. Once
  /// drained (every writer claims until it stops), every queued subscriber was claimed and none runs.
  struct World: ExplorableWorld {
    enum Step: CustomStringConvertible {
      /// A publish queues these subscribers.
      case enqueue([Int])
      /// Writer `i` claims its next subscriber, or stops.
      case claim(Int)
      /// Writer `i` is done writing its subscriber.
      case wrote(Int)

      var description: String {
        switch self {
        case .enqueue(let items): "enqueue \(items)"
        case .claim(let writer): "writer \(writer) claims"
        case .wrote(let writer): "writer \(writer) wrote"
        }
      }
    }

    enum Writer {
      case claiming
      case writing(ArraySlice<Int>)
      case stopped
    }

    var machine = Machine(maxWriters: 2)
    var writers: [Writer] = []
    /// What was queued and not yet claimed, in order.
    var queued: [Int] = []
    var publishes = 0
    static let maxPublishes = 3

    var running: Int {
      writers.count { if case .stopped = $0 { false } else { true } }
    }

    func steps() -> [Step] {
      var steps: [Step] = []
      if publishes < Self.maxPublishes { steps += [.enqueue([0]), .enqueue([1, 2])] }
      for (index, writer) in writers.enumerated() {
        switch writer {
        case .claiming: steps.append(.claim(index))
        case .writing: steps.append(.wrote(index))
        case .stopped: break
        }
      }
      return steps
    }

    mutating func perform(_ step: Step) throws {
      switch step {
      case .enqueue(let items):
        publishes += 1
        queued += items
        let start = machine.enqueue(items)
        writers += Array(repeating: .claiming, count: start)
      case .claim(let index):
        let claimed = machine.claim()
        if !claimed.isEmpty {
          // Few are queued here: one at a time, so that a sink that blocks holds no other.
          guard claimed.count == 1, claimed.first == queued.first else {
            throw ExplorationFailure(
              description: "claimed \(claimed) while \(queued) were queued, in that order")
          }
          queued.removeFirst()
          writers[index] = .writing(claimed)
        } else {
          guard queued.isEmpty else {
            throw ExplorationFailure(description: "a writer stopped while \(queued) were queued")
          }
          writers[index] = .stopped
        }
      case .wrote(let index):
        writers[index] = .claiming
      }
      guard running <= machine.maxWriters, machine.writers == running else {
        throw ExplorationFailure(description: "\(running) writers run, the machine counts \(machine.writers)")
      }
      guard queued.count == machine.queued, queued.isEmpty || running > 0 else {
        throw ExplorationFailure(description: "\(queued) queued with \(running) writers running")
      }
    }

    mutating func checkSettled() throws {
      var turns = 0
      while let index = writers.indices.first(where: {
        if case .stopped = writers[$0] { false } else { true }
      }) {
        turns += 1
        guard turns < 100 else { throw ExplorationFailure(description: "the writers never stop") }
        if case .writing = writers[index] { try perform(.wrote(index)) } else { try perform(.claim(index)) }
      }
      guard queued.isEmpty, machine.queued == 0, machine.writers == 0 else {
        throw ExplorationFailure(description: "drained with \(queued) queued and \(machine.writers) writers")
      }
    }
  }

  @Test(
    "every sequence of publishes and writers' claims, writes and stops strands nothing and keeps the order")
  func everySequence() throws {
    try checkEverySequence(
      "Sink writers", from: World(), depthVariable: "SIMPLESOURCE_SINK_WRITERS_DEPTH", defaultDepth: 9)
  }

  @Test("many queued are claimed in parts of at most 64, in order; few, one at a time")
  func claimSizes() {
    var machine = Machine(maxWriters: 2)
    #expect(machine.enqueue(Array(0..<1_000)) == 1, "one writer while nothing blocks")
    var claimed: [Int] = []
    var sizes: [Int] = []
    while true {
      let part = machine.claim()
      if part.isEmpty { break }
      sizes.append(part.count)
      claimed += part
    }
    #expect(claimed == Array(0..<1_000))
    #expect(sizes.first == 62 && sizes.allSatisfy { $0 <= 64 }, "\(sizes)")
    #expect(sizes.suffix(31).allSatisfy { $0 == 1 }, "the last 31 one at a time: \(sizes)")
  }

  @Test("a queue that writers never drain drops what they claimed, and keeps the order")
  func neverDrained() {
    var machine = Machine(maxWriters: 2)
    #expect(machine.enqueue([0]) == 1, "one queued: one writer")
    #expect(machine.enqueue([1, 2]) == 1, "the first claimed nothing since: a second writer")
    #expect(machine.enqueue([3]) == 0, "no third")
    var next = 0
    var claimed: [Int] = []
    for round in 0..<5_000 {
      #expect(machine.enqueue([4 + 2 * round, 5 + 2 * round]) == 0)
      for _ in 0..<2 { claimed += machine.claim() }
      next = 6 + 2 * round
    }
    #expect(claimed == Array(0..<claimed.count), "claimed in the order queued")
    #expect(machine.queued == next - claimed.count)
    #expect(machine.queue.count < 3 * machine.queued + 2_048, "what was claimed is dropped")
    while !machine.claim().isEmpty {}
    #expect(machine.writers == 1 && machine.queued == 0)
  }
}
