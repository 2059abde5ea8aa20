// The answers a service remembers to clients' newest edits, and the resends that wait for one being made:
// a synchronous state machine, so that every order of edits, resends and answers can be tested on its own.

/// The answers to the newest edits, by whose edit each is (the scope that made it and its id), with the
/// operations of the edit each answers: a resend is answered only when it asks for the same. Their keys
/// sit in a ring of ``capacity`` places whose oldest gives way to the newest: the newest edits made are
/// remembered, up to ``capacity`` of them. An answer still being made is
/// `nil`; the resends of that edit meanwhile wait in `awaiting`, which forgetting old answers never
/// touches.
///
/// Generic only over its key and its waiters, both concrete types where the service uses it, so that its
/// code is specialized there: an edit's operations are kept as `any Sendable` and compared, on a resend
/// only, by the caller's `same`.
package struct EditAnswers<Key: Hashable, Waiter> {
  /// What a caller of an edit does first.
  package enum Start {
    /// Make the edit, then report its answer with ``answered(_:_:keep:)``.
    case make
    /// The edit was answered already: this is its answer.
    case answered(Result<Int, WireError>)
    /// Another edit was made under this key: refuse it as a reused id.
    case reused
    /// The same edit is being made by another call: wait for its answer with ``wait(_:_:)``.
    case inFlight
  }

  /// What a caller that waits for an edit being made gets.
  package enum Wait {
    /// Parked: resumed with the answer once it is made.
    case parked
    /// Answered meanwhile: this is its answer.
    case answered(Result<Int, WireError>)
    /// The edit was not made after all (its caller went away), nor is it remembered: start again.
    case startAgain
  }

  /// An edit's operations, its answer once made, and the stamp of its place in the ring.
  package struct Entry {
    package var operations: any Sendable
    package var answer: Result<Int, WireError>?
    package var stamp: Int
  }

  package private(set) var entries: [Key: Entry] = [:]
  /// The remembered keys with their stamps, in a ring whose oldest is at `oldest`. A key forgotten early
  /// (not made) and made again has a place of its old stamp too, which frees nothing when it goes.
  package private(set) var order: [(key: Key, stamp: Int)] = []
  package private(set) var oldest = 0
  /// The newest stamp given.
  package private(set) var stamps = 0
  /// The callers waiting for the answer of an edit being made.
  package private(set) var awaiting: [Key: [Waiter]] = [:]
  /// How many answers are remembered.
  package let capacity: Int

  /// Remembers up to `capacity` answers.
  package init(capacity: Int) {
    precondition(capacity > 0, "SimpleSource: remember one answer or more")
    self.capacity = capacity
  }

  /// A caller starts the edit `key` asking for `operations`; `same` tells whether the operations of an
  /// edit remembered under `key` are these.
  /// - Complexity: O(1), besides `same`.
  package mutating func start(_ key: Key, _ operations: any Sendable, same: (any Sendable) -> Bool) -> Start {
    // One lookup per key: by index, so that no entry is copied out to be read.
    if let index = entries.index(forKey: key) {
      guard same(entries.values[index].operations) else { return .reused }
      return entries.values[index].answer.map { .answered($0) } ?? .inFlight
    }
    if stamps == 0 {
      // Sized once, at the first edit, for every answer it keeps: it never grows (and rehashes) under load.
      entries.reserveCapacity(capacity)
      order.reserveCapacity(capacity)
    }
    stamps += 1
    entries[key] = Entry(operations: operations, answer: nil, stamp: stamps)
    if order.count < capacity {
      order.append((key, stamps))
    } else {
      // A ring: the oldest place gives way to the newest; its key is forgotten unless it holds a newer one.
      let (gone, stamp) = order[oldest]
      if let index = entries.index(forKey: gone), entries.values[index].stamp == stamp {
        entries.remove(at: index)
      }
      order[oldest] = (key, stamps)
      oldest = (oldest + 1) % capacity
    }
    return .make
  }

  /// A caller told ``Start/inFlight`` waits for the answer of `key`.
  /// - Complexity: O(1).
  package mutating func wait(_ key: Key, _ waiter: Waiter) -> Wait {
    guard let entry = entries[key] else { return .startAgain }
    if let answer = entry.answer { return .answered(answer) }
    awaiting[key, default: []].append(waiter)
    return .parked
  }

  /// The edit `key` was answered `answer`; `keep` is `false` when it was not made and a resend must make
  /// it (its caller went away), or when the writer's storage holds another edit under its id (whose resend
  /// must still get its own answer).
  /// - Returns: The callers that waited for it, to resume with `answer`.
  /// - Complexity: O(*w*) for *w* waiting callers.
  package mutating func answered(_ key: Key, _ answer: Result<Int, WireError>, keep: Bool) -> [Waiter] {
    if !keep {
      entries[key] = nil
    } else if let index = entries.index(forKey: key) {
      // Forgotten meanwhile (newer edits took its place), the answer is not kept; its waiters still get it.
      entries.values[index].answer = answer
    }
    // Resends that race their first delivery are rare: most answers have nobody waiting.
    return awaiting.isEmpty ? [] : awaiting.removeValue(forKey: key) ?? []
  }
}

extension EditAnswers: Sendable where Key: Sendable, Waiter: Sendable {}
extension EditAnswers.Entry: Sendable {}

/// Whose edit an answer is: the scope that made it, and the id its client gave it. A concrete type, so
/// that the answers' tables are specialized, and hashed once, when made: they look a key up several
/// times per edit.
package struct EditKey: Hashable, Sendable {
  package let scope: any Hashable & Sendable
  package let id: String
  package let hash: Int

  package init(scope: some Hashable & Sendable, id: String) {
    self.scope = scope
    self.id = id
    var hasher = Hasher()
    hasher.combine(id)
    hasher.combine(scope)
    hash = hasher.finalize()
  }

  package static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.hash == rhs.hash && lhs.id == rhs.id && same(lhs.scope, rhs.scope)
  }

  package func hash(into hasher: inout Hasher) { hasher.combine(hash) }

  /// Whether `other` is a scope of `scope`'s type, equal to it.
  private static func same<Scope: Hashable>(_ scope: Scope, _ other: any Hashable & Sendable) -> Bool {
    (other as? Scope) == scope
  }
}
