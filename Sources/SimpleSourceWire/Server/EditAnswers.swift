// The answers a service remembers to clients' newest edits, and the resends that wait for one being made:
// a synchronous state machine, so that every order of edits, resends and answers can be tested on its own.

/// The answers to the newest edits, by whose edit each is (the scope that made it and its id), with the
/// operations of the edit each answers: a resend is answered only when it asks for the same. The edits sit
/// in a ring of ``capacity`` places whose oldest gives way to the newest: the newest edits made are
/// remembered, up to ``capacity`` of them, and a table finds a key's place. An answer still being made is
/// `nil`; the resends of that edit meanwhile wait in `awaiting`, which forgetting old answers never
/// touches. The caller that makes an edit answers it at its place (``Ticket``), without a lookup.
///
/// Generic only over its key and its waiters, both concrete types where the service uses it, so that its
/// code is specialized there: an edit's operations are kept as `any Sendable` and compared, on a resend
/// only, by the caller's `same`.
package struct EditAnswers<Key: Hashable, Waiter> {
  /// Where the edit a caller makes is remembered: its place in the ring, and the stamp that tells whether
  /// the place still holds it when the answer comes (newer edits may have taken it meanwhile).
  package struct Ticket: Equatable, Sendable {
    package let place: Int
    package let stamp: Int
  }

  /// What a caller of an edit does first.
  package enum Start {
    /// Make the edit, then report its answer with ``answered(_:at:_:keep:)``.
    case make(Ticket)
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

  /// A remembered edit: its key, operations, answer once made, and the stamp it was made with.
  package struct Entry {
    package var key: Key
    package var operations: any Sendable
    package var answer: Result<Int, WireError>?
    package var stamp: Int
  }

  /// The place of each remembered edit in `ring`.
  package private(set) var places: [Key: Int] = [:]
  /// The remembered edits, oldest at `oldest` once full; a place whose edit was forgotten early (not
  /// made: its caller went away) is empty, and frees nothing when its turn to give way comes.
  package private(set) var ring: [Entry?] = []
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
    if let place = places[key], let entry = ring[place] {
      guard same(entry.operations) else { return .reused }
      return entry.answer.map { .answered($0) } ?? .inFlight
    }
    if stamps == 0 {
      // Sized once, at the first edit, for every answer it keeps: it never grows (and rehashes) under load.
      places.reserveCapacity(capacity)
      ring.reserveCapacity(capacity)
    }
    stamps += 1
    let entry = Entry(key: key, operations: operations, answer: nil, stamp: stamps)
    let place: Int
    if ring.count < capacity {
      place = ring.count
      ring.append(entry)
    } else {
      // A ring: the oldest place gives way to the newest, and its edit is forgotten.
      place = oldest
      if let gone = ring[place] { places[gone.key] = nil }
      ring[place] = entry
      oldest = (oldest + 1) % capacity
    }
    places[key] = place
    return .make(Ticket(place: place, stamp: stamps))
  }

  /// A caller told ``Start/inFlight`` waits for the answer of `key`.
  /// - Complexity: O(1).
  package mutating func wait(_ key: Key, _ waiter: Waiter) -> Wait {
    guard let place = places[key], let entry = ring[place] else { return .startAgain }
    if let answer = entry.answer { return .answered(answer) }
    awaiting[key, default: []].append(waiter)
    return .parked
  }

  /// The edit `key`, remembered at `ticket`, was answered `answer`; `keep` is `false` when it was not
  /// made and a resend must make it (its caller went away), or when the writer's storage holds another
  /// edit under its id (whose resend must still get its own answer).
  /// - Returns: The callers that waited for it, to resume with `answer`.
  /// - Complexity: O(*w*) for *w* waiting callers; no lookup when none waits.
  package mutating func answered(_ key: Key, at ticket: Ticket, _ answer: Result<Int, WireError>, keep: Bool)
    -> [Waiter]
  {
    // Forgotten meanwhile (newer edits took its place): the answer is not kept; its waiters still get it.
    if ring[ticket.place]?.stamp == ticket.stamp {
      if keep {
        ring[ticket.place]?.answer = answer
      } else {
        ring[ticket.place] = nil
        places[key] = nil
      }
    }
    // Resends that race their first delivery are rare: most answers have nobody waiting.
    return awaiting.isEmpty ? [] : awaiting.removeValue(forKey: key) ?? []
  }
}

extension EditAnswers: Sendable where Key: Sendable, Waiter: Sendable {}
extension EditAnswers.Entry: Sendable where Key: Sendable {}

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
