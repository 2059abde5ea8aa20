// The unit a subscriber receives: the changes from one version of a data source to a later one.

/// The changes from one version of a data source to a later one, as a subscriber receives them.
///
/// `from` is the version the subscriber held before this batch: the previous batch's `to`, or the
/// version of the subscription's initial snapshot for the first batch (G1). Applying ``changeset`` to
/// the subscriber's snapshot at `from` gives ``snapshot`` exactly (G2). A batch is never empty (G4).
///
/// A batch is shared by every subscriber that receives it, never copied per subscriber.
public struct UpdateBatch<Section: SectionType>: Sendable {
  /// The version before the batch.
  public let from: Int
  /// The version after the batch.
  public let to: Int
  /// The changes from the snapshot at ``from`` to ``snapshot``.
  public let changeset: Changeset<Section>

  /// Creates a batch.
  public init(from: Int, to: Int, changeset: Changeset<Section>) {
    self.from = from
    self.to = to
    self.changeset = changeset
  }

  /// The snapshot at version ``to``.
  public var snapshot: Snapshot<Section> { changeset.target }

  /// Whether the batch spans several versions: mutations coalesced while a batch was prepared, or batches
  /// a slow subscriber missed, composed into one.
  public var isComposed: Bool { to - from > 1 }
}
