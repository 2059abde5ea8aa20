// The unit a subscriber receives: the changes from one version of a data source to a later one.

/// The changes from one version of a data source to a later one, as a subscriber receives them.
///
/// `from` is the version the subscriber held before this batch: the previous batch's `to`, or the
/// version of the subscription's initial snapshot for the first batch (G1). Applying ``changeset`` to
/// the subscriber's snapshot at `from` gives ``snapshot`` exactly (G2). A batch is never empty (G4).
///
/// A batch is shared by every subscriber that receives it, never copied per subscriber.
public struct UpdateBatch<Section: SectionType>: Sendable {
  /// One reference for the whole batch, so that handing it to many subscribers costs one retain each.
  @usableFromInline
  final class Storage: Sendable {
    @usableFromInline let from: Int
    @usableFromInline let to: Int
    @usableFromInline let counter: VersionCounter
    @usableFromInline let changeset: Changeset<Section>
    /// See ``UpdateBatch/touchedIDs``: computed once here, not by each subscriber that needs it.
    @usableFromInline let touchedIDs: Set<Section.Item.ID>?
    /// What is made once per batch and shared by every subscriber, under one lock.
    @usableFromInline let shared = Locked<Shared>(Shared())

    @inlinable
    init(from: Int, to: Int, counter: VersionCounter, changeset: Changeset<Section>) {
      self.from = from
      self.to = to
      self.counter = counter
      self.changeset = changeset
      self.touchedIDs = UpdateBatch.touchedIDs(of: changeset)
    }
  }

  /// What a batch's subscribers share once one of them, or the source, made it.
  @usableFromInline
  struct Shared: Sendable {
    /// Forms of the batch that a layer above makes once and shares among every subscriber (the wire's
    /// encoded message), keyed by the layer's own type; see ``UpdateBatch/shared(_:_:)``.
    @usableFromInline var forms: [ObjectIdentifier: any Sendable] = [:]
    /// See ``UpdateBatch/edits``: made once, by the history that keeps them or by the first subscriber
    /// that reads them.
    @usableFromInline var edits: [BatchEdit<Section>]?

    @inlinable init() {}
  }

  @usableFromInline let storage: Storage

  /// Creates a batch from `from` to `to`, two versions of one counter.
  /// - Precondition: `from` and `to` have one counter, and `from` is before `to`.
  @inlinable
  public init(from: Version, to: Version, changeset: Changeset<Section>) {
    precondition(
      from.counter == to.counter && from.number < to.number,
      "SimpleSource: a batch goes from a version to a later one of the same counter")
    self.init(from: from.number, to: to.number, of: from.counter, changeset: changeset)
  }

  /// Creates a batch from version `from` to version `to` of `counter`.
  @inlinable
  package init(from: Int, to: Int, of counter: VersionCounter, changeset: Changeset<Section>) {
    storage = Storage(from: from, to: to, counter: counter, changeset: changeset)
  }

  /// The version before the batch.
  @inlinable public var from: Version { Version(storage.from, of: storage.counter) }
  /// The version after the batch.
  @inlinable public var to: Version { Version(storage.to, of: storage.counter) }
  /// The counter that numbers ``from`` and ``to``: the source's that offers the batch, or the one it
  /// shares with its parent.
  @inlinable public var counter: VersionCounter { storage.counter }
  /// The number of ``from``.
  @inlinable package var fromNumber: Int { storage.from }
  /// The number of ``to``.
  @inlinable package var toNumber: Int { storage.to }
  /// The changes from the snapshot at ``from`` to ``snapshot``.
  @inlinable public var changeset: Changeset<Section> { storage.changeset }

  /// The snapshot at version ``to``.
  @inlinable public var snapshot: Snapshot<Section> { storage.changeset.target }

  /// The value `make` returns, made once per batch and `key`, then shared by every caller: a form of the
  /// batch that each of its many subscribers would otherwise make again (the wire encodes a batch once for
  /// every client it is sent to). Two callers racing may both call `make`; the first value stored wins.
  /// - Complexity: O(1) besides `make`, which runs once per batch and key in the usual case.
  package func shared<Value: Sendable>(_ key: ObjectIdentifier, _ make: () -> Value) -> Value {
    if let value = storage.shared.withLock({ $0.forms[key] }) as? Value { return value }
    let made = make()
    return storage.shared.withLock { shared in
      if let value = shared.forms[key] as? Value { return value }
      shared.forms[key] = made
      return made
    }
  }

  /// Whether the batch spans several versions: mutations coalesced while a batch was prepared, or batches
  /// a slow subscriber missed, composed into one.
  @inlinable public var isComposed: Bool { storage.to - storage.from > 1 }

  /// Every item id this batch changed (deleted, inserted, moved, refreshed), when its sections kept their
  /// ids and order and it changed few enough items that deriving a catch-up batch from the ids beats a
  /// full diff; `nil` otherwise. Items not listed kept their section, content and relative order, which
  /// is what ``Changeset/init(from:to:logged:refreshing:)`` needs.
  /// Computed once per batch, when it is made: O(*k*) for *k* changes.
  @inlinable var touchedIDs: Set<Section.Item.ID>? { storage.touchedIDs }

  /// Whether `count` touched ids are few enough, in a list of `itemCount` items, that a batch derived
  /// from them beats a full diff: at most a sixteenth of the list (or 16 ids). The one rule for a batch's
  /// ids, a lagging subscriber's and a resume's; past it the ids are dropped, which also bounds memory (G6).
  @inlinable
  static func isWorthLogging(_ count: Int, of itemCount: Int) -> Bool { count * 16 <= max(itemCount, 256) }

  @inlinable
  static func touchedIDs(of changeset: Changeset<Section>) -> Set<Section.Item.ID>? {
    let sections = changeset.sectionChanges
    guard sections.deletes.isEmpty, sections.inserts.isEmpty, sections.moves.isEmpty else { return nil }
    let items = changeset.itemChanges
    let count = items.deletes.count + items.inserts.count + items.moves.count + items.updates.count
    guard isWorthLogging(count, of: changeset.target.itemCount) else { return nil }
    var ids = changeset.forcedRefreshes
    ids.formUnion(items.ids)
    return ids
  }
}

extension UpdateBatch: CustomStringConvertible {
  /// The versions and the changes by id: `3 → 5: items: insert bob at [1, 2]`.
  /// - Complexity: O(*k*) in the number of changes.
  public var description: String { "\(from) → \(to): \(changeset)" }
}
