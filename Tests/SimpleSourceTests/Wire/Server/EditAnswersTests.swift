// The answers a service remembers to clients' edits: every sequence of edits, resends, waits and answers
// to a depth, over two edit ids, two kinds of edit and a memory of two, against a plain model.

import Testing

@testable import SimpleSourceWire

@Suite("Edit answers")
struct EditAnswersTests {
  /// Callers of edits (at most four): each starts an edit (a key and its operations), then makes it,
  /// waits for it, or is answered at once. The model remembers the newest two edits made in a plain list.
  struct World: ExplorableWorld {
    enum Step: CustomStringConvertible {
      case call(key: Int, operations: Int)
      case wait(caller: Int)
      case answer(caller: Int, keep: Bool)
      var description: String {
        switch self {
        case .call(let key, let operations): "call \(key)/\(operations)"
        case .wait(let caller): "caller \(caller) waits"
        case .answer(let caller, let keep): keep ? "caller \(caller) answers" : "caller \(caller) drops"
        }
      }
    }

    enum Caller: Equatable {
      case making(key: Int, operations: Int, ticket: EditAnswers<Int, Int>.Ticket)
      case mustWait(key: Int, operations: Int)
      case parked(key: Int)
      case done(Result<Int, WireError>?)
    }

    var book = EditAnswers<Int, Int>(capacity: 2)
    var callers: [Caller] = []
    /// The model: what each remembered key's edit asked for and its answer, and the newest two edits made
    /// (a key dropped and made again appears twice; only its newest counts).
    var remembered: [Int: (operations: Int, answer: Result<Int, WireError>?, made: Int)] = [:]
    var madeOrder: [(key: Int, made: Int)] = []
    var made = 0

    func steps() -> [Step] {
      var steps: [Step] = []
      if callers.count < 4 {
        for key in 0..<2 { for operations in 0..<2 { steps.append(.call(key: key, operations: operations)) } }
      }
      for (index, caller) in callers.enumerated() {
        switch caller {
        case .making: steps += [.answer(caller: index, keep: true), .answer(caller: index, keep: false)]
        case .mustWait: steps.append(.wait(caller: index))
        case .parked, .done: break
        }
      }
      return steps
    }

    /// What the model says a start of `key` asking for `operations` gets, and makes it so.
    mutating func start(_ caller: Int, key: Int, operations: Int) throws {
      let expected: EditAnswers<Int, Int>.Start
      if let entry = remembered[key] {
        if entry.operations != operations {
          expected = .reused
        } else if let answer = entry.answer {
          expected = .answered(answer)
        } else {
          expected = .inFlight
        }
      } else {
        expected = .make(EditAnswers<Int, Int>.Ticket(place: -1, stamp: -1))  // compared by case
      }
      let got = book.start(key, operations) { ($0 as? Int) == operations }
      let same: Bool
      switch (got, expected) {
      case (.make, .make): same = true
      default: same = "\(got)" == "\(expected)"
      }
      guard same else {
        throw ExplorationFailure(description: "caller \(caller) started \(key): \(got), expected \(expected)")
      }
      switch got {
      case .make(let ticket):
        made += 1
        remembered[key] = (operations, nil, made)
        madeOrder.append((key, made))
        if madeOrder.count > 2 {
          let gone = madeOrder.removeFirst()
          if remembered[gone.key]?.made == gone.made { remembered[gone.key] = nil }
        }
        callers[caller] = .making(key: key, operations: operations, ticket: ticket)
      case .answered(let answer): callers[caller] = .done(answer)
      case .reused: callers[caller] = .done(nil)
      case .inFlight: callers[caller] = .mustWait(key: key, operations: operations)
      }
    }

