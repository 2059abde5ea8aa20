// The membership state machine of a view's broadcast: every sequence of offers, deliveries (some writes
// failing), versions that cancelled out, own batches, leaves and ends, against a model of what each
// session's client holds.

import Testing

@testable import SimpleSourceWire

@Suite("Broadcast members")
struct BroadcastMembersTests {
  /// Three sessions following one source whose newest version is `newest`. Each session's client holds
  /// the versions it was sent; the broadcast writes to members, each session sends its own batches
  /// otherwise. The model checks that every client receives every version once, in order.
  struct World: ExplorableWorld {
    enum Step: CustomStringConvertible {
      /// The source makes a new version.
      case commit
      /// The broadcast delivers its next batch, of one version or composed up to the newest; a write to
      /// `failing` (if any) fails.
      case deliver(failing: Int?, composed: Bool = false)
      /// Session `i`, on its own, sends its next batch.
      case own(Int)
      /// Session `i` offers to join.
      case offer(Int)
      /// Session `i` stops.
      case leave(Int)
      /// The broadcast's subscription ends.
      case end

      var description: String {
        switch self {
        case .commit: "commit"
        case .deliver(let failing, let composed):
          (composed ? "deliver to newest" : "deliver") + (failing.map { " (\($0) full)" } ?? "")
        case .own(let session): "own \(session)"
        case .offer(let session): "offer \(session)"
        case .leave(let session): "leave \(session)"
        case .end: "end"
        }
      }
    }

    /// Where a session is, in the model.
    enum Place: Equatable {
      /// Sending its own batches from its own subscription.
      case own
      case waiting
      case member
      /// Stopped, or ended with the broadcast.
      case done
    }

    var members = BroadcastMembers<Int, Int>(version: 0)
    var newest = 0
    /// The version each session's client holds.
    var held = [0, 0, 0]
    var places: [Place] = [.own, .own, .own]
    /// Whether each session still holds its own subscription (given up on joining).
    var ownSubscription = [true, true, true]

    func steps() -> [Step] {
      var steps: [Step] = newest < 3 ? [.commit] : []
      if !members.isEnded && members.version < newest {
        steps.append(.deliver(failing: nil))
        if newest > members.version + 1 { steps.append(.deliver(failing: nil, composed: true)) }
        steps += members.members.keys.sorted().map { .deliver(failing: $0) }
      }
      for session in 0..<3 {
        switch places[session] {
        case .own:
          if held[session] < newest { steps.append(.own(session)) }
          steps.append(.offer(session))
        case .waiting, .member:
          steps.append(.leave(session))
        case .done:
          break
        }
      }
      if !members.isEnded { steps.append(.end) }
      return steps
    }

    mutating func perform(_ step: Step) throws {
      switch step {
      case .commit:
        newest += 1
      case .deliver(let failing, let composed):
        let from = members.version
        let to = composed ? newest : from + 1
        var written: Set<Int> = []
        let changes = members.deliver(from: from, to: to) { session in
          guard session != failing else { return false }
          written.insert(session)
          return true
        }
        try apply(changes)
        for session in written {
          guard places[session] == .member, held[session] == from else {
            throw ExplorationFailure(
              description: "wrote \(from)→\(to) to \(session) holding \(held[session])")
          }
          held[session] = to
        }
      case .own(let session):
        guard ownSubscription[session] else {
          throw ExplorationFailure(description: "\(session) sent its own batch without its own subscription")
        }
        held[session] += 1
      case .offer(let session):
        let offered = members.offer(session, at: held[session], session)
        switch offered {
        case .joined:
          guard held[session] == members.version else {
            throw ExplorationFailure(
              description: "\(session) joined at \(held[session]), broadcast at \(members.version)")
          }
          places[session] = .member
          ownSubscription[session] = false
        case .waiting:
          guard held[session] > members.version else {
            throw ExplorationFailure(
              description: "\(session) waits at \(held[session]), broadcast at \(members.version)")
          }
          places[session] = .waiting
        case .finished(let outcome):
          guard outcome == .behind, members.isEnded || held[session] < members.version else {
            throw ExplorationFailure(description: "offer of \(session) at \(held[session]): \(outcome)")
          }
        }
      case .leave(let session):
        let changes = members.leave(session)
        guard changes.finished.map(\.member) == [session], changes.finished[0].outcome == .stopped else {
          throw ExplorationFailure(description: "leave \(session): \(changes.finished)")
        }
        try apply(changes)
      case .end:
        try apply(members.end())
      }
      try checkInvariants()
    }

