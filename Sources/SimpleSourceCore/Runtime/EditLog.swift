// What a run of edits touched: the log a batch is derived from, one type from the edit to the cut.

/// What a run of edits touched: nothing, these item ids, or the sections' shape.
///
/// A ``SectionStore`` writes it as it edits; the publish loop takes it from the store at each cut and
/// hands it to ``PublishStateMachine``, which keeps what the cuts since the last published batch touched.
/// It moves one way only, from the store to the machine: a prepared write's store carries its own log and
/// the source's store merges it when the write is applied.
@usableFromInline
enum EditLog<ID: Hashable>: Hashable {
  /// No edit.
  case nothing
  /// Item edits that touched only these ids (never empty).
  case touched(Set<ID>)
  /// Sections were inserted, deleted, moved or replaced: a batch needs a full diff.
  case reshaped

  /// The log of edits that touched the ids of `touching`, or reshaped the sections when it is `nil`.
  @inlinable
  init(touching: Set<ID>?) {
    switch touching {
    case .none: self = .reshaped
    case .some(let ids): self = ids.isEmpty ? .nothing : .touched(ids)
    }
  }

  /// The ids a batch may be derived from; `nil` when it needs a full diff.
  /// - Complexity: O(1).
  @inlinable var touching: Set<ID>? {
    switch self {
    case .nothing: []
    case .touched(let ids): ids
    case .reshaped: nil
    }
  }

  /// Records an edit of the item `id`.
  /// - Complexity: O(1), in place.
  @inlinable
  mutating func insert(_ id: ID) {
    switch self {
    case .nothing: self = .touched([id])
    case .touched(var ids):
      self = .nothing  // the payload's only reference is `ids` now: the insert is made in place
      ids.insert(id)
      self = .touched(ids)
    case .reshaped: break
    }
  }

  /// Records edits of the items `ids`.
  /// - Complexity: O(*k*) for *k* ids, in place.
  @inlinable
  mutating func formUnion(_ ids: some Sequence<ID>) {
    switch self {
    case .nothing:
      let set = Set(ids)
      if !set.isEmpty { self = .touched(set) }
    case .touched(var touched):
      self = .nothing
      touched.formUnion(ids)
      self = .touched(touched)
    case .reshaped: break
    }
  }

  /// Records an edit that reshaped the sections.
  /// - Complexity: O(1).
  @inlinable
  mutating func markReshaped() { self = .reshaped }

  /// Adds what `other` touched.
  /// - Complexity: O(1) when either is empty or reshaped; otherwise O(*k*) for the *k* ids of `other`, in
  ///   place.
  @inlinable
  mutating func merge(_ other: Self) {
    switch other {
    case .nothing: return
    case .reshaped: self = .reshaped
    case .touched(let more):
      if case .nothing = self { self = other } else { formUnion(more) }
    }
  }

  /// Takes the log, leaving it empty.
  /// - Complexity: O(1).
  @inlinable
  mutating func take() -> Self {
    defer { self = .nothing }
    return self
  }
}

extension EditLog: Sendable where ID: Sendable {}