    mutating func perform(_ step: Step) throws {
      switch step {
      case .call(let key, let operations):
        callers.append(.done(nil))
        try start(callers.count - 1, key: key, operations: operations)
      case .wait(let caller):
        guard case .mustWait(let key, let operations) = callers[caller] else { return }
        switch book.wait(key, caller) {
        case .parked:
          guard remembered[key] != nil, remembered[key]?.answer == nil else {
            throw ExplorationFailure(description: "caller \(caller) parked on \(key), which is not in flight")
          }
          callers[caller] = .parked(key: key)
        case .answered(let answer):
          guard remembered[key]?.answer == answer else {
            throw ExplorationFailure(description: "caller \(caller) waited for \(key) and got \(answer)")
          }
          callers[caller] = .done(answer)
        case .startAgain:
          guard remembered[key] == nil else {
            throw ExplorationFailure(description: "caller \(caller) told to start \(key) again, remembered")
          }
          try start(caller, key: key, operations: operations)
        }
      case .answer(let caller, let keep):
        guard case .making(let key, _, let ticket) = callers[caller] else { return }
        let answer: Result<Int, WireError> =
          keep ? .success(caller) : .failure(WireError(.editNotMade, "caller \(caller) went away"))
        let woken = book.answered(key, at: ticket, answer, keep: keep)
        let parked = callers.indices.filter { callers[$0] == .parked(key: key) }
        guard Set(woken) == Set(parked), woken.count == parked.count else {
          throw ExplorationFailure(description: "answering \(key) woke \(woken), parked were \(parked)")
        }
        for waiter in woken { callers[waiter] = .done(answer) }
        callers[caller] = .done(answer)
        // Only the edit this caller made: a key forgotten meanwhile and made again by a resend is that
        // resend's to answer (a caller's stamp counts makes, as the model's `made` does).
        if remembered[key]?.made == ticket.stamp {
          if keep { remembered[key]?.answer = answer } else { remembered[key] = nil }
        }
      }
    }

    mutating func checkSettled() throws {
      // Nobody waits for ever: every parked caller waits for a key someone is making.
      for case .parked(let key) in callers {
        guard callers.contains(where: { if case .making(key, _, _) = $0 { true } else { false } }) else {
          throw ExplorationFailure(description: "a caller waits for \(key), which no one makes")
        }
      }
      let kept = book.ring.compactMap { $0?.key }
      guard book.ring.count <= book.capacity, Set(book.places.keys) == Set(remembered.keys),
        kept.sorted() == remembered.keys.sorted(),
        book.places.allSatisfy({ book.ring[$0.value]?.key == $0.key })
      else {
        throw ExplorationFailure(
          description:
            "remembers \(book.places.keys.sorted()) at \(kept), the model \(remembered.keys.sorted())")
      }
    }
  }

  @Test(
    "every sequence of edits, resends, waits and answers to depth 9 matches the model; no one waits for ever")
  func everySequence() throws {
    let sequences = try exploreEverySequence(from: World(), depth: 9).sequences
    print("Edit answers: \(sequences) sequences checked")
    #expect(sequences > 10_000)
  }

  /// A scope whose every value hashes alike, so that only equality tells two apart.
  struct CollidingScope: Hashable, Sendable {
    let name: String
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
  }

  @Test(
    "an edit's key is its scope and its id: the same id from another scope is another edit, even when they hash alike"
  )
  func keys() {
    let key = EditKey(scope: CollidingScope(name: "alice"), id: "e-1")
    let again = EditKey(scope: CollidingScope(name: "alice"), id: "e-1")
    let otherScope = EditKey(scope: CollidingScope(name: "bob"), id: "e-1")
    #expect(key == again && key.hashValue == again.hashValue)
    #expect(key.hash == otherScope.hash, "the scopes collide, as they may")
    #expect(key != otherScope)
    #expect(key != EditKey(scope: CollidingScope(name: "alice"), id: "e-2"))
    #expect(key != EditKey(scope: "alice", id: "e-1"), "a scope of another type is another scope")
    var book = EditAnswers<EditKey, Int>(capacity: 4)
    guard case .make(let ticket) = book.start(key, 1, same: { ($0 as? Int) == 1 }) else {
      Issue.record("a new key is made")
      return
    }
    _ = book.answered(key, at: ticket, .success(7), keep: true)
    #expect(
      "\(book.start(again, 1) { ($0 as? Int) == 1 })"
        == "answered(Swift.Result<Swift.Int, SimpleSourceWire.WireError>.success(7))")
    guard case .make = book.start(otherScope, 1, same: { ($0 as? Int) == 1 }) else {
      Issue.record("another scope's key is made, never told the first scope's answer")
      return
    }
  }
}