    /// Applies what a step told the sessions, checking each outcome against the model.
    private mutating func apply(_ changes: BroadcastMembers<Int, Int>.Changes) throws {
      for session in changes.joined {
        guard places[session] == .waiting else {
          throw ExplorationFailure(description: "\(session) joined from \(places[session])")
        }
        places[session] = .member
        ownSubscription[session] = false
      }
      for (session, outcome) in changes.finished {
        let was = places[session]
        switch outcome {
        case .behind:
          guard was == .waiting, held[session] < members.version else {
            throw ExplorationFailure(description: "\(session) behind from \(was) at \(held[session])")
          }
          places[session] = .own
        case .left(let version):
          guard was == .member, held[session] == version else {
            throw ExplorationFailure(description: "\(session) left at \(version), holding \(held[session])")
          }
          places[session] = .own
          // It subscribes again from what it holds.
          ownSubscription[session] = true
        case .ended, .stopped:
          places[session] = .done
        }
      }
      if changes.ended != members.isEnded {
        throw ExplorationFailure(description: "ended \(changes.ended), isEnded \(members.isEnded)")
      }
    }

    private func checkInvariants() throws {
      for session in 0..<3 {
        let place = places[session]
        let inMembers = members.members[session] != nil
        let waitingAt = members.waiting[session]?.version
        guard inMembers == (place == .member), (waitingAt != nil) == (place == .waiting) else {
          throw ExplorationFailure(description: "\(session) is \(place) in the model, not in the machine")
        }
        if place == .member && held[session] != members.version {
          throw ExplorationFailure(
            description: "member \(session) holds \(held[session]), broadcast \(members.version)")
        }
        if let waitingAt, waitingAt != held[session] || waitingAt <= members.version {
          throw ExplorationFailure(description: "\(session) waits at \(waitingAt), holding \(held[session])")
        }
        if held[session] > newest {
          throw ExplorationFailure(description: "\(session) holds \(held[session]), newest is \(newest)")
        }
      }
      if members.isEnded && !(members.members.isEmpty && members.waiting.isEmpty) {
        throw ExplorationFailure(description: "an ended broadcast has sessions")
      }
    }

    mutating func checkSettled() throws {
      // Once the broadcast has delivered everything, no session is left waiting.
      guard !members.isEnded else { return }
      while members.version < newest {
        try perform(.deliver(failing: nil))
        if members.isEnded { return }
      }
      if !members.waiting.isEmpty {
        throw ExplorationFailure(
          description: "sessions still wait at the newest version: \(members.waiting.keys)")
      }
      for session in 0..<3 where places[session] == .member && held[session] != newest {
        throw ExplorationFailure(description: "member \(session) holds \(held[session]) of \(newest)")
      }
    }
  }

  @Test("every sequence of offers, deliveries (one version or composed), failed writes, leaves and ends")
  func exhaustive() throws {
    try checkEverySequence(
      "Broadcast members", from: World(), depthVariable: "SIMPLESOURCE_BROADCAST_DEPTH", defaultDepth: 7)
  }

  @Test("a session joins only at the broadcast's version; one ahead waits, one behind goes on alone")
  func offers() {
    var members = BroadcastMembers<Int, String>(version: 5)
    #expect(members.offer(1, at: 5, "a") == .joined)
    #expect(members.offer(2, at: 7, "b") == .waiting)
    #expect(members.offer(3, at: 4, "c") == .finished(.behind))
    var written: [String] = []
    let changes = members.deliver(from: 5, to: 7) {
      written.append($0); return $0 != "a"
    }
    #expect(written == ["a"])
    #expect(changes.joined == ["b"])
    #expect(changes.finished.map(\.outcome) == [.left(at: 5)])
    #expect(members.members.keys.sorted() == [2])
    let left = members.leave(2)
    #expect(left.finished.map(\.outcome) == [.stopped] && left.ended && members.isEnded)
    #expect(members.offer(4, at: 7, "d") == .finished(.behind))
  }
}
