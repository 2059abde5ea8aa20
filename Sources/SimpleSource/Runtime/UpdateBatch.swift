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
    @usableFromInline let changeset: Changeset<Section>

    @inlinable
    init(from: Int, to: Int, changeset: Changeset<Section>) {
      self.from = from
      self.to = to
      self.changeset = changeset
    }
  }

  @usableFromInline let storage: Storage

  /// Creates a batch.
  @inlinable
  public init(from: Int, to: Int, changeset: Changeset<Section>) {
    storage = Storage(from: from, to: to, changeset: changeset)
  }

  /// The version before the batch.
  @inlinable public var from: Int { storage.from }
  /// The version after the batch.
  @inlinable public var to: Int { storage.to }
  /// The changes from the snapshot at ``from`` to ``snapshot``.
  @inlinable public var changeset: Changeset<Section> { storage.changeset }

  /// The snapshot at version ``to``.
  @inlinable public var snapshot: Snapshot<Section> { storage.changeset.target }

  /// Whether the batch spans several versions: mutations coalesced while a batch was prepared, or batches
  /// a slow subscriber missed, composed into one.
  @inlinable public var isComposed: Bool { to - from > 1 }
}
